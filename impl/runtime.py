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

import itertools
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

import ray

logger = logging.getLogger(__name__)

DEFAULT_RAY_INIT_CONFIG: dict[str, Any] = {"include_dashboard": False}

_lock = threading.RLock()
_ids = itertools.count()


@dataclass
class _StartedRuntime:
    """A runtime this implementation started, and the leases held on it."""

    identity: tuple
    holders: set = field(default_factory=set)
    shutdown_requested: bool = False


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
            ray.init(**{**DEFAULT_RAY_INIT_CONFIG, **(ray_init_config or {})})
            _started = _StartedRuntime(runtime_identity())
            started_ray = True
        identity = runtime_identity()
        ours = _started is not None and _started.identity == identity
        lease = RuntimeLease(component, identity, started_ray, ours)
        if ours:
            _started.holders.add(lease._id)
        return lease


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
        if runtime_identity() != runtime.identity:
            return
        try:
            ray.shutdown()
        except Exception:  # pragma: no cover - defensive
            logger.warning("%s: ray.shutdown() failed", lease.component, exc_info=True)
