"""Adapter for the installed Tianshou (2.0.x): its Ray-backed vectorised env
``RayVectorEnv`` behind a ``Collector`` is the collector. Tianshou has no
replay-buffer actor and no eval worker actor: the adapter declares neither
``buffer`` nor ``evaluator``, so the catalog has the collector alone
(``~no-buffer-evaluator`` marks the scenarios that run without the others).

Each verb, and the Tianshou call it is:

- **construct** = ``RayVectorEnv(env_fns, ...)`` (one ``_SetAttrWrapper``
  env actor per env: ``num_collectors`` env factories, one per env id with
  ``per_actor_envs``), then ``Collector(policy, envs)`` and one
  ``collector.reset()``, as Tianshou's trainer does before its first
  ``collect()`` (a collector never reset refuses to collect). **sync** is
  Tianshou's default: ``RayVectorEnv(env_fns)`` steps every env each step,
  ``Collector``. **async** is what Tianshou offers for it:
  ``RayVectorEnv(env_fns, wait_num=1)`` (each step serves the envs ready
  first) with ``AsyncCollector``. ``RayVectorEnv`` calls ``ray.init()`` when
  no Ray runs (owner ``impl``).
- **iterate / exhaust** = the user's loop (:func:`collect_batches`):
  ``collector.collect(n_step=frames_per_batch)`` per batch until
  ``total_frames`` (endless with -1). A batch is the number of steps
  ``collect()`` reports (``CollectStats.n_collected_steps``); the data stay
  in the collector's own (driver-local) buffer.
- **teardown** = ``collector.close()`` ("Close the collector and the
  environment": ``RayVectorEnv.close()`` closes each env through its actor).
- **actors()** = ``[worker.env for worker in collector.env.workers]``: the
  env actor handles of ``RayVectorEnv``'s public ``workers``.

The policy (:func:`random_policy`) acts at random and returns a constant
hidden state. A stateless policy cannot drive ``AsyncCollector`` in 2.0.1:
its first ``collect()`` indexes the policy entry and the hidden state of
the first step, which a stateless policy leaves empty or None
(``IndexError: Cannot access item from empty Batch object`` with
``DiscreteQLearningPolicy`` or ``collect(random=True)``; with a policy entry
but no state, ``TypeError: 'NoneType' object is not subscriptable``;
measured). A state makes Tianshou fill both. That failure is outside the
lifecycle contract (ci/results/tianshou/README.md). Tianshou's own
``RandomActionPolicy`` returns float actions for a discrete space, which
CartPole rejects (``AssertionError: ... invalid``), hence a policy here.

Features left out, and why: ``buffer``/``buffer_mode`` (Tianshou's replay
buffers live in the driver, no actor), ``evaluator``/``named_evaluator``
(no eval worker actor: Tianshou evaluates with another collector in the
driver), ``background`` (``collect()`` runs in the caller's thread only),
``shutdown_ray`` (no Tianshou call shuts Ray down), ``liveness`` (no
``is_alive`` or health check), ``ready_timeout`` (construction waits for
each env actor's ``action_space`` with a ``ray.get`` without a timeout, and
has no knob), ``actor_options``: ``RayEnvWorker`` creates its actor with
``.options(num_cpus=0)`` and nothing else, so ``Spec.resources`` (the
multinode fixture's placement, an infeasible request) cannot be passed;
the adapter ignores it and Ray places the env actors.

Conventions (``conformance.judge.conventions``): ``endless`` is declared (the
user's loop runs without end for -1). Not declared, because the loop's
numbers (``frames_per_batch``, ``total_frames``) are not arguments of any
Tianshou constructor: ``frame_budget`` (no Tianshou object stops by itself
at ``total_frames``), ``batch_size`` and ``sync_division`` (nothing can
refuse invalid ones at construction); so the oracles resting on them are
not checked instead of judging the mapping.

Like the other adapters it only translates: no guard, no retry, no ``try``.
Module level imports nothing from Tianshou (the registry imports this
module before any check).
"""
from __future__ import annotations

from conformance.adapter import Adapter, Spec


def env_factories(env_id, count: int) -> list:
    """``RayVectorEnv``'s ``env_fns``: one ``gym.make`` per env. Tianshou
    calls each in the driver and ships the env object to its actor."""
    import functools

    import gymnasium as gym

    ids = list(env_id) if isinstance(env_id, (tuple, list)) else [env_id] * count
    return [functools.partial(gym.make, one) for one in ids]


def random_policy(action_space):
    """A Tianshou ``Policy`` of random discrete actions with a constant hidden
    state (``AsyncCollector`` needs one: see the module docstring)."""
    import numpy as np
    from tianshou.algorithm.algorithm_base import Policy
    from tianshou.data import Batch

    class RandomPolicy(Policy):
        def forward(self, batch, state=None, **kwargs):
            n = len(batch.obs)
            return Batch(act=np.random.randint(self.action_space.n, size=n), state=np.zeros(n))

    return RandomPolicy(action_space)


def collect_batches(collector, frames_per_batch: int, total_frames: int):
    """The user's loop over ``collector.collect``: the steps of each batch,
    until ``total_frames`` steps (endless with -1)."""
    frames = 0
    while total_frames < 0 or frames < total_frames:
        stats = collector.collect(n_step=frames_per_batch)
        frames += stats.n_collected_steps
        yield stats.n_collected_steps


def env_actors(collector) -> list:
    """The env actors behind a collector: ``RayVectorEnv.workers[i].env``."""
    return [worker.env for worker in collector.env.workers]


class TianshouAdapter(Adapter):
    name = "tianshou"
    package = "tianshou"
    teardown_bound = 10.0
    features = frozenset({"sync", "async", "per_actor_envs", "endless"})
    #: Tianshou has no "closed" exception type: a closed RayVectorEnv asserts
    closed_errors = ()
    #: the zygote imports these once (tianshou imports numba, matplotlib,
    #: pandas and tensorboard: 4-5 s and 230 MB on top of torch, measured)
    preload = ("tianshou.env", "tianshou.data", "tianshou.algorithm.algorithm_base")

    def __init__(self):
        from importlib.metadata import PackageNotFoundError, version

        try:  # not an import: tianshou would cost pytest's processes 4-5 s each
            version("tianshou")
        except PackageNotFoundError:
            raise ImportError("tianshou is not installed; RLC_EXTRAS=tianshou "
                              "RLC_VENV=.venv-tianshou bash ci/setup.sh builds a venv with it") from None
        self._collector_specs = {}  # id(collector) -> the Spec it was built with

    # -- construction ---------------------------------------------------------------
    @staticmethod
    def env_kwargs(spec: Spec) -> dict:
        """``RayVectorEnv``'s arguments beyond ``env_fns``: async serves the first ready env."""
        return {} if spec.sync else {"wait_num": 1}

    def make_collector(self, spec: Spec, buffer=None):
        from tianshou.data import AsyncCollector, Collector
        from tianshou.env import RayVectorEnv

        envs = RayVectorEnv(env_factories(spec.env_id, spec.num_collectors),
                            **self.env_kwargs(spec))
        collector = (Collector if spec.sync else AsyncCollector)(
            random_policy(envs.action_space[0]), envs)
        collector.reset()
        self._collector_specs[id(collector)] = spec
        return collector

    def teardown(self, component: str, obj, shutdown_ray: bool = False) -> None:
        obj.close()

    # -- verbs ------------------------------------------------------------------------
    def iterate(self, collector):
        spec = self._collector_specs[id(collector)]
        return collect_batches(collector, spec.frames_per_batch, spec.total_frames)

    # -- introspection ----------------------------------------------------------------
    def actors(self, component: str, obj) -> list:
        return env_actors(obj)

    def versions(self) -> dict:
        from importlib.metadata import version

        return {"tianshou": version("tianshou"), "numpy": version("numpy")}

    # -- standalone scripts (python -m conformance script) ----------------------------
    def script_header(self) -> list[str]:
        from conformance.adapters.snippets import source_of

        out = ["from tianshou.data import AsyncCollector, Collector",
               "from tianshou.env import RayVectorEnv", ""]
        for func in (env_factories, random_policy, collect_batches, env_actors):
            out += ["", *source_of(func), ""]
        return out

    def script_actors(self, component: str) -> str:
        return "env_actors(collector)"

    def script_lines(self, op, spec: Spec) -> list[str] | None:
        """Body lines of one operation, calling Tianshou as this adapter does."""
        from conformance.adapters import snippets

        a = op.args
        loop = f"collect_batches(collector, {spec.frames_per_batch!r}, {spec.total_frames!r})"
        if op.verb == "construct":
            cls = "Collector" if spec.sync else "AsyncCollector"
            return [*snippets.call_lines(
                        "envs = RayVectorEnv",
                        [snippets.Code(f"env_factories({spec.env_id!r}, {spec.num_collectors!r})")],
                        self.env_kwargs(spec)),
                    f"collector = {cls}(random_policy(envs.action_space[0]), envs)",
                    "collector.reset()  # once before the first collect(), as Tianshou's trainer"]
        if op.verb == "teardown":
            return snippets.teardown_lines("collector.close()", op)
        if op.verb in ("iterate", "exhaust"):
            k = int(a.get("batches", 1)) if op.verb == "iterate" else None
            if k is not None and k <= 0:
                return ["return '0 batches'  # batches=0: the collector is never iterated"]
            return ["n = 0", f"for _ in {loop}:", "    n += 1",
                    *([f"    if n >= {k}:", "        break  # an early break, as a user's loop does"]
                      if k else []),
                    "return f'{n} batches'"]
        if op.verb == "use" and a["call"] == "iterate":
            return ["# after teardown: the contract wants a clear 'closed' error, at once",
                    f"return repr(next({loop}))"]
        return None  # start, check_alive: no such feature (see the module docstring)
