"""Ray-backed RL components with an explicit lifecycle.

``RayCollector``, ``RayReplayBuffer`` and ``RayEvalWorker`` share one
ownership model (:class:`RuntimeLease`, see :mod:`impl.runtime`): a component
starts Ray only if none runs, never shuts down a runtime it did not start,
kills only its own actors, and tears down idempotently within a bound.

Exports are loaded lazily so that an eval actor process can run its
``init_fn`` before torch is imported.
"""

from importlib import import_module

_EXPORTS = {
    "RayCollector": "impl.collector",
    "RayReplayBuffer": "impl.replay_buffer",
    "RayReplayBufferClient": "impl.replay_buffer",
    "RayEvalWorker": "impl.eval_worker",
    "RuntimeLease": "impl.runtime",
    "ComponentClosedError": "impl.errors",
    "ActorNotReadyError": "impl.errors",
    "ReadinessTimeout": "impl.errors",
    "BackgroundWorkError": "impl.errors",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'impl' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
