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
  ``sample()`` returns; a round no runner answers ends the loop (as RLlib's
  ``synchronous_parallel_sample`` does). Teardown is ``group.stop()`` (``stop()`` on every
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
the next sample: it answers "did a call fail", not "is it alive" (measured,
ci/results/rllib/README.md). The suite then observes deaths through Ray. ``ready_timeout`` is declared:
``validate_env_runners_after_construction`` (True by default) makes the
constructors wait for their runners (without any time limit), False builds
without waiting.

Conventions (``conformance.judge.conventions``): ``endless`` is declared (the
user's loop above runs without end for -1). Not declared, so the oracles
resting on them are *not checked* instead of judging the mapping:
``frame_budget`` (an EnvRunnerGroup takes no total_frames: the user's loop
stops there and the runners stay up until ``stop()``, so
``exhaustion_auto_shutdown`` is not checked), ``batch_size`` and
``sync_division`` (frames_per_batch is the loop's number, not a constructor
argument: nothing at construction can refuse 0, or 63 frames over 2
runners), ``async_eval`` (RLlib has no submit: the adapter records the
request, so a ``submit()`` after teardown is not judged).

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
    episode chunks) until ``total_frames`` frames (endless with -1). A round
    that no runner answers ends it, as in RLlib's own
    ``synchronous_parallel_sample`` (no runner left, e.g. after ``stop()``)."""
    frames = 0
    if sync:  # one batch per round, every runner a share of frames_per_batch
        share = frames_per_batch // max(group.num_remote_env_runners(), 1)
        while total_frames < 0 or frames < total_frames:
            results = group.foreach_env_runner(lambda r: r.sample(num_timesteps=share),
                                               local_env_runner=False)
            if not results:
                return
            batch = [chunk for episodes in results for chunk in episodes]
            frames += sum(len(chunk) for chunk in batch)
            yield batch
        return
    while total_frames < 0 or frames < total_frames:
        # a request to every healthy runner that has none in flight
        group.foreach_env_runner_async(lambda r: r.sample(num_timesteps=frames_per_batch))
        if not group.num_in_flight_async_reqs():
            return
        for _, batch in group.fetch_ready_async_reqs(timeout_seconds=ASYNC_FETCH_WAIT):
            frames += sum(len(chunk) for chunk in batch)
            yield batch
            if 0 <= total_frames <= frames:
                return


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


#: id(algo) -> evaluations submitted and not yet polled (RLlib has no request queue)
PENDING_EVALUATIONS: dict = {}


def submit_evaluation(algo) -> None:
    """Record one evaluation request: RLlib evaluates only when asked to, blocking."""
    PENDING_EVALUATIONS[id(algo)] = PENDING_EVALUATIONS.get(id(algo), 0) + 1


def poll_evaluation(algo):
    """``algo.evaluate()`` for a submitted request (RLlib's own bound applies,
    ``evaluation_sample_timeout_s``); None without one."""
    if not PENDING_EVALUATIONS.get(id(algo)):
        return None
    PENDING_EVALUATIONS[id(algo)] -= 1
    return algo.evaluate()


def rllib_extra_missing() -> list[str]:
    """The distributions of ray's ``rllib`` extra that are not installed. Every
    ray wheel ships ``ray/rllib``, importable only with them; importing it to
    find out would cost pytest's processes 4.2 s each (torch, measured)."""
    from importlib.metadata import PackageNotFoundError, requires, version

    from packaging.requirements import Requirement

    missing = []
    for line in requires("ray") or ():
        req = Requirement(line)
        if req.marker is None or not req.marker.evaluate({"extra": "rllib"}) \
                or req.marker.evaluate({"extra": ""}):
            continue
        try:
            version(req.name)
        except PackageNotFoundError:
            missing.append(req.name)
    return missing


class RLlibAdapter(Adapter):
    name = "rllib"
    package = "ray[rllib]"
    teardown_bound = 10.0
    features = frozenset({"sync", "async", "evaluator", "ready_timeout", "actor_options",
                          "endless", "instances"})
    closed_errors = ()  # set in __init__ once measured (see README of ci/results/rllib)

    #: the zygote imports these once (4.1 s with torch, 2.1 s of it torch,
    #: measured): drivers fork warm; pytest's own processes never import RLlib
    preload = ("ray.rllib.algorithms.ppo", "ray.rllib.env.env_runner_group")

    def __init__(self):
        missing = rllib_extra_missing()
        if missing:
            raise ImportError(f"ray[rllib] is not installed (missing: {', '.join(missing)}); "
                              "RLC_EXTRAS=rllib RLC_VENV=.venv-rllib bash ci/setup.sh "
                              "builds a venv with it")
        self._collector_specs = {}  # id(group) -> the Spec it was built with

    # -- configuration -----------------------------------------------------------
    def runner_settings(self, spec: Spec, component: str) -> dict:
        """``config.env_runners(...)`` beyond what a scenario needs: small CPU
        requests, no GPU, the scenario's placement; none with ``spec.defaults``."""
        if spec.defaults:
            return {}
        options = {"num_cpus": ACTOR_CPUS, "num_gpus": 0, **spec.resources.get(component, {})}
        return {RUNNER_OPTIONS[k]: v for k, v in options.items()}

    def config_calls(self, spec: Spec, component: str) -> list[tuple[str, dict]]:
        """The PPOConfig builder calls of a component, in order (the adapter
        and its scripts make the same); RLlib's defaults for everything else.
        ``ready_timeout=None`` (construct(ready=False)): don't wait for the runners."""
        runners = dict(self.runner_settings(spec, component))
        if spec.ready_timeout is None:
            runners["validate_env_runners_after_construction"] = False
        calls = [("environment", {"env": spec.env_id})]
        if component == "collector":
            return calls + [("env_runners", {"num_env_runners": spec.num_collectors, **runners})]
        return calls + [("env_runners", {"num_env_runners": 0, **runners}),
                        ("evaluation", {"evaluation_num_env_runners": 1,
                                        "evaluation_duration": spec.eval_max_steps,
                                        "evaluation_duration_unit": "timesteps"})]

    def config(self, spec: Spec, component: str):
        from ray.rllib.algorithms.ppo import PPOConfig

        config = PPOConfig()
        for method, kwargs in self.config_calls(spec, component):
            config = getattr(config, method)(**kwargs)
        return config

    # -- construction ---------------------------------------------------------------
    def make_collector(self, spec: Spec, buffer=None):
        from ray.rllib.env.env_runner_group import EnvRunnerGroup

        group = EnvRunnerGroup(config=self.config(spec, "collector"), local_env_runner=False)
        self._collector_specs[id(group)] = spec
        return group

    def make_evaluator(self, spec: Spec):
        return self.config(spec, "evaluator").build_algo()

    def teardown(self, component: str, obj, shutdown_ray: bool = False) -> None:
        obj.stop()  # EnvRunnerGroup.stop() / Algorithm.stop()

    # -- verbs ----------------------------------------------------------------------------
    def iterate(self, collector):
        spec = self._collector_specs[id(collector)]
        return iterate_env_runners(collector, spec.frames_per_batch, spec.total_frames, spec.sync)

    def submit(self, evaluator, spec: Spec) -> None:
        submit_evaluation(evaluator)

    def poll(self, evaluator, timeout: float):
        return poll_evaluation(evaluator)  # blocks as evaluate() does: no timeout in RLlib

    # -- introspection ----------------------------------------------------------------------
    def actors(self, component: str, obj) -> list:
        if component == "collector":
            return env_runner_handles(obj)
        return algorithm_handles(obj)

    def versions(self) -> dict:
        from importlib.metadata import version

        return {"ray": version("ray"), "gymnasium": version("gymnasium"),
                "torch": version("torch")}

    # -- standalone scripts (python -m conformance script) --------------------------------
    def script_header(self) -> list[str]:
        from conformance.adapters.snippets import source_of

        out = ["from ray.rllib.algorithms.ppo import PPOConfig",
               "from ray.rllib.env.env_runner_group import EnvRunnerGroup", "",
               f"ASYNC_FETCH_WAIT = {ASYNC_FETCH_WAIT!r}",
               "PENDING_EVALUATIONS = {}", ""]
        for func in (iterate_env_runners, env_runner_handles, algorithm_handles,
                     submit_evaluation, poll_evaluation):
            out += ["", *source_of(func), ""]
        return out

    def script_actors(self, component: str) -> str:
        return ("env_runner_handles(collector)" if component == "collector"
                else "algorithm_handles(evaluator)")

    def script_lines(self, op, spec: Spec) -> list[str] | None:
        """Body lines of one operation, calling RLlib as this adapter does."""
        from conformance.adapters import snippets

        target, a = op.target, op.args
        loop = (f"iterate_env_runners(collector, {spec.frames_per_batch!r}, "
                f"{spec.total_frames!r}, {spec.sync!r})")
        if op.verb == "construct":
            lines = ["config = PPOConfig()"]
            for method, kwargs in self.config_calls(spec, target):
                lines += snippets.call_lines(f"config = config.{method}", [], kwargs)
            if target == "collector":
                return lines + ["collector = EnvRunnerGroup(config=config, local_env_runner=False)"]
            return lines + ["evaluator = config.build_algo()"]
        if op.verb == "teardown":
            return snippets.teardown_lines(f"{target}.stop()", op)
        if op.verb in ("iterate", "exhaust"):
            k = int(a.get("batches", 1)) if op.verb == "iterate" else None
            if k is not None and k <= 0:
                return ["return '0 batches'  # batches=0: the collector is never iterated"]
            return ["n = 0", f"for _ in {loop}:", "    n += 1",
                    *([f"    if n >= {k}:", "        break  # an early break, as a user's loop does"]
                      if k else []),
                    "return f'{n} batches'"]
        if op.verb == "submit":
            return ["submit_evaluation(evaluator)"]
        if op.verb == "poll":
            return ["result = poll_evaluation(evaluator)",
                    "return 'ready' if result is not None else 'not ready'"]
        if op.verb == "use":
            expr = {"iterate": f"next({loop})", "submit": "submit_evaluation(evaluator)",
                    "poll": "poll_evaluation(evaluator)"}.get(a["call"])
            return None if expr is None else [
                "# after teardown: the contract wants a clear 'closed' error, at once",
                f"return repr({expr})"]
        return None  # check_alive: no liveness (see the module docstring)
