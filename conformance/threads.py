"""The implementation's threads as the driver sees them: which are new since
the driver started, and which of them is inside a call into Ray."""
from __future__ import annotations

import threading

from conformance.history import RAY_THREAD_MODULES  # inside_ray spells it out: scripts embed it


def threads_now() -> list[dict]:
    out = []
    for t in threading.enumerate():
        target = getattr(t, "_target", None)
        module = getattr(target, "__module__", None) or type(t).__module__
        out.append({"name": t.name, "module": module, "daemon": t.daemon, "ident": t.ident})
    return out


def new_threads(baseline: list[dict]) -> list[dict]:
    """Threads started since ``baseline`` that may be the implementation's:
    not Ray's own (by module) and not the harness's (named ``rlc-``)."""
    base = {t["ident"] for t in baseline}
    return [t for t in threads_now() if t["ident"] not in base
            and not str(t["module"]).startswith(RAY_THREAD_MODULES)
            and not t["name"].startswith("rlc-")]


def inside_ray(exclude=()) -> list[dict]:
    """The threads, other than the caller, those in ``exclude`` (idents),
    Ray's own and the harness's (as in :func:`new_threads`), whose innermost
    Python frame is in the ``ray`` package, i.e. blocked in (or running) a
    call into Ray, each with where. Self-contained: standalone scripts embed
    its source."""
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
        module = getattr(getattr(t, "_target", None), "__module__", None) or type(t).__module__
        if (t is threading.current_thread() or t.ident in exclude or t.name.startswith("rlc-")
                or str(module).startswith(("ray", "grpc", "concurrent.futures", "asyncio"))):
            continue
        frame = frames.get(t.ident)
        if frame is not None and frame.f_code.co_filename.startswith(ray_dir):
            where = f"{frame.f_code.co_filename[len(ray_dir):]}:{frame.f_lineno} {frame.f_code.co_name}"
            out.append({"name": t.name, "in": where})
    return out
