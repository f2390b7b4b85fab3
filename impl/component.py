"""Lifecycle shared by the three components.

A component holds a runtime lease and the handles of its actors. Teardown is
idempotent, thread-safe, bounded in time and never raises; it kills only the
component's own actors, returns once they are dead and what they held shows
free in ``ray.available_resources()`` (``impl.resources``), and never touches
handles once the runtime they belong to is gone. After teardown every public method raises
:class:`ComponentClosedError`.

Signals: a ``KeyboardInterrupt`` (Ctrl-C), or the ``SystemExit`` Ray raises
in the main thread on SIGTERM, is never swallowed: blocking waits are short
slices, so it comes out of any call within about 0.2 s. One that lands in
a teardown comes out at once too, and the teardown's work is not lost: the
component stays closed, and the next ``shutdown()``/``close()`` (from any
thread), a user's ``ray.shutdown()`` or the interpreter exit finishes it
(every actor killed, the thread joined, the lease released, Ray shut down if
that was asked and allowed).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import weakref
from typing import Any, Callable

import ray

from impl import calls, resources, runtime
from impl.errors import ActorNotReadyError, ComponentClosedError, ReadinessTimeout

logger = logging.getLogger(__name__)

_SLICE = 0.2  # seconds: how often blocking waits look for a concurrent teardown
_EXIT_BOUND = 5.0  # seconds: teardown of a component still working at interpreter exit

_WORKING: weakref.WeakSet = weakref.WeakSet()  # components that started a background thread
#: components whose teardown an interrupt cut short (held until it is finished:
#: a detached actor of one that is garbage-collected would live on)
_INTERRUPTED: set = set()
#: components whose teardown is making its Ray calls now, in whatever thread:
#: a ``ray.shutdown()`` from another thread waits for them (bounded)
_CLOSING: weakref.WeakSet = weakref.WeakSet()
#: the three sets change in any thread; each change, and each copy taken to walk
#: them, is made under this lock (a WeakSet copied while another thread adds to
#: it raises "Set changed size during iteration": a reviewer's program, 53 of
#: 20000 copies with a 1 us switch interval, 2026-11-29)
_TRACKED = threading.Lock()


def _track(tracked: Any, component: "RayComponent", present: bool) -> None:
    """Add ``component`` to one of the sets above, or drop it from it."""
    with _TRACKED:
        (tracked.add if present else tracked.discard)(component)


def _stop_background_work(reason: str = "interpreter exit") -> None:
    """Tear down the open components whose background thread still calls Ray,
    finish every teardown an interrupt cut short, and wait for the teardowns
    under way in other threads.

    Runs before Ray's core worker is destroyed: at interpreter exit (before
    any ``atexit`` handler, Ray's shutdown is one) and at the start of every
    ``ray.shutdown()``. A thread inside a Ray call while the core worker is
    destroyed crashes the process (SIGSEGV at exit; ``core_worker_process.cc:
    The core worker has already been shutdown`` and exit code 1, or a hang in
    ``core_worker.wait``, after an explicit ``ray.shutdown()``: all measured).
    A teardown in progress elsewhere is waited for (bounded): without the
    wait, a teardown inside ``ray.wait`` in the main thread got
    ``SystemExit(0)`` from Ray as another thread's ``ray.shutdown()`` ended
    the runtime under it (measured 2026-11-29,
    ``order/*/user/collector>ray(across-its-teardown-in-main)``). One in progress on
    this thread is skipped: its thread was joined before it released the
    runtime, which may be this very ``ray.shutdown()``.
    """
    me = threading.current_thread()
    with _TRACKED:  # each once, though one that works and closes is in two sets
        components = list(dict.fromkeys([*_WORKING, *_INTERRUPTED, *_CLOSING]))
    for component in components:
        if component._closing_thread is not me:
            component._teardown(min(component._shutdown_timeout, _EXIT_BOUND), False, reason)


# Runs in threading._shutdown(), before atexit handlers, whatever the
# registration order (the hook concurrent.futures uses for its workers).
threading._register_atexit(_stop_background_work)


def _stopping_background_work(shutdown: Callable) -> Callable:
    """``ray.shutdown`` that first stops this library's background threads.
    Ray has no pre-shutdown hook, so the public name is wrapped (once)."""
    if getattr(shutdown, "_stops_background_work", False):
        return shutdown

    @functools.wraps(shutdown)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if (_WORKING or _INTERRUPTED or _CLOSING) and ray.is_initialized():
            _stop_background_work("ray.shutdown()")
        ours = runtime.running_ours()
        try:
            return shutdown(*args, **kwargs)
        finally:
            # the user's own shutdown of a runtime this library started from a
            # thread: its keeper outlives Ray's processes, so the call returns
            # with them gone and no thread of ours left (impl.runtime._start_ray)
            if ours is not None and not ray.is_initialized():
                runtime.end_keeper(ours)

    wrapper._stops_background_work = True
    return wrapper


ray.shutdown = _stopping_background_work(ray.shutdown)


class RayComponent:
    """Base of RayCollector, RayReplayBuffer and RayEvalWorker."""

    #: seconds a liveness ping may take before an actor counts as not alive
    ping_timeout = 2.0
    #: the public teardown method, named in ComponentClosedError messages
    _close_method = "shutdown"

    def __init__(self, shutdown_timeout: float = 10.0) -> None:
        if shutdown_timeout is None or shutdown_timeout < 0:
            raise ValueError(f"shutdown_timeout must be >= 0, got {shutdown_timeout!r}")
        self._shutdown_timeout = float(shutdown_timeout)
        self._lease: runtime.RuntimeLease | None = None
        self._actors: list = []  # handles this component talks to
        self._owns_actors = True  # teardown kills them
        self._dying: list = []  # handles killed, their end not yet confirmed
        self._held: dict = {}  # what the killed actors held, to see it free again
        self._freed: resources.Release | None = None  # and the view before their kill
        self._thread: threading.Thread | None = None  # background work, if any
        self._closing_thread: threading.Thread | None = None  # the thread that runs the teardown
        self._stop_event = threading.Event()
        self._lock = threading.Lock()
        self._closed_reason: str | None = None
        self._shutdown_ray = False  # a teardown call asked for it
        self._graceful_tried = False  # the graceful step before the kill ran (or was cut short)
        # actors a failed build gave up on (never answered ready): no graceful step
        # or held query for them, whose calls queue behind a creation that never runs
        self._unstarted: list = []
        self._teardown_done = threading.Event()

    # -- construction -------------------------------------------------------
    def _acquire(self, ray_init_config: dict | None) -> None:
        self._lease = runtime.acquire(type(self).__name__, ray_init_config)

    def _await_ready(self, timeout: float | None, describe: Callable[[int], str], resources: Any) -> None:
        """Wait until every actor answers ``ready``; raise a clear error if not."""
        if timeout is None:
            return
        index = {calls.call(h, "ready"): i for i, h in enumerate(self._actors)}
        pending = list(index)
        deadline = time.monotonic() + timeout
        while pending:
            ready, pending = calls.wait(pending, timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            try:
                calls.get(ready[0])
            except Exception as exc:
                raise ActorNotReadyError(
                    f"{type(self).__name__}: {describe(index[ready[0]])} failed to start: {_cause(exc)}"
                ) from exc
        if pending:
            self._unstarted = [self._actors[index[ref]] for ref in pending]
            try:
                cluster, available = ray.cluster_resources(), ray.available_resources()
            except Exception:
                cluster = available = "unknown"
            raise ReadinessTimeout(
                f"{type(self).__name__}: {len(pending)} of {len(index)} actor(s) not ready after "
                f"{timeout} s; requested resources {resources}, cluster resources {cluster}, available "
                f"now {available}. A request no node can meet is never scheduled (the totals add "
                "up all nodes); one the available resources cannot meet waits for other actors "
                "to end; otherwise the actors' processes were slow to start (a loaded machine: "
                "pass a larger ready_timeout)"
            )

    def _abort_construction(self) -> None:
        """Undo a failed constructor: kill actors, give Ray back as found."""
        started = self._lease is not None and self._lease.started_ray
        self._teardown(None, started, "a failed construction")

    def _start_background(self, target: Callable[[], None], name: str) -> None:
        """Start the component's background thread (once); at interpreter
        exit, the component is torn down if it is still open."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=target, name=name, daemon=True)
        _track(_WORKING, self, True)
        self._thread.start()

    # -- use ----------------------------------------------------------------
    def _check_open(self, method: str) -> None:
        """Raise ComponentClosedError if torn down (or Ray went away under us)."""
        if self._closed_reason is None and self._lease is not None and not self._lease.is_current():
            self._teardown(None, False, "its Ray runtime was shut down")
        reason = self._closed_reason
        if reason is not None:
            raise ComponentClosedError(type(self).__name__, method, reason)

    def _handles(self, method: str) -> list:
        """The actor handles, or ComponentClosedError if (being) torn down."""
        actors = self._actors
        self._check_open(method)  # after the read: teardown marks closed before emptying
        return actors

    def _wait(self, refs: list, method: str, num_returns: int = 1, timeout: float | None = None) -> list:
        """``ray.wait`` in short slices, raising ComponentClosedError once closed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self._check_open(method)
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            step = _SLICE if remaining is None else min(_SLICE, remaining)
            try:
                ready, _ = calls.wait(refs, num_returns=num_returns, timeout=step)
            except Exception:
                self._check_open(method)
                raise
            if len(ready) >= num_returns or (remaining is not None and remaining <= step):
                return ready

    def _fetch(self, refs: Any, method: str) -> Any:
        """``ray.get`` of ready refs; ComponentClosedError if closed meanwhile."""
        try:
            return calls.get(refs)
        except Exception:
            self._check_open(method)
            raise

    def is_alive(self) -> bool:
        """True iff not closed and every actor of the component answers a ping."""
        try:
            lease = self._lease
            if self._closed_reason is not None or lease is None or not lease.is_current() or not self._actors:
                return False
            refs = [calls.call(h, "ping") for h in self._actors]
            ready, pending = calls.wait(refs, num_returns=len(refs), timeout=self.ping_timeout)
            if pending:
                return False
            calls.get(ready)
            return True
        except BaseException as exc:
            calls.swallow(exc)
            return False

    # -- teardown -----------------------------------------------------------
    def _teardown(self, timeout: float | None, shutdown_ray: bool, reason: str) -> None:
        """Stop background work, kill own actors, release the lease. Never
        raises, except a ``KeyboardInterrupt`` (or ``SystemExit`` in the main
        thread), which comes out at once.

        The first caller does the work; concurrent or later callers wait for
        it (bounded) and return. A teardown an interrupt cut short is
        resumed by the next call (and, at the latest, at interpreter exit).
        Returns within ``timeout`` (default ``shutdown_timeout``) plus the time
        of ``ray.shutdown()`` if that is due.
        """
        try:
            bound = self._shutdown_timeout if not isinstance(timeout, (int, float)) else max(0.0, timeout)
            deadline = time.monotonic() + bound
            with self._lock:
                if self._closed_reason is None:
                    self._closed_reason = reason
                done = self._teardown_done.is_set()
                if not done:
                    self._shutdown_ray = self._shutdown_ray or bool(shutdown_ray)
                run = not done and self._closing_thread is None
                if run:
                    self._closing_thread = threading.current_thread()
            if run:
                self._run_teardown(deadline)
            else:
                if shutdown_ray and done:
                    logger.info("%s: already closed; shutdown_ray=True ignored", type(self).__name__)
                if threading.current_thread() is not self._thread:
                    self._teardown_done.wait(max(0.0, deadline - time.monotonic()))
                    self._join_thread(deadline)
        except BaseException as exc:
            calls.swallow(exc)

    def _release(self, lease: runtime.RuntimeLease, shutdown_ray: bool) -> None:
        """Give the runtime lease back (``impl.runtime.release``)."""
        runtime.release(lease, shutdown_ray=shutdown_ray)

    def _run_teardown(self, deadline: float) -> None:
        """The teardown's work, each step safe to run again: an interrupt
        leaves the component in ``_INTERRUPTED`` for the next call to finish."""
        try:
            _track(_INTERRUPTED, self, False)
            _track(_CLOSING, self, True)
            try:
                self._stop_event.set()
                self._join_thread(deadline)
                self._kill_actors(deadline)
            except BaseException as exc:
                calls.swallow(exc)
                logger.warning("%s: error during teardown", type(self).__name__, exc_info=True)
            # before the release, which may end the runtime itself: a release of
            # another component in another thread then need not wait for this one
            _track(_CLOSING, self, False)
            lease = self._lease
            if lease is not None:
                self._release(lease, self._shutdown_ray)
            self._teardown_done.set()
        except BaseException:
            if not self._teardown_done.is_set():
                _track(_INTERRUPTED, self, True)
            raise
        finally:
            _track(_CLOSING, self, False)
            self._closing_thread = None

    def _join_thread(self, deadline: float) -> None:
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                logger.warning("%s: background thread did not stop in time", type(self).__name__)

    def _kill_actors(self, deadline: float) -> None:
        """Kill the own actors (the graceful step first, once), then wait
        (bounded) for their end. A handle leaves ``_actors`` only once its
        kill was sent, so a resumed teardown kills what is left."""
        actors = self._actors
        if actors and (not self._owns_actors or self._lease is None or not self._lease.is_current()):
            self._actors = []
            if self._owns_actors:
                self._actors_unreachable(actors)
            return
        if actors:
            # the undo of a build that gave up on its actors: a never-started actor
            # answers neither call, which queue behind its creation (2.5 s of waits for
            # nothing, measured 2026-11-28: a build with the default ready_timeout 30 s
            # gave up after 32.5 s); what it may hold is not read (it was not before either)
            started = [h for h in actors if all(h is not u for u in self._unstarted)]
            if not self._graceful_tried:
                self._graceful_tried = True  # an interrupt here skips it on resume
                if started:
                    self._before_kill(started, deadline)
            try:  # what they hold, and the view, read before the kill (impl.resources)
                resources.merge(self._held, resources.held(started, deadline) if started else {})
                self._freed = resources.Release(self._held, deadline)
            except BaseException as exc:
                calls.swallow(exc)
            for handle in actors:
                try:
                    calls.kill(handle)
                except BaseException as exc:
                    calls.swallow(exc)
            self._dying, self._actors = self._dying + actors, []
        if not self._dying:
            return
        # ray.kill is asynchronous: wait (bounded) until calls fail, i.e. dead,
        # and until what they held shows free again (impl.resources)
        try:
            refs = [calls.call(h, "ping") for h in self._dying]
            calls.wait(refs, num_returns=len(refs), timeout=max(0.0, min(2.0, deadline - time.monotonic())))
            if self._freed is not None and not self._freed.wait(deadline):
                logger.info("%s: resources not shown free within %s s of the kill",
                            type(self).__name__, resources.RELEASE_WAIT)
        except BaseException as exc:
            calls.swallow(exc)
        self._after_kill(deadline)
        self._dying, self._held, self._freed = [], {}, None

    def _before_kill(self, actors: list, deadline: float) -> None:
        """Hook: a graceful step before the actors are killed."""

    def _close_envs(self, actors: list, deadline: float) -> None:
        """Ask each actor to close its env (``close_env``), waiting at most 2 s
        or half the time left: an env may hold what only its ``close()``
        frees (a simulator's helper process), and killing the actor would
        leave that behind. Queued behind a call in flight; never raises."""
        try:
            refs = [calls.call(h, "close_env") for h in actors]
            calls.wait(refs, num_returns=len(refs),
                       timeout=max(0.0, min(2.0, (deadline - time.monotonic()) / 2)))
        except BaseException as exc:
            calls.swallow(exc)

    def _after_kill(self, deadline: float) -> None:
        """Hook: a step after the actors are dead (the runtime is current)."""

    def _actors_unreachable(self, actors: list) -> None:
        """Hook: the runtime of ``actors`` is gone; they cannot be killed."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        """Leaving ``with component:`` is its ``shutdown()`` / ``close()``
        (what that reports, too); the block's error, if any, comes out."""
        getattr(self, self._close_method)()


def _cause(exc: BaseException) -> str:
    """The root message of an actor (creation) error, on one line."""
    cause = getattr(exc, "cause", None) or exc
    text = str(cause).strip().splitlines()
    return text[-1] if text else type(exc).__name__
