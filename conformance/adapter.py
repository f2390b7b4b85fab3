"""The adapter contract: how the suite drives one implementation.

An adapter maps one small :class:`Spec` onto an implementation's constructors
and verbs, and declares which features it supports so that a scenario that
needs a missing feature is skipped with the reason. Subclass :class:`Adapter`
and override what differs; ``ci/example-fork/myfork_adapter.py`` is a
worked example in about 50 lines; ``docs/adapter-contract.md`` is the
contract in prose.

Some features are *conventions* (``CONVENTIONS`` below): what the suite
assumes of the arguments and results of an implementation's calls
(``total_frames=-1``, how a sync batch is divided, what ``submit``/``poll``
do). No scenario needs one: an adapter that lacks a convention still runs
every scenario, and the oracles that rest on it are reported *not checked*
for the ops that rely on it (``conformance.judge.conventions``) instead of failing.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

# Features a scenario may require. An adapter lists the ones it supports.
FEATURES = {
    "sync": "synchronous collection (one batch from every actor per iteration)",
    "async": "asynchronous collection (first ready, first served)",
    "buffer": "a replay buffer component (without it the catalog has no buffer: "
              "scenarios about the buffer do not exist, those that merely include it "
              "run without it, their ids marked ~no-buffer)",
    "buffer_mode": "the collector writes into a replay buffer (built with the buffer: every "
                   "batch goes there, and iterating yields the frames written, or None)",
    "background": "collector.start(): collection in a background thread",
    "evaluator": "an eval worker component",
    "named_evaluator": "a named, detached eval worker reachable with from_name",
    "shutdown_ray": "collector.shutdown(shutdown_ray=True): ends a Ray runtime the "
                    "implementation started, once the last of its components is torn down "
                    "(deferred while another holds it); never a runtime the user started",
    "liveness": "is_alive() on every component (optional: without it check_alive is "
                "recorded unsupported and liveness_reports_death is not checked)",
    "weights": "collector.update_policy_weights_(weights, worker_ids=...): sends policy "
               "weights (an nn.Module, a TensorDict or a nested dict of tensors) to every "
               "collector actor, or to the ones named, and returns once they hold them; a "
               "collector built with Spec.policy runs that policy (conformance.policies."
               "POLICIES: 'module', a CartPolePolicy; 'tdmodule', the same as a "
               "TensorDictModule; 'function', a plain function). Optional: without it the weights op is "
               "recorded unsupported, weights_take_effect is not checked, and the collector "
               "is built with the adapter's usual policy",
    "ready_timeout": "constructors wait for actor readiness and can be told not to "
                     "(informational: a scenario never needs it)",
    "teardown_timeout": "the components take the teardown bound Spec.teardown_timeout (the "
                        "reference: its constructors' shutdown_timeout); a scenario that gives "
                        "one is judged against it instead of the adapter's teardown_bound, and "
                        "a negative one is refused at construction. Without it the scenarios "
                        "that give a bound, or an invalid one, are skipped",
    "per_actor_envs": "a collector built with one env id per actor (a create_env_fn list)",
    "seed": "the collector's constructor takes a seed (Spec.seed): two collectors built with "
            "the same seed and the adapter's usual policy (the action space's random actions) "
            "yield the same batches, observations and actions. Without it the scenarios that "
            "build seeded collectors are skipped",
    "buffer_add": "the buffer writes one transition (Adapter.add: a TensorDict of batch_size "
                  "[], torchrl's ReplayBuffer.add). Without it the scenarios that add one are "
                  "skipped",
    "minimal_build": "the adapter honours Spec.minimal_build: the collector built with only "
                     "what its constructor requires (env, policy, frames_per_batch, the buffer), "
                     "its total_frames, sync and num_collectors left to the implementation's "
                     "defaults, which must give a collector that builds and yields every batch "
                     "the user's loop asks for. Without it the scenarios that build one are "
                     "skipped",
    "context_manager": "each component is a context manager: leaving `with component:` tears "
                       "it down as its shutdown()/close() does (Adapter.exit_block: "
                       "`__exit__`), and an error the block's body raised comes out of the "
                       "with statement (an __exit__ returning a true value swallows it). "
                       "Without it the scenarios that leave a with block are skipped",
    "async_shutdown": "the collector has a coroutine teardown (`async_shutdown()`, as "
                      "torchrl's collectors): awaiting it (Adapter.async_teardown) tears the "
                      "collector down as shutdown() does, by the time the await returns. "
                      "Without it the scenarios that await it are skipped",
    "instances": "several components of one kind open at once, each make_* call a new, "
                 "independent one (two collectors into one buffer, two buffers, two eval "
                 "workers; docs/instances.md); without it the instances family is skipped",
    "actor_options": "the constructors take Ray actor options (Spec.resources: a custom "
                     "resource that places a component on a node, a request no node meets). "
                     "Without it a scenario that builds a component infeasible or removes "
                     "the node under it is skipped; elsewhere Ray places the actors (the "
                     "multinode fixture's placement is then not honoured)",
    # -- conventions: no scenario needs one; without one, what rests on it is
    # not checked (conformance.judge.conventions names which oracle for which op)
    "frame_budget": "the collector's constructor takes total_frames: its iteration ends "
                    "once that many frames were collected, and the collector then shuts "
                    "its actors down by itself (a later teardown is a no-op); a "
                    "total_frames below -1 is refused at construction. Without it: "
                    "exhaustion_auto_shutdown, batch_counts of an exhaust, and fails_clearly "
                    "of the invalid total_frames constructor are not checked",
    "endless": "total_frames=-1 means no budget: the collector yields batches until the "
               "user's loop breaks. Without it: batch_counts of a collector built with -1 "
               "is not checked, and its constructor may refuse -1",
    "batch_size": "the collector's constructor takes frames_per_batch, the frames of every "
                  "batch it yields, and refuses one below 1. Without it: batch_counts of an "
                  "exhaust, batch_sizes and fails_clearly of the invalid frames_per_batch "
                  "constructor are not checked",
    "sync_division": "with sync=True a batch is frames_per_batch frames in all, split evenly "
                     "across the actors (frames_per_batch / num_collectors each), and a "
                     "frames_per_batch the actors do not divide is refused at construction. "
                     "Without it: batch_counts and batch_sizes of a sync collector and fails_clearly "
                     "of the sync_divisible constructor are not checked",
    "async_eval": "the eval worker's submit(weights, max_steps) starts an evaluation and "
                  "returns at once; poll(timeout) returns its result, once, or None when it "
                  "is not done within timeout (having waited it) or nothing is pending. "
                  "A step budget it cannot run (0, 2.5) is refused by submit() itself, at "
                  "once. Without it (the adapter emulates submit): use_after_close_clear_error "
                  "of submit() after teardown, poll_waits_its_timeout, calls_within_timeout "
                  "of a poll (an emulated poll runs the evaluation), "
                  "poll_returns_each_result_once and fails_clearly of a refused budget are not "
                  "checked (the eval worker's constructor may refuse it instead)",
    "num_collectors": "the collector takes the number of its actors (num_collectors) apart "
                      "from its env ids: a list of one id per actor of another length is "
                      "refused. Without it: fails_clearly of that case is not checked",
    "transition_batches": "a batch the collector yields is a TensorDict of env steps in "
                          "torchrl's layout: observation and ('next', 'observation') rows of "
                          "one shape, ('next', 'reward'), ('next', 'done'), "
                          "('next', 'terminated') and ('next', 'truncated') one wide (a "
                          "trailing dimension of 1), done = terminated | truncated, and along "
                          "the last batch dimension consecutive steps of one env (a step that "
                          "is not done is followed by the step from its next observation). "
                          "Without it: batches_hold_steps is not checked",
    "eval_episode": "the result poll() returns is one episode, which Adapter.episode() reads "
                    "as its steps and its return (the reference's {'steps', 'reward'}). "
                    "Without it: eval_episode_consistent is not checked",
    "keeps_own_runtime": "a Ray runtime the implementation started stays up until a teardown "
                          "asks to end it (shutdown_ray=True): a teardown without the argument "
                          "leaves it, also the last holder's. Without it: owned_runtime_kept is "
                          "not checked",
    "logs_unraised_errors": "the implementation logs through Python's logging, under the "
                            "loggers Adapter.log_names names: the error that stopped the "
                            "collector's background work (start()), when no call raised it to "
                            "the user, is logged at ERROR by its teardown, once; an error a call "
                            "raised is not logged at ERROR again, and a run where nothing "
                            "failed (plain calls, each ok: oracles._nothing_failed) logs no "
                            "ERROR. Without it: unraised_error_logged is not checked",
    "quiet_when_healthy": "a run where nothing failed and nothing was refused (plain calls, "
                          "each ok, background work included, no shutdown_ray asked: "
                          "oracles._healthy; also after the user's own ray.shutdown(), "
                          "unless a named eval worker, background work, a pending evaluation "
                          "or the implementation's own runtime was involved, and after calls "
                          "that raised the closed error) logs no WARNING under the loggers "
                          "Adapter.log_names names, nor shows a Python warning attributed to "
                          "the code of the packages of those names. Without it: "
                          "quiet_when_healthy is not checked",
    "writes_within_budget": "a collector in buffer mode with a budget (total_frames) writes no "
                             "more than that many frames into the buffer, the batches in "
                             "flight at its end included (a check_data with at_most, read after "
                             "its exhaust). Without it: batch_counts of such a check_data is "
                             "not checked",
    "leaves_ray_as_found": "a constructor that raises leaves the driver's Ray as it found it: "
                           "not initialized if it was not (a runtime started for the failed "
                           "build is ended), still up if it was. Without it: "
                           "failed_build_leaves_ray_as_found is not checked",
    "repr_names_state": "a component's repr() says whether it is closed: after its teardown "
                        "returned it says closed (or shut down), and before "
                        "anything ended it, it does not. Without it: repr_names_state is not "
                        "checked",
    "prompt_teardown": "in a run where nothing failed and nothing was refused (the "
                       "quiet_when_healthy convention's healthy run), every teardown call "
                       "returns within 1.5 s (oracles.PROMPT_TEARDOWN): nothing hung or dead is "
                       "there to wait for. Without it: teardown_prompt_when_healthy is not "
                       "checked",
    "documented_defaults": "what a component left to its defaults is, as the implementation "
                           "documents it (Adapter.documented_defaults): the resources each "
                           "actor holds when built without actor options (Spec.defaults), and "
                           "how many actors a collector built with neither num_collectors nor a "
                           "list of env ids starts (Spec.minimal_build), and how long a build "
                           "waits for its actors to start (on a busy cluster). Without it: "
                           "defaults_as_documented and ready_bound_as_documented are not checked",
}

#: the features that are conventions (``conformance.judge.conventions``): never a
#: scenario's requirement, only what some oracles' findings rest on
CONVENTIONS = ("frame_budget", "endless", "batch_size", "sync_division", "async_eval",
               "transition_batches", "eval_episode", "keeps_own_runtime", "logs_unraised_errors",
               "quiet_when_healthy", "num_collectors", "repr_names_state",
               "leaves_ray_as_found", "writes_within_budget", "documented_defaults",
               "prompt_teardown")
#: Spec fields a scenario (or a constructor's bad argument, ``verbs.BAD_ARGS``)
#: may set only for an adapter with the feature of the same name: the adapter
#: hands them to the implementation (``teardown_timeout``: the components'
#: teardown bound, which the oracles then judge against)
SPEC_FEATURES = ("teardown_timeout", "minimal_build", "seed")


@dataclass(frozen=True)
class Spec:
    """Everything an adapter needs to build the components of a scenario."""

    #: a gymnasium env id; for a collector also a tuple, one id per actor
    env_id: str | tuple = "CartPole-v1"
    #: the frames of every batch the collector yields (``batch_size``); with
    #: ``sync`` the whole batch's, split across the actors (``sync_division``)
    frames_per_batch: int = 64
    #: the collector's budget (``frame_budget``): iteration ends once that
    #: many frames were collected and the collector shuts itself down; -1:
    #: no budget, until the user's loop breaks (``endless``)
    total_frames: int = 512
    #: how many collector actors
    num_collectors: int = 2
    #: one batch from every actor per iteration (``sync``), or first ready,
    #: first served (``async``)
    sync: bool = False
    buffer_capacity: int = 100_000
    #: the step bound of one evaluation (``submit``'s)
    eval_max_steps: int = 50
    #: component -> Ray actor options for each of its actors, merged over the
    #: adapter's own small requests: ``num_cpus``, ``num_gpus`` and
    #: ``resources`` (custom resources: ``{"node_a": 1}`` places it on a node
    #: of the multinode fixture, ``{"rlc_infeasible": 1}`` on none). The keys
    #: are ``ray.actor.ActorClass.options``'s; an adapter translates them to
    #: the implementation's own settings (RLlib: ``num_cpus_per_env_runner``...)
    resources: dict = field(default_factory=dict)
    actor_name: str | None = None
    namespace: str = "rlc-conformance"
    #: how a ``user``-owner driver (and its peer) calls ray.init: "namespace"
    #: (``namespace=spec.namespace``, one namespace for every driver of the
    #: scenario) or "bare" (``ray.init()``, as most users write it: each driver
    #: gets an anonymous namespace). The harness's, not the adapter's.
    ray_init: str = "namespace"
    ready_timeout: float | None = 60.0
    #: the collector's policy: None, the adapter's usual one (random actions);
    #: "module", a ``conformance.policies.CartPolePolicy()``, an nn.Module whose
    #: weights the ``weights`` verb replaces (feature ``weights``); "tdmodule",
    #: the same wrapped as torchrl users write policies, a TensorDictModule
    #: (``conformance.policies.CartPoleTDPolicy``); "function", a plain function
    #: returning a Python int (``conformance.policies.CartPoleFunctionPolicy``)
    policy: str | None = None
    teardown_timeout: float = 10.0
    #: build every component as a user copying its docstring would: the
    #: arguments a scenario needs (env, frames, number of actors, buffer,
    #: name) and nothing else: no actor options or resources (``resources``,
    #: placement, the adapter's own small CPU requests, ``num_gpus=0``), no
    #: timeouts, no ``ray_init_config``. Whatever the implementation then
    #: does on a CPU-only cluster is what the suite judges.
    defaults: bool = False
    #: build the collector with only what its constructor requires of the
    #: scenario (env, policy, ``frames_per_batch``, the buffer), the suite's
    #: actor options and bounds as always: its ``total_frames``, ``sync`` and
    #: ``num_collectors`` are the implementation's own defaults, which the
    #: contract expects to give an endless collector (``endless``: the
    #: user's loop decides when to stop) that builds and works (feature
    #: ``minimal_build``; torchrl's documented defaults: total_frames=-1,
    #: sync=False, one actor per env)
    minimal_build: bool = False
    #: the collector's seed (feature ``seed``): two collectors built with one
    #: seed, whose policy is the action space's random actions, yield the same
    #: batches (``seeded_batches_repeat``); None: no seed passed
    seed: int | None = None

    @classmethod
    def for_scenario(cls, scenario) -> "Spec":
        """The defaults, with what the scenario sets (``Scenario.spec``)."""
        return cls(**{**cls().to_dict(), **scenario.spec})

    def with_(self, **changes) -> "Spec":
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)


class Adapter:
    """Base adapter. Defaults assume a torchrl-like API; override what differs.

    Component objects are whatever the implementation's constructors return.
    Every method here is called from the isolated driver process. The
    ``make_*`` methods honour :attr:`Spec.defaults` (the ``defaults`` family:
    pass the implementation nothing it has a default for).

    Several instances (feature ``instances``, docs/instances.md): a scenario
    may build two or three components of one kind (targets ``collector``,
    ``collector.2``, ...). Each ``make_*`` call must build a new, independent
    component (``make_collector`` gets the buffer instance it writes into);
    the other methods get the kind (``"collector"``) and the object, and
    must keep nothing per kind (state kept per object, e.g. keyed by
    ``id(obj)``, is fine). A named eval worker's name comes in
    ``spec.actor_name``, different per instance unless the scenario asks two
    instances for the same name (the second construction must then fail).
    The script methods write against the kinds' variable names
    (``collector``, ``buffer``); the script binds them to the instance an
    operation works on.
    """

    name = "base"
    features: frozenset = frozenset()
    #: exception types that mean "this component is closed"
    closed_errors: tuple = ()
    #: seconds a teardown may take (the contract's bound)
    teardown_bound: float = 10.0
    #: what the implementation documents of a component left to its defaults
    #: (the ``documented_defaults`` convention, ``oracles.defaults_as_documented``):
    #: kind -> ``{"actor_resources": {Ray resource: amount}}``, what each actor
    #: holds when built without actor options, zeros left out (``{}``: nothing,
    #: an actor with ``num_cpus=0``), and for ``"collector"`` also ``"actors"``:
    #: how many a collector built with neither ``num_collectors`` nor a list of
    #: env ids starts; ``"ready_timeout"``: the seconds a build waits for its
    #: actors to start before it gives up (None: it does not wait;
    #: ``oracles.ready_bound_as_documented``, on a busy cluster). Literal values
    #: from the implementation's documentation,
    #: not read from its code (a changed default must show). None: none documented
    documented_defaults: dict | None = None
    #: the implementation's Python loggers (each with its children): what they
    #: log at WARNING or above in the driver is recorded per op
    #: (``conformance.ops.log_capture``); the ``logs_unraised_errors``
    #: convention is judged on it
    log_names: tuple = ()
    #: the pip requirement name of the implementation (``torchrl``,
    #: ``ray[rllib]``): what ``bisect`` and the release matrix install at
    #: each version; None for code that is not a released package
    package: str | None = None
    #: modules of the implementation the zygote imports once, so that every
    #: driver (a fork of it) starts warm; an adapter whose constructors import
    #: something heavy names it here (the zygote already has torch, ray,
    #: tensordict and gymnasium)
    preload: tuple = ()

    # -- construction -------------------------------------------------------
    def make_buffer(self, spec: Spec):
        raise NotImplementedError

    def make_collector(self, spec: Spec, buffer=None):
        raise NotImplementedError

    def make_evaluator(self, spec: Spec):
        raise NotImplementedError

    def connect_evaluator(self, spec: Spec):
        """A non-owning handle to the named eval worker ``spec.actor_name``."""
        raise NotImplementedError

    # -- teardown -----------------------------------------------------------
    def teardown(self, component: str, obj, shutdown_ray: bool = False) -> None:
        """``shutdown()`` / ``close()``. When it returns, the component's actors
        are DEAD in the GCS and the resources they held are back in
        ``ray.available_resources()`` (``ray.kill`` is asynchronous: an
        implementation waits for both, bounded), so that a component built
        right after finds them free; judged at return, not after a wait
        (``own_actors_dead_after_teardown``, ``resources_released_at_teardown``).
        ``shutdown_ray=True`` asks to end a Ray runtime the implementation
        started: deferred while another component still holds it, done when
        the last one is torn down (``owned_runtime_ended``), never on a
        runtime the user started."""
        if component == "collector":
            if shutdown_ray:
                obj.shutdown(shutdown_ray=True)
            else:
                obj.shutdown()
        elif component == "buffer":
            obj.close()
        else:
            obj.shutdown()

    async def async_teardown(self, component: str, obj, shutdown_ray: bool = False) -> None:
        """Await the collector's coroutine teardown (``async_shutdown``), as
        asyncio code does; the harness runs it in an event loop that goes on
        after it (``conformance.ops.coroutine_teardown``). When the await
        returns, what ``teardown`` promises holds."""
        if shutdown_ray:
            await obj.async_shutdown(shutdown_ray=True)
        else:
            await obj.async_shutdown()

    def exit_block(self, component: str, obj, exc_type, exc, tb):
        """Leave a ``with`` block around the component (``context_manager``):
        ``obj.__exit__(exc_type, exc, tb)``, its return value Python's (a true
        value swallows the block's error)."""
        return obj.__exit__(exc_type, exc, tb)

    # -- verbs ----------------------------------------------------------------
    def iterate(self, collector):
        """An iterator of batches, until ``total_frames`` (``frame_budget``;
        without end for -1, ``endless``). A batch is what the implementation
        yields: something with ``numel()`` (a TensorDict: its frames), a list
        of RLlib episode chunks, or, in buffer mode (``buffer_mode``: the
        batches go into the buffer), the number of frames written or None
        (``conformance.ops.verbs.frames_of`` counts them; None: not counted)."""
        return iter(collector)

    def start(self, collector) -> None:
        collector.start()

    def update_weights(self, collector, weights, workers=None) -> None:
        """Send ``weights`` (an nn.Module, a TensorDict or a nested dict of
        tensors: ``conformance.policies.weights_of``) to the collector's actors,
        every one or the indices ``workers`` (an int or a list); return once
        they hold them (feature ``weights``)."""
        if workers is None:
            collector.update_policy_weights_(weights)
        else:
            collector.update_policy_weights_(weights, worker_ids=workers)

    def sample(self, buffer, batch_size):
        """``batch_size`` rows drawn from the buffer (passed on as given: the
        ``call_arguments`` family gives 0 and 2.5, which must be refused), as a TensorDict (or a
        mapping of arrays, nested for ``("next", ...)``, the row first) with
        ``("next", "reward")`` and, where the buffer keeps them,
        ``observation`` and ``("next", "observation")``: ``data_kept`` reads
        them to tell a written row from a slot nothing filled
        (``conformance.ops.samples``); an adapter whose buffer returns another
        shape converts it here."""
        return buffer.sample(batch_size)

    def extend(self, buffer, data) -> None:
        """``data`` is a TensorDict of n rows, ``batch_size=[n]``, with the keys
        a CartPole collector writes (``observation``, ``action``, and
        ``("next", ...)``: ``observation``, ``reward``, ``done``, ``terminated``,
        ``truncated``); an adapter whose buffer takes another shape converts it
        here. After it the buffer holds n more frames (up to its capacity)."""
        buffer.extend(data)

    def add(self, buffer, row) -> None:
        """``row`` is one transition, a TensorDict of ``batch_size=[]`` with
        ``extend``'s keys (feature ``buffer_add``). After it the buffer holds
        one more frame."""
        buffer.add(row)

    def buffer_len(self, buffer) -> int:
        return len(buffer)

    def submit(self, evaluator, spec: Spec) -> None:
        """Start one evaluation of at most ``spec.eval_max_steps`` steps and
        return at once (``async_eval``; without it an adapter records the
        request and ``poll`` runs it)."""
        evaluator.submit(self.eval_weights(evaluator), spec.eval_max_steps)

    def eval_weights(self, evaluator):
        """Weights passed to ``submit``; ``None`` unless the impl needs them."""
        return None

    def poll(self, evaluator, timeout: float):
        """The result of the evaluation ``submit`` started, or None when it is
        not done within ``timeout`` seconds (never an exception for "not yet":
        an adapter whose implementation raises one returns None here).
        Without ``async_eval`` an adapter may run the evaluation here."""
        return evaluator.poll(timeout)

    def episode(self, result) -> dict | None:
        """The episode a ``poll`` result reports (``eval_episode``):
        ``{"steps": int, "return": float}``, or None when ``result`` does not
        say (then ``eval_episode_consistent`` judges it unknown). This default
        reads the reference's result, a mapping with ``steps`` and ``reward``
        (the episode's return); an adapter whose result says it otherwise
        converts it here."""
        from collections.abc import Mapping

        if isinstance(result, Mapping) and {"steps", "reward"} <= set(result):
            return {"steps": result["steps"], "return": result["reward"]}
        return None

    def is_alive(self, component: str, obj) -> bool:
        return obj.is_alive()

    # -- introspection --------------------------------------------------------
    def actors(self, component: str, obj) -> list:
        """The Ray actor handles a component created (used for faults/probes)."""
        raise NotImplementedError

    def versions(self) -> dict:
        """Versions of what is under test, for the report."""
        return {}

    # -- standalone scripts (optional: ``python -m conformance script``) ------------
    # An adapter that implements the three writes a reproduction script of any
    # scenario, calling the implementation as the adapter does; the helpers in
    # ``conformance.adapters.snippets`` build the common shapes. The harness writes the
    # lines of its own verbs (kill, ray_shutdown, ...: ``Verb.script``).
    def script_header(self) -> list[str]:
        """Imports and module-level helpers the operations' lines use."""
        raise NotImplementedError

    def script_actors(self, component: str) -> str:
        """An expression: the actor handles of ``component`` (a kind; a
        variable of that name holds the instance)."""
        raise NotImplementedError

    def script_lines(self, op, spec: Spec) -> list[str] | None:
        """Body lines of one implementation verb (construct, teardown, iterate,
        ...), ``op.target`` a kind (the lines use the kinds' variables); None:
        this adapter has no lines for it (the op becomes a comment)."""
        raise NotImplementedError

    @property
    def writes_scripts(self) -> bool:
        cls = type(self)
        return all(getattr(cls, m) is not getattr(Adapter, m)
                   for m in ("script_header", "script_actors", "script_lines"))

    def unsupported(self, requires) -> list[str]:
        return [r for r in requires if r not in self.features]

    @property
    def components(self) -> tuple[str, ...]:
        """The components the implementation has, in the catalog's order:
        the collector; the buffer with the ``buffer`` feature, the eval worker
        with the ``evaluator`` feature. A scenario written for all three runs
        with these (its id says which it lacks); one about a missing
        component does not exist."""
        return tuple(c for c in ("buffer", "collector", "evaluator")
                     if c == "collector" or c in self.features)
