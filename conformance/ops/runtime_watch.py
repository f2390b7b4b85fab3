"""Every start and end of a Ray runtime in the driver process, as it happens.

The probe after an op reads the runtime's identity once the op returned: a
teardown that auto-starts Ray (a stale handle's ``ray.kill``) and shuts it
down again within the same op leaves no trace there. The watch records, as
``runtime`` side records of the history (flushed at once, with the op that
was running, the last op begun and the calling thread):

- every call of the public ``ray.init`` and ``ray.shutdown`` in the driver,
  with the runtime identity before and after it: the driver wraps the two
  names in the ``ray`` module. Ray's own auto-init goes through the same
  name: ``ray._private.auto_init_hook.auto_init_ray`` calls ``ray.init()``
  looked up on the module at call time (Ray 2.60, read in its source;
  ``tests/conformance/test_runtime_watch.py`` measures it with a stale
  handle's ``ray.kill``), and the reference's ``ray.shutdown`` wrapper
  (``impl.component``), installed after this one, calls this one;
- the GCS and raylet processes the driver starts (a local runtime's own
  processes are the driver's children: ``/proc/self/task/*/children``) as
  they appear and go, every ``PROCESS_INTERVAL`` seconds: a runtime started
  by a path that bypasses ``ray.init`` is seen there. Measured on this
  machine with a local runtime up (27 threads in the driver): 0.6 ms of CPU
  per poll (psutil's ``children()``, which scans every process of the
  machine: 5.6 ms), i.e. 0.24 % of a core at 0.25 s.

A name captured before the driver started (``from ray import init`` in a
module the fork server preloads) bypasses the call watch; the process watch
still sees a local runtime start. A call still running when the watch
stops (the ops ended, or the harness failed under it) is recorded then,
``unfinished``. A GCS or raylet that goes is recorded with whether the
driver was still connected (``ray.is_initialized()``, a flag of the driver's
own). The watch never judges (``oracles.no_ray_restart``,
``ray_not_shut_down_by_non_owner`` and ``owned_runtime_not_lost`` do) and
never starts Ray.
"""
from __future__ import annotations

import contextlib
import functools
import os
import threading
import time

from conformance.ops.threads import thread_key
from fixtures.harness_threads import start_harness_thread

#: seconds between two reads of the driver's child processes; a local
#: runtime lives at least its ray.init (2-4 s here) and shutdown (about 1 s)
PROCESS_INTERVAL = 0.25
#: the processes of a Ray runtime the watch reports (their ``comm``)
RUNTIME_PROCESSES = ("gcs_server", "raylet")
WATCHED_CALLS = ("init", "shutdown")


def ray_identity(strict: bool = True) -> str | None:
    """The connected Ray runtime as "gcs/session/job", without ever starting
    one (``fixtures.identity``: the harness's reading, not the reference's).
    ``strict``: an error reading it is raised (the probes: what they cannot
    read is unknown); else it reads "unreadable: <error>"."""
    from fixtures.identity import runtime_identity  # imports ray: the driver's, at its first read

    try:
        identity = runtime_identity(strict=True)
    except Exception as exc:  # noqa: BLE001 - Ray shutting down under us
        if strict:
            raise
        return f"unreadable: {type(exc).__name__}"
    return None if identity is None else "/".join(str(x) for x in identity)


def session_of(identity: str | None) -> str | None:
    """The session of an identity "gcs/session/job" (None: none): what a
    runtime's GCS process names on its command line (``--session-name=``; its
    ``--gcs_server_port`` is 0, Ray picks the port: measured, Ray 2.60)."""
    parts = (identity or "").split("/")
    return parts[1] if len(parts) == 3 and not identity.startswith("unreadable") else None


def _children() -> set[int]:
    """The driver's child processes (every thread's: Popen from any thread)."""
    out: set[int] = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                out.update(int(pid) for pid in f.read().split())
        except OSError:  # the thread ended meanwhile
            continue
    return out


def _runtime_process(pid: int) -> dict | None:
    """``{"process": name, "pid", "session"}`` of a live GCS or raylet child."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        name, state = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2]
        if name not in RUNTIME_PROCESSES or state == "Z":
            return None
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().decode(errors="replace").split("\0")
    except (OSError, ValueError, IndexError):
        return None
    session = next((a.split("=", 1)[1] for a in argv if a.startswith("--session-name=")), None)
    return {"process": name, "pid": pid, "session": session}


class RuntimeWatch:
    """See the module docstring. ``write(record)`` appends to the history,
    ``clock()`` gives its time; ``where()`` (set once the ops' context
    exists) gives ``(running op index or None, last op begun or None)``."""

    def __init__(self, write, clock):
        self.write, self.clock = write, clock
        self.where = lambda: (None, None)
        self.active = False
        self._local = threading.local()
        self._stop = threading.Event()
        self._known: dict[int, dict] = {}
        self._thread: threading.Thread | None = None
        self._running: dict[object, dict] = {}  # calls begun and not returned, by a token
        #: name -> ``ray.<name>`` as this watch installed it, before the adapter
        #: loads: what a module imported before the implementation holds after
        #: ``from ray import shutdown`` (a library's own wrapper of the name, set
        #: later on the ``ray`` module, is not in it; ``verbs.ray_shutdown``)
        self.installed: dict = {}
        # one lock over a call's end (its entry dropped, its record written) and stop()'s
        # (the entries left recorded, the watch off): each call gets exactly one record
        self._calls_lock = threading.Lock()

    def install(self) -> dict:
        """Wrap the calls, start the process poller; the setup record's
        ``runtime_watch`` (``{"error": ...}`` if the watch could not start)."""
        import ray

        try:
            for name in WATCHED_CALLS:
                self.installed[name] = self._wrap(name, getattr(ray, name))
                setattr(ray, name, self.installed[name])
            status = {"calls": [f"ray.{n}" for n in WATCHED_CALLS]}
            try:
                self._known = {p["pid"]: p for p in map(_runtime_process, _children()) if p}
            except OSError as exc:
                status["processes"] = f"not watched: {exc}"
            else:
                status.update(processes=f"children of the driver every {PROCESS_INTERVAL}s",
                              present=sorted(self._known.values(), key=lambda p: p["pid"]))
                self._thread = start_harness_thread(self._poll, "rlc-runtime-watch")
        except Exception as exc:  # noqa: BLE001 - the oracles answer unknown
            return {"error": f"{type(exc).__name__}: {exc}"}
        self.active = True
        return status

    def stop(self) -> None:
        """No record from here on (the interpreter exit is not watched); a
        call still running is recorded now, ``unfinished``."""
        with self._calls_lock:
            for begun in list(self._running.values()):
                self._record({**begun, "after": None, "error": None, "unfinished": True})
            self.active = False
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2 * PROCESS_INTERVAL + 1.0)

    @contextlib.contextmanager
    def as_user(self):
        """Calls made meanwhile on this thread are the user's own (the
        harness's ray.init and ray.shutdown as the user)."""
        before = getattr(self._local, "user", False)
        self._local.user = True
        try:
            yield
        finally:
            self._local.user = before

    # -- records ----------------------------------------------------------------------
    def _where_now(self) -> dict:
        """Where a record is made: the op running, the last begun, the thread."""
        running, last = self.where()
        t = threading.current_thread()
        return {"i": running, "last": last, "thread": t.name,
                "thread_key": thread_key(t),  # the key the probes' thread lists use
                "main_thread": t is threading.main_thread()}

    def _record(self, record: dict) -> None:
        if not self.active:
            return
        try:
            self.write({"phase": "runtime", **self._where_now(), **record})
        except Exception:  # noqa: BLE001 - never the implementation's problem
            pass

    def _wrap(self, name: str, real):
        if getattr(real, "_rlc_runtime_watch", False):
            return real
        watch = self

        @functools.wraps(real)
        def watched(*args, **kwargs):
            if not watch.active:
                return real(*args, **kwargs)
            before, t0, error = ray_identity(strict=False), watch.clock(), None
            begun = {**watch._where_now(), "call": f"ray.{name}", "by": "user" if getattr(
                watch._local, "user", False) else None, "before": before, "t0": t0}
            token = object()
            watch._running[token] = begun
            try:
                return real(*args, **kwargs)
            except BaseException as exc:
                error = f"{type(exc).__module__}.{type(exc).__qualname__}"
                raise
            finally:
                # where it returned (the op then: as ever), the thread and t0 of its start
                ended = {**begun, **watch._where_now(), "after": ray_identity(strict=False),
                         "error": error}
                with watch._calls_lock:
                    watch._running.pop(token, None)
                    watch._record(ended)

        watched._rlc_runtime_watch = True
        return watched

    def _poll(self) -> None:
        others: set[int] = set()  # children that are no runtime process
        while not self._stop.wait(PROCESS_INTERVAL):
            try:
                pids = _children()
            except OSError:
                continue
            now = {}
            for pid in pids - others:
                found = _runtime_process(pid)  # None: another process, or a zombie now
                if found and found["session"] is None and pid not in self._known:
                    continue  # just started: its command line is not readable yet
                if found:
                    now[pid] = found
                elif pid not in self._known:
                    others.add(pid)
            for pid in now.keys() - self._known.keys():
                self._record({**now[pid], "change": "appeared"})
            gone = self._known.keys() - now.keys()
            if gone:
                try:
                    import ray

                    connected = ray.is_initialized()  # the driver's own flag: no call into Ray
                except Exception:  # noqa: BLE001 - not known: the oracle claims nothing
                    connected = None
                for pid in gone:
                    self._record({**self._known[pid], "change": "gone", "connected": connected})
            self._known = now
