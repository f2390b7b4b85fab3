"""Adapter for the reference implementation in ``impl/`` (the default target)."""
from __future__ import annotations

import functools

from conformance.adapter import CONVENTIONS, Adapter, Spec

ACTOR_CPUS = 0.25  # small, so a scenario's actors fit any fixture's nodes


def random_policy_maker(env):
    """Eval policy: ``None``, random actions (module-level: Ray imports it by
    module). A policy callable would make the eval actor import torch, 1.1 s
    of CPU per evaluator on this machine, for nothing the lifecycle needs."""
    return None


def policy_of(spec: Spec):
    """The collector's policy: None (random actions) unless the scenario
    builds it with one whose weights it sends (``Spec.policy``)."""
    if spec.policy is None:
        return None
    from conformance.policies import POLICIES  # torch: only a driver that needs it

    if spec.policy not in POLICIES:
        raise ValueError(f"unknown policy {spec.policy!r}: None or one of {sorted(POLICIES)}")
    return POLICIES[spec.policy]()


class ReferenceAdapter(Adapter):
    name = "reference"
    features = frozenset({
        "sync", "async", "buffer", "buffer_mode", "background", "evaluator", "named_evaluator",
        "shutdown_ray", "liveness", "ready_timeout", "per_actor_envs", "instances", "actor_options",
        "weights", "teardown_timeout", "context_manager", "async_shutdown", "minimal_build",
        "buffer_add", "seed",
    }) | frozenset(CONVENTIONS)  # the conventions (conformance.judge.conventions): every one
    teardown_bound = 10.0
    log_names = ("impl",)
    # the constructors' docstrings (impl/collector.py, replay_buffer.py, eval_worker.py):
    # a collector actor and the eval actor take a CPU, the buffer's actor none (it
    # only stores); one env id and no num_collectors: one actor; and their
    # signatures as help() shows them: each waits ready_timeout=30.0 s for its actors
    documented_defaults = {
        "collector": {"actor_resources": {"CPU": 1.0}, "actors": 1, "ready_timeout": 30.0},
        "buffer": {"actor_resources": {}, "ready_timeout": 30.0},
        "evaluator": {"actor_resources": {"CPU": 1.0}, "ready_timeout": 30.0},
    }

    def __init__(self):
        from impl.errors import ComponentClosedError  # imports nothing heavy

        self.closed_errors = (ComponentClosedError,)

    @functools.cached_property
    def classes(self) -> dict:
        """The component classes, imported on first use: in the driver (a
        fork of the zygote, which has torch loaded), never in pytest's own
        processes, which would pay ~2.5 s of CPU each for torch+tensordict."""
        return self._component_classes()

    def _component_classes(self) -> dict:
        import impl

        return {"collector": impl.RayCollector, "buffer": impl.RayReplayBuffer,
                "evaluator": impl.RayEvalWorker}

    def _options(self, spec: Spec, component: str) -> dict:
        return {"num_cpus": ACTOR_CPUS, **spec.resources.get(component, {})}

    def constructor_args(self, spec: Spec, component: str) -> tuple[list, dict]:
        """Positional and keyword arguments of a component's constructor (the
        collector's ``replay_buffer`` aside): the ones a scenario needs, plus,
        unless ``spec.defaults``, the suite's actor options and bounds. The
        driver and the standalone script both build from this."""
        bounds = {"ready_timeout": spec.ready_timeout, "shutdown_timeout": spec.teardown_timeout}
        # what a user may pass by its documented name goes by that name: a fork that
        # renames or reorders a parameter (a keyword-only marker made positional-only)
        # breaks such calls (mutation analysis: survivors of replay_buffer.py:70 and
        # eval_worker.py:43, which positional calls did not tell apart)
        if component == "buffer":
            args, kwargs = [], {"capacity": spec.buffer_capacity}
            tuning = {"remote_config": self._options(spec, "buffer"), **bounds}
        elif component == "collector":
            args = [spec.env_id, policy_of(spec)]
            kwargs = {"frames_per_batch": spec.frames_per_batch} if spec.minimal_build else {
                "frames_per_batch": spec.frames_per_batch, "total_frames": spec.total_frames,
                "sync": spec.sync, "num_collectors": spec.num_collectors}
            if spec.seed is not None:
                kwargs["seed"] = spec.seed
            tuning = {"remote_configs": self._options(spec, "collector"), **bounds}
        else:
            args = [None]
            kwargs = {"env_maker": spec.env_id, "policy_maker": random_policy_maker,
                      **({"name": spec.actor_name, "namespace": spec.namespace}
                         if spec.actor_name else {})}
            tuning = {**self._options(spec, "evaluator"), **bounds}
        return args, kwargs if spec.defaults else {**kwargs, **tuning}

    def make_buffer(self, spec: Spec):
        args, kwargs = self.constructor_args(spec, "buffer")
        return self.classes["buffer"](*args, **kwargs)

    def make_collector(self, spec: Spec, buffer=None):
        args, kwargs = self.constructor_args(spec, "collector")
        return self.classes["collector"](*args, replay_buffer=buffer, **kwargs)

    def make_evaluator(self, spec: Spec):
        args, kwargs = self.constructor_args(spec, "evaluator")
        return self.classes["evaluator"](*args, **kwargs)

    def connect_evaluator(self, spec: Spec):
        return self.classes["evaluator"].from_name(
            name=spec.actor_name, namespace=spec.namespace, shutdown_timeout=spec.teardown_timeout
        )

    def update_weights(self, collector, weights, workers=None) -> None:
        """By the documented keyword names, as the constructors' arguments."""
        ids = {} if workers is None else {"worker_ids": workers}
        collector.update_policy_weights_(policy_or_weights=weights, **ids)

    def poll(self, evaluator, timeout: float):
        """The non-blocking peek as a user writes it, ``poll()``: the reference's
        documented default timeout is 0, so that default is what runs (as
        ``teardown`` leaves ``shutdown_ray`` to it)."""
        return evaluator.poll() if timeout == 0 else evaluator.poll(timeout)

    def teardown(self, component: str, obj, shutdown_ray: bool = False) -> None:
        """As a user writes it: ``close()`` / ``shutdown()`` with no argument
        unless Ray is to end, so the implementation's default is what runs."""
        method = obj.close if component == "buffer" else obj.shutdown
        if shutdown_ray:
            method(shutdown_ray=True)
        else:
            method()

    def actors(self, component: str, obj) -> list:
        return list(obj._actors)

    def versions(self) -> dict:
        return {"impl": "reference"}

    # -- standalone scripts (python -m conformance script) ----------------------------
    def script_header(self) -> list[str]:
        """Imports and helpers of a standalone script: ``impl`` and, for a
        regression variant, the buggy subclasses (their source, applied to impl's)."""
        from conformance.adapters.snippets import source_of

        out = ["# the reference implementation: put the suite's clone on PYTHONPATH for `impl`",
               "from impl import RayCollector, RayEvalWorker, RayReplayBuffer", "", ""]
        out += source_of(random_policy_maker)
        regression = getattr(self, "regression", None)
        if regression is not None:
            out += ["", "", f"# regression variant {regression.id}: {regression.description}",
                    f"# source: {regression.source}"]
            names = {"collector": "RayCollector", "buffer": "RayReplayBuffer",
                     "evaluator": "RayEvalWorker"}
            for kind, override in regression.overrides.items():
                out += ["", ""] + source_of(override) + [
                    "", "", f"{names[kind]} = {override.__name__}({names[kind]})"]
        return out

    def script_actors(self, component: str) -> str:
        return f"list({component}._actors)"

    def script_lines(self, op, spec: Spec) -> list[str] | None:
        """Body lines of one operation, calling ``impl`` as this adapter does."""
        from conformance.adapters import snippets

        target, a = op.target, op.args
        if op.verb == "construct":
            if target == "evaluator" and a.get("connect"):
                return ["evaluator = RayEvalWorker.from_name(",
                        f"    name={spec.actor_name!r}, namespace=NAMESPACE, "
                        f"shutdown_timeout={spec.teardown_timeout!r})"]
            args, kwargs = self.constructor_args(spec, target)
            if target == "collector":
                kwargs = {**kwargs, "replay_buffer": snippets.Code("buffer" if a.get("buffer") else "None")}
                if spec.policy is not None:  # conformance.policies's, in the script's header
                    from conformance.policies import POLICIES

                    made = POLICIES[spec.policy].__name__
                    args = [args[0], snippets.Code(f"{made}()"), *args[2:]]
            if kwargs.get("namespace") == spec.namespace:
                kwargs["namespace"] = snippets.Code("NAMESPACE")
            cls = {"buffer": "RayReplayBuffer", "collector": "RayCollector",
                   "evaluator": "RayEvalWorker"}[target]
            return snippets.call_lines(f"{target} = {cls}", args, kwargs)
        if op.verb == "teardown" and a.get("via") == "with":
            raises = bool(a.get("body_raises", False))
            return snippets.teardown_lines(
                f"leave_with_block({target}.__exit__, body_raises={raises}, strict=True)", op)
        if op.verb == "teardown":
            method = "close" if target == "buffer" else "shutdown"
            asks = "shutdown_ray=True" if a.get("shutdown_ray") else ""
            if a.get("via") == "async":
                return snippets.teardown_lines(
                    f"await_in_a_running_loop({target}.async_shutdown({asks}))", op)
            return snippets.teardown_lines(f"{target}.{method}({asks})", op)
        if op.verb == "check_alive":
            return snippets.check_alive_lines(f"{target}.is_alive()", op)
        if op.verb == "poll" and not float(a.get("timeout", 0)):  # as self.poll calls it
            return ["result = evaluator.poll()",
                    "return 'ready' if result is not None else 'not ready'"]
        if op.verb == "weights":
            return [line.replace("update_policy_weights_(", "update_policy_weights_(policy_or_weights=")
                    for line in snippets.default_lines(op, spec)]
        return snippets.default_lines(op, spec, submit=f"evaluator.submit(None, {spec.eval_max_steps!r})")
