"""Adapter for the reference implementation in ``impl/`` (the default target)."""
from __future__ import annotations

from conformance.adapter import Adapter, Spec

ACTOR_CPUS = 0.25  # small, so a scenario's actors fit any fixture's nodes


def random_policy_maker(env):
    """Eval policy: random actions (module-level: Ray imports it by module)."""
    space = env.action_space
    return lambda obs: space.sample()


class ReferenceAdapter(Adapter):
    name = "reference"
    features = frozenset({
        "sync", "async", "buffer_mode", "background", "evaluator", "named_evaluator",
        "shutdown_ray", "liveness", "ready_timeout",
    })
    teardown_bound = 10.0

    def __init__(self):
        import impl

        self.impl = impl
        self.closed_errors = (impl.ComponentClosedError,)
        self.classes = {"collector": impl.RayCollector, "buffer": impl.RayReplayBuffer,
                        "evaluator": impl.RayEvalWorker}

    def _options(self, spec: Spec, component: str) -> dict:
        return {"num_cpus": ACTOR_CPUS, **spec.resources.get(component, {})}

    def make_buffer(self, spec: Spec):
        return self.classes["buffer"](
            spec.buffer_capacity, remote_config=self._options(spec, "buffer"),
            ready_timeout=spec.ready_timeout, shutdown_timeout=spec.teardown_timeout,
        )

    def make_collector(self, spec: Spec, buffer=None):
        return self.classes["collector"](
            spec.env_id, None, frames_per_batch=spec.frames_per_batch,
            total_frames=spec.total_frames, sync=spec.sync,
            num_collectors=spec.num_collectors, replay_buffer=buffer,
            remote_configs=self._options(spec, "collector"),
            ready_timeout=spec.ready_timeout, shutdown_timeout=spec.teardown_timeout,
        )

    def make_evaluator(self, spec: Spec):
        opts = self._options(spec, "evaluator")
        kwargs = {"name": spec.actor_name, "namespace": spec.namespace} if spec.actor_name else {}
        return self.classes["evaluator"](
            None, spec.env_id, random_policy_maker, num_cpus=opts.pop("num_cpus"),
            ready_timeout=spec.ready_timeout, shutdown_timeout=spec.teardown_timeout,
            **kwargs, **opts,
        )

    def connect_evaluator(self, spec: Spec):
        return self.classes["evaluator"].from_name(
            spec.actor_name, spec.namespace, shutdown_timeout=spec.teardown_timeout
        )

    def teardown(self, component: str, obj, shutdown_ray: bool = False) -> None:
        if component == "buffer":
            obj.close(shutdown_ray=shutdown_ray)
        else:
            obj.shutdown(shutdown_ray=shutdown_ray)

    def actors(self, component: str, obj) -> list:
        return list(obj._actors)

    def versions(self) -> dict:
        return {"impl": "reference"}
