"""Error types shared by the three components."""


class ComponentClosedError(RuntimeError):
    """A method was called on a component that has been torn down.

    The message names the component, the method and what closed it, e.g.
    ``RayReplayBuffer is closed: sample() called after close()``.
    """

    def __init__(self, component: str, method: str, reason: str) -> None:
        super().__init__(f"{component} is closed: {method}() called after {reason}")
        self.component = component
        self.method = method
        self.reason = reason


class ActorNotReadyError(RuntimeError):
    """A component's actor died while it was being constructed."""


class ReadinessTimeout(ActorNotReadyError):
    """A component's actor was not ready within ``ready_timeout``.

    Usually its resources cannot be satisfied by the cluster (infeasible).
    """


class BackgroundWorkError(RuntimeError):
    """Work a component ran in the background failed (``RayCollector.start()``:
    an actor died, the env raised, the buffer went away).

    Raised by every later call of the component that would go on with that
    work (``start()``, iteration, ``update_policy_weights_()``), chained to
    the error that stopped it (``__cause__``; also ``collector.error``); its
    ``is_alive()`` is False from then on. Teardown still never raises.
    """

    def __init__(self, component: str, method: str, cause: str) -> None:
        super().__init__(
            f"{component}: its background work (start()) stopped with an error: {cause}; "
            f"{method}() cannot go on: shut it down and build a new one"
        )
        self.component = component
        self.method = method
