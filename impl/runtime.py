"""Shared ownership of the Ray runtime.

Every component holds a :class:`RuntimeLease` from construction until its
teardown. The rules:

* ``acquire`` starts Ray (``ray.init``) only when none is running; the lease
  then records that this implementation started the runtime.
* A runtime found running was started by someone else: releasing a lease on
  it never shuts it down (``shutdown_ray=True`` only logs a warning).
* On a runtime this implementation started, ``shutdown_ray=True`` is deferred
  until the last lease on it is released, so one component can never shut
  down Ray under another (e.g. a collector under its replay buffer).
* A lease is *current* while Ray is initialized and connected to the runtime
  it was acquired on. Teardown must not touch handles of a non-current lease:
  Ray would start a new runtime (or abort the process on Ray 2.50).
"""

from __future__ import annotations

import inspect
import itertools
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import ray

logger = logging.getLogger(__name__)

DEFAULT_RAY_INIT_CONFIG: dict[str, Any] = {"include_dashboard": False}

_lock = threading.RLock()
_ids = itertools.count()
#: seconds between a keeper thread's checks that its runtime still runs: it
#: ends within this of a ray.shutdown() it was not told of (the user's own)
KEEPER_POLL = 0.2
#: seconds a keeper waits at most, once its runtime ended, for the processes it
#: started to exit
CHILDREN_WAIT = 10.0


@dataclass
class _StartedRuntime:
    """A runtime this implementation started, and the leases held on it."""

    identity: tuple
    holders: set = field(default_factory=set)
    shutdown_requested: bool = False
    #: ``(event that ends it, thread)``: the keeper that started it, from a
    #: thread other than the main one (``_start_ray``); None: the main thread did
    keeper: tuple | None = None


_started: _StartedRuntime | None = None


def runtime_identity(strict: bool = False) -> tuple | None:
    """``(gcs_address, session_name, job_id)`` of the connected runtime, or None.

    Reads driver state only: never starts Ray. The job id changes on every
    ``ray.init``, so a reconnection to the same cluster is a new identity too
    (handles from the earlier connection are invalid there as well).
    ``strict``: an error reading it is raised instead of read as "no runtime"
    (the conformance harness's probes: what it cannot read is unknown).
    """
    if not ray.is_initialized():
        return None
    try:
        context = ray.get_runtime_context()
        gcs, job = context.gcs_address, context.get_job_id()
        try:
            session = context.get_session_name()
        except AttributeError:  # public only from Ray 2.5x: 2.60 has it, 2.50.1 not (measured)
            session = getattr(ray._private.worker.global_worker.node, "session_name", None)
    except Exception:  # Ray shutting down under us (another thread)
        if strict:
            raise
        return None
    return (gcs, session, job)


class RuntimeLease:
    """One component's hold on the Ray runtime; see the module docstring."""

    def __init__(self, component: str, identity: tuple, started_ray: bool, ours: bool):
        self.component = component
        self.identity = identity
        self.started_ray = started_ray  # this acquire called ray.init
        self.runtime_started_here = ours  # the implementation started the runtime
        self.released = False
        self._id = next(_ids)

    def is_current(self) -> bool:
        """True while Ray is up and is the runtime this lease was acquired on."""
        return runtime_identity() == self.identity

    def release(self, shutdown_ray: bool = False) -> None:
        release(self, shutdown_ray=shutdown_ray)

    def __repr__(self) -> str:
        return (
            f"RuntimeLease(component={self.component!r}, started_ray={self.started_ray}, "
            f"runtime_started_here={self.runtime_started_here}, released={self.released})"
        )


def acquire(component: str, ray_init_config: dict | None = None) -> RuntimeLease:
    """Join the running Ray runtime, or start one (and own it) if none runs."""
    global _started
    with _lock:
        started_ray = False
        if not ray.is_initialized():
            keeper = _start_ray({**DEFAULT_RAY_INIT_CONFIG, **(ray_init_config or {})})
            _started = _StartedRuntime(runtime_identity(), keeper=keeper)
            started_ray = True
        identity = runtime_identity()
        ours = _started is not None and _started.identity == identity
        lease = RuntimeLease(component, identity, started_ray, ours)
        if ours:
            _started.holders.add(lease._id)
        return lease


def _start_ray(config: dict) -> tuple | None:
    """``ray.init(**config)``. From a thread other than the main one, it runs
    in a keeper thread of this library's that lives until that runtime ends:
    Ray starts its processes (GCS, raylet) with PR_SET_PDEATHSIG, which Linux
    sends when the *thread* that started them ends, not the process (prctl(2)).
    Ray 2.60.0, measured 2026-11-29: ``ray.init()`` in a thread that then
    returned (a thread pool's worker), and the driver's next Ray call hung
    60 s ("Failed to connect to GCS") before the process exited 1. Returns
    ``(event that ends the keeper, keeper)``, or None when no keeper runs."""
    if threading.current_thread() is threading.main_thread():
        ray.init(**config)
        return None
    started, end, box = threading.Event(), threading.Event(), {}

    def keep() -> None:
        try:
            ray.init(**config)
        except BaseException as exc:  # raised in the caller
            box["error"] = exc
            return
        finally:
            started.set()
        # until the runtime ends: a flag's read, no call into Ray's core worker,
        # which a ray.shutdown() in another thread may be tearing down
        while not end.wait(KEEPER_POLL) and ray.is_initialized():
            pass
        _outlive_children(time.monotonic() + CHILDREN_WAIT)

    keeper = threading.Thread(target=keep, name="impl-ray-keeper", daemon=True)
    keeper.start()
    started.wait()
    if "error" in box:
        raise box["error"]
    return end, keeper


def _outlive_children(deadline: float) -> None:
    """Return once the processes this thread started have exited (or at
    ``deadline``): the runtime's end (``ray.shutdown()`` signals them and, by
    default, does not wait) must not be cut short by this thread's end, whose
    PR_SET_PDEATHSIG would SIGKILL the raylet before it stopped its agents
    (measured 2026-11-29: ray::DashboardAgent and ray::RuntimeEnvAgent left
    running). Linux lists a thread's children in /proc; elsewhere, no wait."""
    path = f"/proc/self/task/{threading.get_native_id()}/children"
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                pids = f.read().split()
        except OSError:
            return
        if not any(_running(pid) for pid in pids):
            return
        time.sleep(KEEPER_POLL)


def _running(pid: str) -> bool:
    """The process exists and is no zombie (an exited child nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _shutdown_ray(runtime: _StartedRuntime) -> None:
    """``ray.shutdown()``; with a keeper, waiting until Ray's processes exited
    (``wait_for_processes``, Ray 2.60: the keeper can end at once after it)."""
    if runtime.keeper is not None and "wait_for_processes" in inspect.signature(ray.shutdown).parameters:
        ray.shutdown(wait_for_processes=True)
    else:
        ray.shutdown()


def running_ours() -> _StartedRuntime | None:
    """The record of the connected runtime when this library started it, else None."""
    with _lock:
        runtime = _started
    return runtime if runtime is not None and runtime.identity == runtime_identity() else None


def end_keeper(runtime: _StartedRuntime) -> None:
    """Let the keeper of an ended runtime return, once the processes it started
    exited (bounded: ``CHILDREN_WAIT``); at once when it has none."""
    if runtime.keeper is None:
        return
    end, keeper = runtime.keeper
    end.set()
    if keeper is not threading.current_thread():
        keeper.join(CHILDREN_WAIT + 2 * KEEPER_POLL)  # it outlives the runtime's processes


def release(lease: RuntimeLease, shutdown_ray: bool = False) -> None:
    """Drop ``lease``; shut Ray down if asked, allowed, and no holder is left.

    Never raises for Ray errors and never starts a runtime.
    """
    global _started
    with _lock:
        if lease.released:
            return
        lease.released = True
        runtime = _started
        if not (lease.runtime_started_here and runtime is not None and runtime.identity == lease.identity):
            if shutdown_ray:
                logger.warning(
                    "%s: shutdown_ray=True ignored: this Ray runtime was not started by "
                    "this library (or is gone already)",
                    lease.component,
                )
            return
        runtime.holders.discard(lease._id)
        runtime.shutdown_requested |= shutdown_ray
        if not runtime.shutdown_requested:
            return
        if runtime.holders:
            logger.info(
                "%s: ray.shutdown() deferred until %d other component(s) release Ray",
                lease.component,
                len(runtime.holders),
            )
            return
        _started = None
        try:
            if runtime_identity() == runtime.identity:
                _shutdown_ray(runtime)
        except Exception:  # pragma: no cover - defensive
            logger.warning("%s: ray.shutdown() failed", lease.component, exc_info=True)
        finally:
            end_keeper(runtime)
