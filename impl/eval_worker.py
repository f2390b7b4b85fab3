"""RayEvalWorker: evaluation rollouts in a dedicated Ray actor."""

from __future__ import annotations

import logging
import numbers
from typing import Any, Callable

from impl import calls
from impl.component import RayComponent
from impl.eval_actor import EvalActor
from impl.weights import as_weights

logger = logging.getLogger(__name__)

DEFAULT_NAMESPACE = "rlc"


class RayEvalWorker(RayComponent):
    """Runs evaluation episodes in an actor built from three callables.

    In the actor, ``init_fn()`` runs first (before torch is imported), then
    ``env = env_maker()`` (a gymnasium env; an env id also works) and
    ``policy = policy_maker(env)`` (``None``: random actions, and torch is never
    imported). ``submit(weights, max_steps)`` starts an
    episode (discarding any earlier result); ``poll(timeout)`` returns
    ``{"reward": episode return, "steps": episode length}`` or None.

    With ``name`` the actor is detached and named in ``namespace``, so other
    drivers reach it with :meth:`from_name`. The creating worker owns it: its
    ``shutdown()`` kills the actor and frees the name; a ``from_name`` handle's
    ``shutdown()`` only drops the handle.

    The actor takes ``num_cpus`` (default 1) and ``num_gpus`` (default 0).
    """

    _close_method = "shutdown"

    def __init__(
        self,
        init_fn: Callable[[], None] | None,
        env_maker: Callable[[], Any] | str,
        policy_maker: Callable[[Any], Any],
        *,
        name: str | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        num_cpus: float = 1,
        num_gpus: float = 0,
        ray_init_config: dict | None = None,
        ready_timeout: float | None = 30.0,
        shutdown_timeout: float = 10.0,
        **remote_kwargs: Any,
    ) -> None:
        super().__init__(shutdown_timeout)
        if init_fn is not None and not callable(init_fn):
            raise TypeError("init_fn must be callable or None")
        if not (isinstance(env_maker, str) or callable(env_maker)):
            raise TypeError("env_maker must be callable (or an env id)")
        if not callable(policy_maker):
            raise TypeError("policy_maker must be callable")
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self.name = name
        self.namespace = namespace if name is not None else None
        self._pending = None
        options = {"num_cpus": num_cpus, "num_gpus": num_gpus, **remote_kwargs}
        if name is not None:
            options.update(name=name, namespace=namespace, lifetime="detached")
        self._acquire(ray_init_config)
        try:
            self._actors.append(EvalActor.options(**options).remote(init_fn, env_maker, policy_maker))
            self._await_ready(ready_timeout, lambda i: f"eval actor (env {env_maker!r})", options)
        except BaseException:
            self._abort_construction()
            raise

    @classmethod
    def from_name(
        cls,
        name: str,
        namespace: str = DEFAULT_NAMESPACE,
        *,
        ray_init_config: dict | None = None,
        shutdown_timeout: float = 10.0,
    ) -> "RayEvalWorker":
        """A handle on the named worker another driver created; owns nothing."""
        worker = cls.__new__(cls)
        RayComponent.__init__(worker, shutdown_timeout)
        worker.name, worker.namespace, worker._pending = name, namespace, None
        worker._owns_actors = False
        worker._acquire(ray_init_config)
        try:
            worker._actors.append(calls.get_actor(name, namespace))
        except BaseException:
            worker._abort_construction()
            raise
        return worker

    @property
    def owns_actor(self) -> bool:
        """False for a handle from :meth:`from_name`."""
        return self._owns_actors

    def submit(self, weights: Any, max_steps: int) -> None:
        """Start an episode with ``weights`` (None: keep the current ones)."""
        actor = self._handles("submit")[0]
        if not isinstance(max_steps, numbers.Integral) or isinstance(max_steps, bool) or max_steps <= 0:
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        weights = None if weights is None else as_weights(weights)
        self._pending = calls.call(actor, "evaluate", weights, int(max_steps))

    def poll(self, timeout: float | None = 0) -> dict | None:
        """The result of the last submitted episode, or None if not ready
        within ``timeout`` seconds (None: wait)."""
        self._check_open("poll")
        pending = self._pending
        if pending is None:
            return None
        if not self._wait([pending], "poll", timeout=timeout):
            return None
        result = self._fetch(pending, "poll")
        if self._pending is pending:
            self._pending = None
        return result

    def shutdown(self, timeout: float | None = None, shutdown_ray: bool = False) -> None:
        """Owner: close the env (briefly) and kill the actor, freeing its name.
        ``from_name`` handle: drop the handle only. Never raises."""
        self._teardown(timeout, shutdown_ray, "shutdown()")

    def _before_kill(self, actors: list, deadline: float) -> None:
        self._close_envs(actors, deadline)

    def _actors_unreachable(self, actors: list) -> None:
        if self.name is not None:
            logger.warning(
                "RayEvalWorker: Ray is gone, detached actor %r (namespace %r) was not killed; "
                "on an external cluster it outlives this driver",
                self.name,
                self.namespace,
            )

    def __repr__(self) -> str:
        state = self._closed_reason and f"closed after {self._closed_reason}" or "open"
        return f"RayEvalWorker(name={self.name!r}, owns_actor={self.owns_actor}, {state})"
