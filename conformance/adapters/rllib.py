"""Adapter for the installed RLlib (``ray[rllib]``, new API stack): PPOConfig on
CartPole, CPU only. RLlib has no collector, buffer or eval worker classes of
the suite's shape; each component is what an RLlib user builds for that job:

- **collector** = an ``EnvRunnerGroup`` built from the config
  (``EnvRunnerGroup(config=config, local_env_runner=False)``, its
  ``num_env_runners`` remote ``SingleAgentEnvRunner`` actors). Iterating is the
  user's loop over it (:func:`iterate_env_runners`): sync, one
  ``foreach_env_runner(lambda r: r.sample(num_timesteps=...))`` per batch
  (every runner a share of ``frames_per_batch``); async, a
  ``foreach_env_runner_async`` request per idle runner and each result of
  ``fetch_ready_async_reqs`` a batch, first ready first served; until
  ``total_frames`` (never with -1). A batch is the list of episode chunks
  ``sample()`` returns. Teardown is ``group.stop()`` (``stop()`` on every
  runner, then its actor manager ``ray.kill``s them).
- **evaluator** = an ``Algorithm`` (``config.build_algo()``) with evaluation
  configured: no training env runner actor (``num_env_runners=0``, RLlib then
  keeps a local one), one evaluation env runner actor
  (``evaluation_num_env_runners=1``), ``evaluation_duration`` =
  ``eval_max_steps`` timesteps. RLlib has no submit/poll: ``submit`` records
  the request, ``poll`` runs ``algo.evaluate()`` for it (blocking, as RLlib
  does) and returns its result. Teardown is ``algo.stop()`` (learners,
  training and evaluation env runners).
- **buffer**: none. RLlib's replay buffers live inside the driver or the
  learner, never as an actor of their own: the adapter declares no
  ``buffer`` feature, so the catalog has no buffer scenarios
  (``~no-buffer`` marks those that run without it).

Features left out, and why: ``buffer``/``buffer_mode``/``background`` (no
buffer actor; nothing collects in a background thread), ``shutdown_ray`` (no
RLlib teardown shuts Ray down), ``named_evaluator`` (an Algorithm cannot be
named or reached from another driver), ``per_actor_envs`` (one ``config.env``
for every runner), ``liveness``: RLlib's health bookkeeping
(``num_healthy_remote_env_runners``, ``probe_unhealthy_env_runners``) marks a
runner unhealthy only after one of its calls fails and probes only runners
already so marked, so a runner killed between calls counts as healthy until
the next sample: it answers "did a call fail", not "is it alive". The suite
then observes deaths through Ray itself. ``ready_timeout`` is declared:
``validate_env_runners_after_construction`` (True by default) makes the
constructors wait for their runners (without any time limit), False builds
without waiting.

Like the torchrl adapter it only translates: no guard, no retry, no ``try``.
Module level imports nothing from RLlib (the registry imports this module
before any check; Ray workers unpickle the functions below).
"""
from __future__ import annotations

from conformance.adapter import Adapter, Spec

ACTOR_CPUS = 0.25  # small, so a scenario's actors fit any fixture's nodes
#: seconds one fetch_ready_async_reqs waits for a ready result (ray.wait's
#: timeout, RLlib's default is 0: a poll) before the loop asks again
ASYNC_FETCH_WAIT = 0.1
#: Ray actor options of the suite (Spec.resources) -> RLlib's env runner settings
RUNNER_OPTIONS = {"num_cpus": "num_cpus_per_env_runner", "num_gpus": "num_gpus_per_env_runner",
                  "resources": "custom_resources_per_env_runner"}


def iterate_env_runners(group, frames_per_batch: int, total_frames: int, sync: bool):
    """The user's sampling loop over an EnvRunnerGroup: batches (lists of
    episode chunks) until ``total_frames`` frames (endless with -1)."""
    frames = 0
    if sync:  # one batch per round, every runner a share of frames_per_batch
        share = frames_per_batch // max(group.num_remote_env_runners(), 1)
        while total_frames < 0 or frames < total_frames:
            results = group.foreach_env_runner(lambda r: r.sample(num_timesteps=share),
                                               local_env_runner=False)
            batch = [chunk for episodes in results for chunk in episodes]
            frames += sum(len(chunk) for chunk in batch)
            yield batch
        return
    group.foreach_env_runner_async(lambda r: r.sample(num_timesteps=frames_per_batch))
    while total_frames < 0 or frames < total_frames:
        for _, batch in group.fetch_ready_async_reqs(timeout_seconds=ASYNC_FETCH_WAIT):
            frames += sum(len(chunk) for chunk in batch)
            yield batch
            if 0 <= total_frames <= frames:
                return
        # a new request to every runner that has none in flight
        group.foreach_env_runner_async(lambda r: r.sample(num_timesteps=frames_per_batch))


def env_runner_handles(group) -> list:
    """The remote env runner actors of an EnvRunnerGroup. Private on purpose:
    the group has no public accessor of its actor handles (only ids and
    counts); ``_worker_manager.actors()`` (FaultTolerantActorManager) is a
    dict id -> handle, emptied by ``stop()`` (Ray 2.60, read in its source)."""
    if group is None:
        return []
    return list(group._worker_manager.actors().values())


def algorithm_handles(algo) -> list:
    """The actors an Algorithm created: training and evaluation env runners,
    and its learners when remote (``num_learners`` > 0; private as above)."""
    out = []
    for name in ("env_runner_group", "eval_env_runner_group"):
        out += env_runner_handles(getattr(algo, name, None))
    learners = getattr(algo, "learner_group", None)
    if learners is not None and learners.is_remote:
        out += list(learners._worker_manager.actors().values())
    return out


class RLlibAdapter(Adapter):
    name = "rllib"
    package = "ray[rllib]"
    teardown_bound = 10.0
    features = frozenset({"sync", "async", "evaluator", "ready_timeout"})
    closed_errors = ()  # set in __init__ once measured (see README of ci/results/rllib)

    def __init__(self):
        from ray.rllib.algorithms.ppo import PPOConfig  # ImportError without RLlib
        from ray.rllib.env.env_runner_group import EnvRunnerGroup

        self.PPOConfig, self.EnvRunnerGroup = PPOConfig, EnvRunnerGroup
        self._collector_specs = {}  # id(group) -> the Spec it was built with
        self._pending = {}  # id(algo) -> evaluations submitted, not yet polled

    # -- configuration -----------------------------------------------------------
    def runner_settings(self, spec: Spec, component: str) -> dict:
        """``config.env_runners(...)`` beyond what a scenario needs: small CPU
        requests, no GPU, the scenario's placement; none with ``spec.defaults``."""
        if spec.defaults:
            return {}
        options = {"num_cpus": ACTOR_CPUS, "num_gpus": 0, **spec.resources.get(component, {})}
        return {RUNNER_OPTIONS[k]: v for k, v in options.items()}

    def ready_settings(self, spec: Spec) -> dict:
        """``ready_timeout=None`` (construct(ready=False)): don't wait for the runners."""
        return {"validate_env_runners_after_construction": False} \
            if spec.ready_timeout is None else {}

    def config(self, spec: Spec, component: str):
        """The PPOConfig of a component; RLlib's defaults except what is set here."""
        env_runners = {**self.runner_settings(spec, component), **self.ready_settings(spec)}
        config = self.PPOConfig().environment(spec.env_id)
        if component == "collector":
            return config.env_runners(num_env_runners=spec.num_collectors, **env_runners)
        return config.env_runners(num_env_runners=0, **env_runners).evaluation(
            evaluation_num_env_runners=1, evaluation_duration=spec.eval_max_steps,
            evaluation_duration_unit="timesteps")

    # -- construction ---------------------------------------------------------------
    def make_collector(self, spec: Spec, buffer=None):
        group = self.EnvRunnerGroup(config=self.config(spec, "collector"), local_env_runner=False)
        self._collector_specs[id(group)] = spec
        return group

    def make_evaluator(self, spec: Spec):
        algo = self.config(spec, "evaluator").build_algo()
        self._pending[id(algo)] = 0
        return algo

    def teardown(self, component: str, obj, shutdown_ray: bool = False) -> None:
        obj.stop()  # EnvRunnerGroup.stop() / Algorithm.stop()

    # -- verbs ----------------------------------------------------------------------------
    def iterate(self, collector):
        spec = self._collector_specs[id(collector)]
        return iterate_env_runners(collector, spec.frames_per_batch, spec.total_frames, spec.sync)

    def submit(self, evaluator, spec: Spec) -> None:
        self._pending[id(evaluator)] = self._pending.get(id(evaluator), 0) + 1

    def poll(self, evaluator, timeout: float):
        """``algo.evaluate()`` for a submitted request (RLlib's own bound applies,
        ``evaluation_sample_timeout_s``, not ``timeout``); None without one."""
        if not self._pending.get(id(evaluator)):
            return None
        self._pending[id(evaluator)] -= 1
        return evaluator.evaluate()

    # -- introspection ----------------------------------------------------------------------
    def actors(self, component: str, obj) -> list:
        if component == "collector":
            return env_runner_handles(obj)
        return algorithm_handles(obj)

    def versions(self) -> dict:
        from importlib.metadata import version

        return {"ray": version("ray"), "gymnasium": version("gymnasium"),
                "torch": version("torch")}
