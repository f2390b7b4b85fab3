"""RayCollector: remote actors stepping gymnasium envs into TensorDict batches."""

from __future__ import annotations

import asyncio
import logging
import numbers
import time
from typing import Any, Callable, Iterator

from impl import calls
from impl.actors import CollectorActor
from impl.batches import from_flat, stack_flat
from impl.component import RayComponent
from impl.errors import BackgroundWorkError
from impl.weights import as_weights

logger = logging.getLogger(__name__)

DEFAULT_REMOTE_CONFIG = {"num_cpus": 1}


class RayCollector(RayComponent):
    """Distributed data collector on Ray actors.

    Each of ``num_collectors`` actors steps one gymnasium env (an env id or a
    factory) with ``policy`` (a TensorDictModule, a callable on observations,
    or ``None`` for random actions). Iterating yields TensorDict batches of
    ``frames_per_batch`` frames until ``total_frames`` (-1: endless):

    * ``sync=True``: one batch from every actor per iteration, stacked
      (shape ``[num_collectors, frames_per_batch // num_collectors]``);
    * ``sync=False``: the first ready actor's batch, and that actor is asked
      for the next one at once.

    With ``replay_buffer`` the actors write into the buffer and iterating
    yields the number of frames written at each step; ``start()`` runs that
    in a background thread. On reaching ``total_frames`` the collector kills
    its actors by itself; a later ``shutdown()`` is a no-op.

    If the background work fails (an actor died, the env raised), the error is
    kept in ``error`` and every later ``start()``, iteration or
    ``update_policy_weights_()`` raises :class:`~impl.errors.BackgroundWorkError`
    chained to it; ``is_alive()`` is False from then on. ``shutdown()`` still
    never raises (it logs an error that no call has raised yet).

    Keyword Args:
        num_collectors: how many actors (default: one per env id of a list, else 1).
        ray_init_config: ``ray.init`` kwargs, used only if Ray is not running.
        remote_configs: actor options (resources...) over the default
            ``{"num_cpus": 1}``, one dict or one per actor.
        seed: env seed of actor 0 (actor ``i`` uses ``seed + i``).
        ready_timeout: seconds to wait for the actors to start (None: no wait).
        shutdown_timeout: default bound of ``shutdown()``.
    """

    _close_method = "shutdown"

    def __init__(
        self,
        create_env_fn: str | Callable | list,
        policy: Callable | None = None,
        *,
        frames_per_batch: int,
        total_frames: int = -1,
        sync: bool = False,
        num_collectors: int | None = None,
        replay_buffer: Any = None,
        ray_init_config: dict | None = None,
        remote_configs: dict | list[dict] | None = None,
        seed: int | None = None,
        ready_timeout: float | None = 30.0,
        shutdown_timeout: float = 10.0,
    ) -> None:
        super().__init__(shutdown_timeout)
        envs = list(create_env_fn) if isinstance(create_env_fn, (list, tuple)) else None
        if num_collectors is None:
            num_collectors = len(envs) if envs is not None else 1
        _check_int("num_collectors", num_collectors, minimum=1)
        _check_int("frames_per_batch", frames_per_batch, minimum=1)
        _check_int("total_frames", total_frames, minimum=-1)
        if sync and frames_per_batch % num_collectors:
            raise ValueError(
                f"sync=True needs frames_per_batch ({frames_per_batch}) divisible by "
                f"num_collectors ({num_collectors})"
            )
        envs = envs if envs is not None else [create_env_fn] * num_collectors
        configs = remote_configs if isinstance(remote_configs, (list, tuple)) else [remote_configs] * num_collectors
        if len(envs) != num_collectors or len(configs) != num_collectors:
            raise ValueError("create_env_fn and remote_configs lists must have num_collectors entries")
        for env in envs:
            if not (isinstance(env, str) or callable(env)):
                raise TypeError(f"create_env_fn must be an env id or a callable, got {env!r}")
        if policy is not None and not callable(policy):
            raise TypeError(f"policy must be callable or None, got {type(policy).__name__}")
        configs = [{**DEFAULT_REMOTE_CONFIG, **(c or {})} for c in configs]
        # A closed buffer raises ComponentClosedError here, before Ray is touched.
        writer = replay_buffer.client() if hasattr(replay_buffer, "client") else replay_buffer

        self.frames_per_batch = frames_per_batch
        self.total_frames = total_frames
        self.num_collectors = num_collectors
        self.collected_frames = 0
        self.replay_buffer = replay_buffer
        self._sync = bool(sync)
        self._policy = policy
        self._writer = writer
        self._actor_frames = frames_per_batch // num_collectors if self._sync else frames_per_batch
        self._pending: dict = {}  # in-flight ref -> actor index; survives a `break`
        self.error: BaseException | None = None  # what stopped the background thread
        self._error_raised = False  # a call has raised it to the user

        self._acquire(ray_init_config)
        try:
            for i in range(num_collectors):
                self._actors.append(
                    CollectorActor.options(**configs[i]).remote(
                        envs[i], policy, self._actor_frames, writer, None if seed is None else seed + i
                    )
                )
            self._await_ready(ready_timeout, lambda i: f"collector actor {i} (env {envs[i]!r})", configs)
        except BaseException:
            self._abort_construction()
            raise

    # -- iteration ----------------------------------------------------------
    def __iter__(self) -> Iterator:
        return self.iterator()

    def iterator(self) -> Iterator:
        """Batches (or, with a replay buffer, frames written) until total_frames."""
        self._check_usable("iterator")
        if self._thread is not None:
            raise RuntimeError("RayCollector is collecting in a background thread (start()); it cannot be iterated")
        return self._iterate("iterator")

    def _iterate(self, method: str) -> Iterator:
        while not self._reached():
            yield self._step(method)
        self._teardown(None, False, "reaching total_frames")  # a no-op unless total_frames=0

    def _reached(self) -> bool:
        return 0 <= self.total_frames <= self.collected_frames

    def _step(self, method: str) -> Any:
        """Collect one batch (or frame count); tear down once total_frames is reached."""
        self._submit(method)  # while below total_frames, something is always in flight
        if self._sync:
            refs = list(self._pending)
            self._wait(refs, method, num_returns=len(refs))
            results = self._fetch(refs, method)
            self._pending.clear()
            if self._writer is not None:
                out = sum(results)
            else:
                out = from_flat(stack_flat(results), [self.num_collectors, self._actor_frames])
        else:
            ref = self._wait(list(self._pending), method)[0]
            out = self._fetch(ref, method)
            del self._pending[ref]
            if self._writer is None:
                out = from_flat(out, [self._actor_frames])
        self.collected_frames += out if self._writer is not None else out.numel()
        if self._reached():
            self._teardown(None, False, "reaching total_frames")
        elif not self._sync:
            self._submit(method)
        return out

    def _submit(self, method: str) -> None:
        """Ask idle actors for a batch while total_frames allows it."""
        actors = self._handles(method)
        if self._sync and self._pending:
            return
        busy = set(self._pending.values())
        for i, handle in enumerate(actors):
            in_flight = len(self._pending) * self._actor_frames
            if i in busy or 0 <= self.total_frames <= self.collected_frames + in_flight:
                continue
            self._pending[calls.call(handle, "next" if self._writer is None else "next_to_buffer")] = i

    # -- background collection ----------------------------------------------
    def start(self) -> None:
        """Collect into the replay buffer in a background thread (a no-op
        while it runs; BackgroundWorkError once it failed)."""
        self._check_usable("start")
        if self._writer is None:
            raise ValueError("RayCollector.start() needs a replay_buffer to write into")
        self._start_background(self._collect_in_background, "RayCollector")

    def _collect_in_background(self) -> None:
        try:
            for _ in self._iterate("start"):
                if self._stop_event.is_set():
                    return
        except BaseException as exc:  # thread exits on any error, also SystemExit from Ray
            if self._closed_reason is None:
                self.error = exc
                logger.warning("RayCollector: background collection stopped: %s; the next call "
                               "raises it", _summary(exc))

    def _check_usable(self, method: str) -> None:
        """ComponentClosedError once closed; BackgroundWorkError, chained to
        the cause, once the background work failed."""
        self._check_open(method)
        error = self.error
        if error is not None:
            self._error_raised = True
            raise BackgroundWorkError(type(self).__name__, method, _summary(error)) from error

    def is_alive(self) -> bool:
        """False once closed, once any actor stops answering, or once the
        background work failed."""
        return self.error is None and super().is_alive()

    # -- weights ------------------------------------------------------------
    def update_policy_weights_(self, policy_or_weights: Any = None, *, worker_ids: int | list[int] | None = None) -> None:
        """Send weights (a module, TensorDict or dict; default: the local
        policy's) to the actors; returns once every targeted actor loaded them.

        Batches already requested keep the old weights.
        """
        self._check_usable("update_policy_weights_")
        actors = self._handles("update_policy_weights_")
        source = self._policy if policy_or_weights is None else policy_or_weights
        if source is None:
            raise ValueError("no weights to send: the policy is random (None) and no weights were given")
        ids = range(self.num_collectors) if worker_ids is None else ([worker_ids] if isinstance(worker_ids, int) else worker_ids)
        weights = calls.put(as_weights(source))
        acks = [calls.call(actors[i], "update_policy_weights_", weights) for i in ids]
        self._wait(acks, "update_policy_weights_", num_returns=len(acks))
        self._fetch(acks, "update_policy_weights_")

    def remote_collectors(self) -> list:
        """Handles of the collector actors (empty once closed)."""
        return list(self._actors)

    # -- teardown -----------------------------------------------------------
    def shutdown(self, timeout: float | None = None, shutdown_ray: bool = False) -> None:
        """Stop collecting and kill this collector's actors; never raises.

        If the background work had failed and no call raised it yet, the
        error is logged here (it stays in ``error``).

        Args:
            timeout: bound in seconds (default: ``shutdown_timeout``).
            shutdown_ray: also shut Ray down, only if this library started it,
                once no other component holds it.
        """
        error = self.error
        with self._lock:  # two first calls at once: one reports it
            report = error is not None and not self._error_raised and self._closed_reason is None
            if report:
                self._error_raised = True
        if report:
            logger.error("RayCollector.shutdown(): the background work had stopped with an "
                         "error no call raised: %s (kept in .error)", _summary(error))
        self._teardown(timeout, shutdown_ray, "shutdown()")

    def _before_kill(self, actors: list, deadline: float) -> None:
        self._close_envs(actors, deadline)

    def _after_kill(self, deadline: float) -> None:
        # A write the killed actors had already sent may still be queued in
        # the buffer actor: fence this collector's writer off, so nothing it
        # sent lands after shutdown() returned (bounded; the buffer may be gone).
        handle = getattr(self._writer, "_handle", None)
        writer = getattr(self._writer, "writer_id", None)
        if handle is None or writer is None:
            return
        try:
            fence = calls.call(handle, "fence", writer)
            calls.wait([fence], timeout=max(0.0, min(1.0, deadline - time.monotonic())))
        except BaseException as exc:
            calls.swallow(exc)

    async def async_shutdown(self, timeout: float | None = None, shutdown_ray: bool = False) -> None:
        """``shutdown()`` run in a worker thread."""
        await asyncio.to_thread(self.shutdown, timeout, shutdown_ray)

    def __repr__(self) -> str:
        state = self._closed_reason and f"closed after {self._closed_reason}" or "open"
        return (
            f"RayCollector(num_collectors={self.num_collectors}, frames_per_batch={self.frames_per_batch}, "
            f"total_frames={self.total_frames}, sync={self._sync}, collected_frames={self.collected_frames}, {state})"
        )


def _summary(exc: BaseException) -> str:
    """``Type: first line`` of what stopped the background work (of a Ray
    task error, its cause: the env's own exception)."""
    cause = getattr(exc, "cause", None) or exc
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    return f"{type(cause).__name__}: {lines[0] if lines else ''}"


def _check_int(name: str, value: Any, minimum: int) -> None:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
