"""The conformance adapter of myfork: ``--impl myfork_adapter:MyForkAdapter``.

Maps the suite's Spec onto myfork's constructors and verbs. The verbs the
base class assumes (iter(collector), collector.start(), buffer.sample/extend,
len(buffer), evaluator.submit/poll, is_alive(),
collector.update_policy_weights_()) match myfork's API, so only
construction, teardown and introspection are written here.
"""
from __future__ import annotations

from conformance.adapter import CONVENTIONS, Adapter, Spec
# The eval policy maker is pickled by reference: Ray workers must import its
# module. The suite's root is always on their PYTHONPATH; the fork's root is
# too, if given as an absolute path.
from conformance.adapters.reference import policy_of, random_policy_maker

import myfork

CPUS = 0.25  # small, so a scenario's actors fit the fixtures' nodes


class MyForkAdapter(Adapter):
    name = "myfork"
    features = frozenset({"sync", "async", "buffer", "buffer_mode", "background", "evaluator",
                          "named_evaluator", "shutdown_ray", "liveness", "ready_timeout",
                          "per_actor_envs", "instances", "actor_options",
                          "teardown_timeout", "weights", "context_manager",
                          "async_shutdown", "minimal_build", "buffer_add",
                          "seed"}) | frozenset(CONVENTIONS)  # every feature: nothing
    # skipped or left unchecked (docs/adapter-contract.md: what each one means)
    closed_errors = (myfork.ComponentClosedError,)
    teardown_bound = 10.0
    log_names = ("impl", "myfork")  # the loggers of myfork's code and of what it forked

    # the defaults myfork inherits from impl, as impl's docstrings and signatures give
    # them: a collector actor and the eval actor take a CPU, the buffer's none; one
    # actor for one env id; a build waits 30 s for its actors (the documented_defaults
    # convention)
    documented_defaults = {
        "collector": {"actor_resources": {"CPU": 1.0}, "actors": 1, "ready_timeout": 30.0},
        "buffer": {"actor_resources": {}, "ready_timeout": 30.0},
        "evaluator": {"actor_resources": {"CPU": 1.0}, "ready_timeout": 30.0},
    }

    def _opts(self, spec: Spec, component: str) -> dict:
        if spec.defaults:  # built as a user copying the docstring would: myfork's own options
            return {}
        return {"num_cpus": CPUS, **spec.resources.get(component, {})}

    def _bounds(self, spec: Spec) -> dict:
        if spec.defaults:  # and its own bounds
            return {}
        return {"ready_timeout": spec.ready_timeout, "shutdown_timeout": spec.teardown_timeout}

    def make_buffer(self, spec: Spec):
        return myfork.RayReplayBuffer(
            spec.buffer_capacity, remote_config=self._opts(spec, "buffer"), **self._bounds(spec))

    def make_collector(self, spec: Spec, buffer=None):
        # feature minimal_build: only what the constructor requires, its own defaults else
        budget = {} if spec.minimal_build else {
            "total_frames": spec.total_frames, "sync": spec.sync,
            "num_collectors": spec.num_collectors}
        if spec.seed is not None:  # feature seed
            budget["seed"] = spec.seed
        return myfork.RayCollector(
            # the policy: None (random) unless the scenario sends it weights (feature
            # weights: a CartPolePolicy module, conformance.policies)
            spec.env_id, policy_of(spec), frames_per_batch=spec.frames_per_batch,
            replay_buffer=buffer, **budget,
            remote_configs=self._opts(spec, "collector"), **self._bounds(spec))

    def make_evaluator(self, spec: Spec):
        opts = self._opts(spec, "evaluator")
        named = {"name": spec.actor_name, "namespace": spec.namespace} if spec.actor_name else {}
        return myfork.RayEvalWorker(
            None, spec.env_id, random_policy_maker, **self._bounds(spec), **named, **opts)

    def connect_evaluator(self, spec: Spec):
        return myfork.RayEvalWorker.from_name(
            spec.actor_name, spec.namespace, shutdown_timeout=spec.teardown_timeout)

    def teardown(self, component: str, obj, shutdown_ray: bool = False) -> None:
        # as a user writes it: the argument only when Ray is to end, so that the
        # implementation's own default runs otherwise (keeps_own_runtime judges it)
        method = obj.close if component == "buffer" else obj.shutdown  # collector, evaluator
        if shutdown_ray:
            method(shutdown_ray=True)
        else:
            method()

    def actors(self, component: str, obj) -> list:
        return list(obj._actors)  # the Ray actor handles the component created

    def versions(self) -> dict:
        return {"myfork": myfork.__version__}
