"""The implementation's threads as the driver sees them: which are new since
the driver started, and which of them is blocked in a call into Ray.

A thread is recorded whatever module runs it (an implementation's
``ThreadPoolExecutor`` worker or event-loop thread, RLlib's threads: all
count), under a key that is never reused within the process (CPython reuses
a finished thread's ``ident``, the OS its ``native_id``). Two kinds are left
out, each by what it is rather than by its name or module:

- the harness's own threads, registered when the harness starts them
  (``fixtures.harness_threads``);
- the threads Ray itself runs in every driver (``ray_driver_thread``).
"""
from __future__ import annotations

import itertools
import threading
import weakref

from fixtures.harness_threads import is_harness_thread

_SERIAL = itertools.count(1)
#: Thread object -> its key, given the first time the thread is seen
_KEYS: "weakref.WeakKeyDictionary[threading.Thread, str]" = weakref.WeakKeyDictionary()
#: Thread object -> whether it is one of Ray's driver threads, decided when first
#: seen (threading deletes a thread's target when its run() returns)
_RAY_OWN: "weakref.WeakKeyDictionary[threading.Thread, bool]" = weakref.WeakKeyDictionary()


def thread_key(thread: threading.Thread) -> str:
    """The thread's identity for the history: a serial number given to its
    ``Thread`` object when first seen, never given to another thread of
    this process."""
    key = _KEYS.get(thread)
    if key is None:
        key = _KEYS[thread] = f"T{next(_SERIAL)}"
    return key


def ray_driver_thread(thread) -> bool:
    """One of the threads Ray itself runs in a driver, told by the code it
    runs (the objects, not their names). Measured on Ray 2.60.0 and 2.55.1
    (a local ``ray.init`` and a connected one, actors created, ``ray.get``,
    ``ray.kill``, GCS queries): ``ray.init`` starts exactly three, and
    ``ray.shutdown()`` ends all three: ``PythonGCThread``
    (``ray._private.gc_collect_manager.PythonGCThread``), ``ray_print_logs``
    (``Worker.print_logs``) and ``ray_listen_error_messages``
    (``ray._private.worker.listen_error_messages``). Self-contained:
    standalone scripts embed its source."""
    import sys

    worker = sys.modules.get("ray._private.worker")
    collector = sys.modules.get("ray._private.gc_collect_manager")
    # private: threading keeps a thread's target only as Thread._target (no
    # public accessor); Ray's own threads are told apart by it
    target = getattr(thread, "_target", None)
    code = getattr(target, "__func__", target)
    if worker is not None and code is not None and code in (
            getattr(worker, "listen_error_messages", None),
            getattr(getattr(worker, "Worker", None), "print_logs", None)):
        return True
    gc_thread = getattr(collector, "PythonGCThread", None)
    return isinstance(gc_thread, type) and isinstance(thread, gc_thread)


def _ray_own(thread: threading.Thread) -> bool:
    own = _RAY_OWN.get(thread)
    if own is None:
        own = _RAY_OWN[thread] = ray_driver_thread(thread)
    return own


def _module(thread: threading.Thread) -> str:
    target = getattr(thread, "_target", None)
    return getattr(target, "__module__", None) or type(thread).__module__


def threads_now() -> list[dict]:
    """Every live thread of this process but the harness's and Ray's own:
    key, name, the module of the code it runs, daemon."""
    out = []
    for t in threading.enumerate():
        if is_harness_thread(t) or _ray_own(t):
            continue
        out.append({"key": thread_key(t), "name": t.name, "module": _module(t),
                    "daemon": t.daemon})
    return out


def new_threads(baseline: list[dict]) -> list[dict]:
    """The threads alive now that were not in ``baseline`` (``threads_now()``
    taken before the scenario): started since, by the implementation or
    whatever it called (the harness's and Ray's own are never listed)."""
    base = {t["key"] for t in baseline}
    return [t for t in threads_now() if t["key"] not in base]


def blocked_in_ray(frame, ray_dir: str):
    """Where ``frame`` (a thread's innermost Python frame) waits inside a
    blocking call into Ray, as "file:line function"; None when it is
    elsewhere, e.g. submitting a task (``.remote()``) or deserializing a
    result: code of the ray package that does not wait. ``ray.get`` and
    ``ray.wait`` block in ``get_objects`` and ``wait`` of
    ``ray/_private/worker.py``, inside the core worker's C++ call (Ray 2.50
    to 2.60). Self-contained: standalone scripts embed its source."""
    blocking = (("_private/worker.py", "get_objects"), ("_private/worker.py", "wait"))
    if frame is None or not frame.f_code.co_filename.startswith(ray_dir):
        return None
    where = (frame.f_code.co_filename[len(ray_dir):], frame.f_code.co_name)
    if where not in blocking:
        return None
    return f"{where[0]}:{frame.f_lineno} {where[1]}"


def inside_ray(skip=None) -> list[dict]:
    """The threads, other than the caller, Ray's own (``ray_driver_thread``)
    and those ``skip(thread)`` names, that are blocked in a call into Ray
    (``blocked_in_ray``), each with where. Self-contained: standalone
    scripts embed its source."""
    import os
    import sys
    import threading

    import ray

    ray_dir = os.path.dirname(ray.__file__) + os.sep
    # sys._current_frames is CPython's documented way to read another
    # thread's stack (what faulthandler-style dumps use)
    frames = sys._current_frames()
    out = []
    for t in threading.enumerate():
        if t is threading.current_thread() or ray_driver_thread(t) or (skip and skip(t)):
            continue
        where = blocked_in_ray(frames.get(t.ident), ray_dir)
        if where is not None:
            out.append({"name": t.name, "in": where})
    return out


def not_the_implementations(exclude=()):
    """``inside_ray``'s ``skip`` in the driver: the harness's threads and
    those whose keys are in ``exclude`` (the threads before the scenario)."""
    return lambda t: is_harness_thread(t) or thread_key(t) in exclude
