"""Adapter for the installed torchrl: ``RayCollector``, ``RayReplayBuffer``, ``RayEvalWorker``.

It only translates the :class:`Spec` into torchrl's constructors and verbs: no
guard, no retry, no ``try``. Whatever torchrl does (raises, hangs, aborts,
restarts Ray) is what the suite sees. Features are detected on the installed
version (signatures and attributes), covering torchrl 0.10.x to 0.14.x.

Module level imports nothing from torchrl: Ray workers import this module to
unpickle the env and policy makers below, and the registry imports it before
any check. A missing torchrl raises ImportError when the adapter is built.
"""
from __future__ import annotations

import functools
import inspect
from importlib.metadata import version

from conformance.adapter import Adapter, Spec

ACTOR_CPUS = 0.25  # small, so a scenario's actors fit any fixture's nodes


class GymEnvMaker:
    """Picklable ``create_env_fn`` / ``env_maker``: ``GymEnv(env_id)``."""

    def __init__(self, env_id: str):
        self.env_id = env_id

    def __call__(self):
        from torchrl.envs.libs.gym import GymEnv

        return GymEnv(self.env_id)

    def __repr__(self) -> str:
        return f"GymEnvMaker({self.env_id!r})"


def _env_makers(env_id):
    """``create_env_fn``: one maker (replicated num_collectors times) or one per actor."""
    if isinstance(env_id, (tuple, list)):
        return [GymEnvMaker(e) for e in env_id]
    return GymEnvMaker(env_id)


def eval_policy_maker(env):
    """Eval policy with parameters (RayEvalWorker reads ``next(policy.parameters())``):
    a linear Q-network whose argmax matches the env's action spec (one-hot on CartPole)."""
    from torch import nn
    from torchrl.modules import QValueActor

    obs_dim = env.observation_spec["observation"].shape[-1]
    n_actions = env.action_spec.shape[-1]
    return QValueActor(nn.Linear(obs_dim, n_actions), in_keys=["observation"],
                       spec=env.action_spec)


def random_one_hot_policy(n: int):
    """A random policy as torchrl's collectors take one: a ``TensorDictModule``
    of an ``nn.Module`` without parameters that writes a uniformly random
    one-hot ``action`` over ``n`` actions (CartPole's action spec)."""
    import torch
    from tensordict.nn import TensorDictModule
    from torch import nn

    class RandomOneHot(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.n = n

        def forward(self, observation):
            index = torch.randint(self.n, observation.shape[:-1])
            return nn.functional.one_hot(index, self.n).to(torch.int64)

    return TensorDictModule(RandomOneHot(n), in_keys=["observation"], out_keys=["action"])


def explicit_random_policy(env_id):
    """The smallest explicit equivalent of ``policy=None`` (torchrl's
    documented random policy): ``random_one_hot_policy`` over the env's actions,
    read from a local instance of the env (the first of a per-actor list);
    None when the env cannot be built here (torchrl fails on it the same
    way with either policy)."""
    first = env_id[0] if isinstance(env_id, (tuple, list)) else env_id
    try:
        env = GymEnvMaker(first)()
    except Exception:  # noqa: BLE001 - an unknown env: torchrl reports it itself
        return None
    try:
        return random_one_hot_policy(int(env.action_spec.shape[-1]))
    finally:
        env.close()


def _params(fn) -> set:
    return set(inspect.signature(fn).parameters)


def _minor(text: str) -> tuple:
    """(major, minor) of a version string: "0.12.0" -> (0, 12)."""
    return tuple(int(p) for p in text.split(".")[:2])


class TorchRLAdapter(Adapter):
    name = "torchrl"
    package = "torchrl"
    teardown_bound = 10.0
    closed_errors = ()  # torchrl has no dedicated "closed" exception type

    def __init__(self):
        import torchrl.collectors.distributed as distributed
        from torchrl.data.replay_buffers.ray_buffer import RayReplayBuffer

        self.RayCollector, self.RayReplayBuffer = distributed.RayCollector, RayReplayBuffer
        # RayEvalWorker exists from torchrl 0.12 on; before, "evaluator" is unsupported.
        self.RayEvalWorker = getattr(distributed, "RayEvalWorker", None)
        self._collector_args = _params(self.RayCollector.__init__)
        #: torchrl 0.10.x: RayCollector.shutdown() takes no shutdown_ray and always
        #: calls ray.shutdown()
        self.collector_shutdown_stops_ray = "shutdown_ray" not in _params(self.RayCollector.shutdown)
        #: torchrl 0.11.x to 0.13.x: ``RayCollector(policy=None)``, the documented
        #: random policy, raises ``TypeError: 'NoneType' object is not callable``
        #: in its weight-sync setup (``policy_factory[0]()``), its actors left
        #: alive (measured on 0.11.1, 0.12.0 and 0.13.3: ci/results/releases).
        #: The ``defaults`` scenarios, which build as a user copying the docstring
        #: does, record that finding; every other scenario builds with
        #: ``explicit_random_policy`` so that its lifecycle is judged.
        self.policy_none_fails = _minor(version("torchrl")) in ((0, 11), (0, 12), (0, 13))
        self._eval_env_ids = {}  # id(evaluator) -> env_id, for eval_weights
        self._local_policies = {}  # env_id -> local twin of the eval policy
        self.features = frozenset(self._detect_features())

    def _detect_features(self):
        # RayReplayBuffer: every version; every constructor builds a new component
        feats = {"sync", "async", "buffer", "per_actor_envs", "instances",
                 "actor_options"}  # remote_configs / remote_config
        # The conventions, every version: RayCollector takes frames_per_batch and
        # total_frames (-1: endless, its documented default) and divides a sync
        # batch across its actors; RayEvalWorker's submit/poll are asynchronous.
        # Declared, so that what torchrl does with them is judged (0.14.1 yields
        # nothing for total_frames=-1: early_break/*/*/endless-after-2 fails).
        feats |= {"frame_budget", "endless", "batch_size", "sync_division", "async_eval"}
        if "replay_buffer" in self._collector_args:
            feats.add("buffer_mode")
        # start() is public API in every version a user calls. 0.11+ runs the
        # collection in a thread; 0.10.x schedules an asyncio task on the
        # current event loop, which a synchronous program never runs: the
        # background scenarios then report what such a user gets (no frames).
        if hasattr(self.RayCollector, "start"):
            feats.add("background")
        # shutdown(shutdown_ray=True) from 0.11 on; 0.10.x shutdown() always
        # calls ray.shutdown(), so shutdown_ray=True is its plain shutdown()
        # (see teardown): what a 0.10 user asking for a Ray shutdown calls.
        feats.add("shutdown_ray")
        if self.RayEvalWorker is not None:
            feats.add("evaluator")
            if "name" in _params(self.RayEvalWorker.__init__) and hasattr(self.RayEvalWorker, "from_name"):
                feats.add("named_evaluator")
        # Not declared: "liveness" (no is_alive on RayCollector / RayEvalWorker),
        # "ready_timeout" (no constructor waits for its actors).
        return feats

    # -- configuration ---------------------------------------------------------
    def _remote_config(self, spec: Spec, component: str) -> dict:
        return {"num_cpus": ACTOR_CPUS, "num_gpus": 0, **spec.resources.get(component, {})}

    def _tuning(self, spec: Spec, component: str, ray_init=None) -> dict:
        """Keyword arguments beyond what a scenario needs: the actor options
        and ray.init config; none with ``spec.defaults`` (torchrl's own)."""
        if spec.defaults:
            return {}
        remote = self._remote_config(spec, component)
        ray_init = self._ray_init_config() if ray_init is None else ray_init
        if component == "evaluator":
            return remote
        key = "remote_configs" if component == "collector" else "remote_config"
        return {"ray_init_config": ray_init, key: remote}

    def _ray_init_config(self) -> dict:
        """What torchrl passes to ray.init if it starts Ray: its defaults, without the
        dashboard. No address: RAY_ADDRESS in the environment decides."""
        from torchrl.collectors.distributed.ray import DEFAULT_RAY_INIT_CONFIG

        return {**DEFAULT_RAY_INIT_CONFIG, "include_dashboard": False}

    # -- construction -----------------------------------------------------------
    def make_buffer(self, spec: Spec):
        from torchrl.data import LazyTensorStorage

        return self.RayReplayBuffer(
            storage=functools.partial(LazyTensorStorage, spec.buffer_capacity),
            **self._tuning(spec, "buffer"),
        )

    def _explicit_policy(self, spec: Spec) -> bool:
        """Build with ``explicit_random_policy`` instead of torchrl's default
        ``policy=None``: where None fails to build (``policy_none_fails``),
        except in the ``defaults`` scenarios (whose point is the default)."""
        return self.policy_none_fails and not spec.defaults

    def make_collector(self, spec: Spec, buffer=None):
        kwargs = {}
        if buffer is not None:
            kwargs["replay_buffer"] = buffer  # TypeError on a torchrl without buffer mode
        return self.RayCollector(
            _env_makers(spec.env_id),
            explicit_random_policy(spec.env_id) if self._explicit_policy(spec) else None,
            frames_per_batch=spec.frames_per_batch, total_frames=spec.total_frames,
            num_collectors=spec.num_collectors, sync=spec.sync,
            **self._tuning(spec, "collector"), **kwargs,
        )

    def make_evaluator(self, spec: Spec):
        # torchrl's named worker takes no namespace: it lives in the driver's namespace.
        name = {"name": spec.actor_name} if spec.actor_name else {}
        worker = self.RayEvalWorker(
            None, GymEnvMaker(spec.env_id), eval_policy_maker,
            **name, **self._tuning(spec, "evaluator"),
        )
        self._eval_env_ids[id(worker)] = spec.env_id
        return worker

    def connect_evaluator(self, spec: Spec):
        worker = self.RayEvalWorker.from_name(spec.actor_name)
        self._eval_env_ids[id(worker)] = spec.env_id
        return worker

    def teardown(self, component: str, obj, shutdown_ray: bool = False) -> None:
        if component == "collector" and self.collector_shutdown_stops_ray:
            obj.shutdown()  # torchrl 0.10.x: no shutdown_ray, it always shuts Ray down
            return
        super().teardown(component, obj, shutdown_ray)

    # -- verbs ----------------------------------------------------------------------
    def eval_weights(self, evaluator):
        """``TensorDict.from_module(policy).data.detach().cpu()`` of a local twin
        of the actor's eval policy (same maker, same env)."""
        from tensordict import TensorDict

        env_id = self._eval_env_ids.get(id(evaluator), Spec.env_id)
        if env_id not in self._local_policies:
            env = GymEnvMaker(env_id)()
            self._local_policies[env_id] = eval_policy_maker(env)
            env.close()
        return TensorDict.from_module(self._local_policies[env_id]).data.detach().cpu()

    # -- introspection ------------------------------------------------------------
    def actors(self, component: str, obj) -> list:
        if component == "collector":
            handles = getattr(obj, "remote_collectors", None)
            if callable(handles):  # a method in old torchrl, a property since
                handles = handles()
            return list(handles or [])
        if component == "buffer":
            return [obj._rb] if hasattr(obj, "_rb") else []  # close() deletes _rb
        actor = getattr(obj, "_actor", None)  # RayEvalWorker.shutdown() sets it to None
        return [actor] if actor is not None else []

    def versions(self) -> dict:
        # Distribution metadata: some wheels (torchrl 0.10.1) say __version__ "0.0.0+unknown".
        return {"torchrl": version("torchrl"), "tensordict": version("tensordict")}

    # -- standalone scripts (python -m conformance script) ------------------------------
    def script_header(self) -> list[str]:
        """Imports and helpers of a standalone script, for the installed torchrl."""
        from conformance.adapters.snippets import source_of

        out = ["import functools", "",
               "from torchrl.collectors.distributed import RayCollector"]
        if "evaluator" in self.features:
            out.append("from torchrl.collectors.distributed import RayEvalWorker")
        out += ["from torchrl.collectors.distributed.ray import DEFAULT_RAY_INIT_CONFIG",
                "from torchrl.data import LazyTensorStorage",
                "from torchrl.data.replay_buffers.ray_buffer import RayReplayBuffer", "",
                "# What torchrl passes to ray.init if it starts Ray: its defaults, without the",
                "# dashboard. No address: RAY_ADDRESS in the environment decides.",
                "RAY_INIT_CONFIG = {**DEFAULT_RAY_INIT_CONFIG, 'include_dashboard': False}",
                "", ""]
        out += source_of(GymEnvMaker) + ["", ""] + source_of(eval_policy_maker)
        if self.policy_none_fails:
            out += ["", "", "# torchrl 0.11-0.13: RayCollector(policy=None) fails to build (TypeError in",
                    "# its weight-sync setup); its explicit equivalent, a random policy:"]
            out += source_of(random_one_hot_policy) + ["", ""] + source_of(explicit_random_policy)
        out += ["", "", "_LOCAL_POLICIES = {}", "", "",
                "def _eval_weights(env_id):",
                '    """TensorDict.from_module(policy).data.detach().cpu() of a local twin of the',
                '    eval actor\'s policy (same maker, same env)."""',
                "    from tensordict import TensorDict", "",
                "    if env_id not in _LOCAL_POLICIES:",
                "        env = GymEnvMaker(env_id)()",
                "        _LOCAL_POLICIES[env_id] = eval_policy_maker(env)",
                "        env.close()",
                "    return TensorDict.from_module(_LOCAL_POLICIES[env_id]).data.detach().cpu()",
                "", "",
                "def _collector_handles(collector):",
                '    """The collector\'s actor handles (remote_collectors: a method in old torchrl,',
                '    a property since)."""',
                "    handles = getattr(collector, 'remote_collectors', None)",
                "    if callable(handles):",
                "        handles = handles()",
                "    return list(handles or [])"]
        return out

    def script_actors(self, component: str) -> str:
        if component == "collector":
            return "_collector_handles(collector)"
        if component == "buffer":
            return "([buffer._rb] if hasattr(buffer, '_rb') else [])"  # close() deletes _rb
        return "([evaluator._actor] if getattr(evaluator, '_actor', None) is not None else [])"

    def script_lines(self, op, spec: Spec) -> list[str] | None:
        """Body lines of one operation, calling torchrl as this adapter does."""
        from conformance.adapters import snippets

        target, a = op.target, op.args
        if op.verb == "construct":
            tuning = self._tuning(spec, target, ray_init=snippets.Code("RAY_INIT_CONFIG"))
            if target == "buffer":
                return snippets.call_lines("buffer = RayReplayBuffer", [], {
                    "storage": snippets.Code(f"functools.partial(LazyTensorStorage, "
                                           f"{spec.buffer_capacity!r})"), **tuning})
            if target == "collector":
                rb = {"replay_buffer": snippets.Code("buffer")} if a.get("buffer") else {}
                policy = (snippets.Code(f"explicit_random_policy({spec.env_id!r})")
                          if self._explicit_policy(spec) else None)
                return snippets.call_lines("collector = RayCollector", [
                    snippets.Code(repr(_env_makers(spec.env_id))), policy], {
                    "frames_per_batch": spec.frames_per_batch, "total_frames": spec.total_frames,
                    "num_collectors": spec.num_collectors, "sync": spec.sync, **tuning, **rb})
            if a.get("connect"):
                return [f"evaluator = RayEvalWorker.from_name({spec.actor_name!r})"]
            named = {"name": spec.actor_name} if spec.actor_name else {}
            return snippets.call_lines("evaluator = RayEvalWorker", [
                None, snippets.Code(f"GymEnvMaker({spec.env_id!r})"),
                snippets.Code("eval_policy_maker")], {**named, **tuning})
        if op.verb == "teardown":
            if target == "collector":
                call = ("collector.shutdown(shutdown_ray=True)"
                        if a.get("shutdown_ray") and not self.collector_shutdown_stops_ray
                        else "collector.shutdown()")
            elif target == "buffer":
                call = "buffer.close()"
            else:
                call = "evaluator.shutdown()"
            return snippets.teardown_lines(call, op)
        if op.verb == "check_alive":
            return None  # no is_alive() on RayCollector / RayEvalWorker ("liveness")
        return snippets.default_lines(
            op, spec, submit=f"evaluator.submit(_eval_weights({spec.env_id!r}), {spec.eval_max_steps!r})")
