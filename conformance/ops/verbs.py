"""The operation vocabulary: each verb declared once, with what it does and
who answers for it.

Every function takes the driver context and an :class:`~conformance.ops.scenario.Op`
and returns a JSON-ready result dict, or raises: the driver records either.
Verbs never judge; the oracles do. ``party`` says whose failure a raise is:
``impl`` verbs call the implementation (or Ray, as the user does), so an
unexpected raise is the implementation's ``fail``; ``harness`` verbs are the
suite's own fault injections and probes, so a raise is an ``error`` verdict
(the scenario was not observed as written), never a pass, never the
implementation's failure.

Beside how it runs, a verb declares what the rest of the suite asks of it
(see :class:`Verb`): its script forms, its ``use`` call, and its rule in a
random walk; the walk model, ``snippets``, the script writer and the driver
read those declarations instead of testing verb names.
"""
from __future__ import annotations

import gc
import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Callable

from conformance.adapter import SPEC_FEATURES, Spec
from conformance.ops.budgets import INIT_DEADLINE, PEER_DEADLINE
from conformance.ops.history import describe_error
from conformance.ops.samples import sampled_rows
from conformance.ops.transitions import batch_steps
from fixtures.harness_threads import Call, call_within, start_harness_thread
from conformance.ops.targets import actor_name, at_once, kind_of, writes_into

IMPL, HARNESS = "impl", "harness"


DEFAULT_DEADLINE = 90.0


@dataclass(frozen=True)
class Verb:
    """One verb, declared once: how it runs and who answers for it, what it
    needs, how long it may take, how the harness probes after it, and its
    form in a standalone script."""

    name: str
    run: Callable
    party: str
    doc: str
    #: op -> True when the scenario expects (or allows) this op to raise
    expects_raise: Callable = lambda op: False
    #: op -> adapter features the op needs; lacking one, the scenario is
    #: skipped with the reason (an op on the eval worker needs "evaluator")
    needs: Callable = lambda op: ()
    #: an adapter feature this verb needs but the scenario can do without
    #: (or op -> that feature, None: none for this op): lacking it, the op is
    #: recorded "unsupported" and the scenario goes on; only the oracles in
    #: ``unchecks`` report "not checked" (degrade, don't skip)
    optional_feature: str | Callable | None = None
    unchecks: tuple = ()
    #: (op, adapter, spec) -> seconds after which the op counts as hung
    deadline: Callable = lambda op, adapter, spec: DEFAULT_DEADLINE
    #: op -> the seconds the call itself promises to return within (its
    #: ``timeout`` argument), or None: judged by ``calls_within_timeout``
    timeout_of: Callable = lambda op: None
    #: the probe after it reads every component's actor states ...
    probes_actors: bool = False
    #: ... and first waits (bounded) for the target's own actors to be dead
    settles: bool = False
    #: the op ends its target: the driver reads the target's actors and the
    #: cluster's resources just before it and again at its return, before any
    #: settle wait (``resources_released_at_teardown``: judged at return)
    releases: bool = False
    #: (op, writer) -> the op's body lines in a standalone script, for the
    #: verbs the harness writes itself; None: the adapter writes them
    #: (``Adapter.script_lines``). Raises ``NoScript`` for what a script cannot do.
    script: Callable | None = None
    #: (ops) -> what a standalone script defines at module level for these ops
    #: of the verb, each a line of code or a module-level function (its source
    #: is written); [] when none of them needs anything
    script_header: Callable = lambda ops: []
    #: (ops) -> lines a standalone script runs right after ``import ray``, before
    #: the implementation's import (a name bound as a module imported first would)
    script_prelude: Callable = lambda ops: []
    #: (op, api) -> the op's body lines through a torchrl-like API
    #: (``conformance.adapters.snippets.default_lines``: ``api`` holds the
    #: adapter's spec and its ``submit`` and buffer ``length`` expressions);
    #: None: no default, the adapter writes its own or none
    api_script: Callable | None = None
    #: the op builds its target: the driver and the scripts know the target
    #: only from then on
    builds: bool = False
    #: the op works on the buffer its target (a collector instance) writes
    #: into: a script binds ``buffer`` to that one
    on_written_buffer: bool = False
    #: result -> the error of a call the op caught and recorded in its result
    #: (teardown's ``calls``): the op then counts as raised with it
    inner_error: Callable = lambda result: None
    #: what ``use`` and ``check_error`` call after this verb's name (:class:`Use`)
    use: Use | None = None
    #: the verb as a rule of a random walk (:class:`WalkRule`); None: walks never use it
    walk: WalkRule | None = None


@dataclass(frozen=True)
class Use:
    """A verb as a call after teardown (``use(call=name)``, ``check_error``):
    ``run(ctx, obj)`` the call as the driver makes it, ``expr(api)`` the same
    call as an expression of a standalone script through a torchrl-like API
    (``api`` as in ``Verb.api_script``; None: that API has none)."""

    name: str
    run: Callable
    expr: Callable


@dataclass(frozen=True)
class WalkRule:
    """A verb as a rule of a random walk (``conformance.catalog.walks``), as a
    Hypothesis ``@rule`` with its ``@precondition``: ``propose(model)`` lists
    ``(weight, target, args)`` for each op whose precondition holds in the
    model's state (empty: none does), in an order fixed by the model alone;
    ``effect(model, op)`` updates that state once the op is chosen. The
    model has ``comps``, ``owner``, the sets ``built``, ``closed``,
    ``killed``, the flags ``ray_up``, ``started``, ``buffer_mode``,
    ``written``, ``hung``, and ``open(comp)``, ``usable(comp)``,
    ``place_args(comp)``. ``draw(args, rng)`` makes the op's own random
    choices once it is chosen; ``then(op)`` lists the ``(verb, target,
    args)`` that follow it at once; ``when_hung``: the rule still applies
    once an actor hangs (anything else may wait forever)."""

    propose: Callable
    effect: Callable = lambda model, op: None
    draw: Callable | None = None
    then: Callable = lambda op: ()
    when_hung: bool = False


VERBS: dict[str, Verb] = {}


def verb(party: str, doc: str, expects_raise: Callable = lambda op: False, **declared):
    """Declare the decorated function as a verb (see :class:`Verb`)."""
    def register(func):
        VERBS[func.__name__] = Verb(func.__name__, func, party, doc, expects_raise, **declared)
        return func
    return register


def deadline_of(op, adapter, spec) -> float:
    return VERBS[op.verb].deadline(op, adapter, spec)


def use_calls() -> dict[str, Use]:
    """The calls ``use`` and ``check_error`` make, by name (``Verb.use``)."""
    return {v.use.name: v.use for v in VERBS.values() if v.use is not None}


def optional_feature_of(op) -> str | None:
    """The feature ``op`` can do without (``Verb.optional_feature``)."""
    feature = VERBS[op.verb].optional_feature
    return feature(op) if callable(feature) else feature


def needs_of(op) -> set:
    """The adapter features ``op`` needs (``verb.needs``, and ``evaluator``
    for an op on an eval worker, whichever instance)."""
    return set(VERBS[op.verb].needs(op)) | (
        {"evaluator"} if kind_of(op.target) == "evaluator" else set())


def scenario_needs(ops) -> set:
    """What a sequence of ops needs beyond each op's own needs: ``instances``
    when two instances of one kind are open at once."""
    return {"instances"} if at_once(ops) else set()


class NoScript(Exception):
    """A standalone script cannot do this op (the reason is the message)."""


def _fails_on_purpose(op) -> bool:
    return bool(op.args.get("fail"))


def _may_fail(op) -> bool:
    """The scenario expects (``fail``) or allows (``may_fail``) this op to raise."""
    return bool(op.args.get("fail") or op.args.get("may_fail"))


def _surfaces_error(op) -> bool:
    """The op must raise the error of the work behind it (``cause``: judged by
    ``errors_surface``), or may raise (``_may_fail``)."""
    return bool(op.args.get("cause")) or _may_fail(op)


def _construct_needs(op) -> set:
    a, out = op.args, set()
    if kind_of(op.target) == "collector":
        out.add("sync" if a.get("sync") else "async")
        if a.get("buffer"):
            out.add("buffer_mode")
        if a.get("fail") == "one_unknown_env" or a.get("per_actor_envs"):
            out.add("per_actor_envs")
    if a.get("named"):
        out.add("named_evaluator")
    if a.get("infeasible") or a.get("fill") or a.get("restarts"):  # a request no node meets,
        # its CPUs, or actors Ray restarts
        out.add("actor_options")
    fail = a.get("fail") or ""
    if fail.startswith("invalid:"):  # a bad value of a field only such an adapter passes on
        bad = BAD_ARGS[fail.split(":", 1)[1]]
        out |= {f for f in SPEC_FEATURES if f in bad}
        if isinstance(bad.get("env_id"), tuple):
            out.add("per_actor_envs")
    return out


class HarnessError(RuntimeError):
    """The harness could not do what the scenario says (e.g. inject a fault).
    Raised by any verb, an ``impl`` one too, it is the harness's failure
    (``raised_by_harness``)."""


def raised_by_harness(record: dict) -> bool:
    """An op record (``end``) whose raise is the harness's: a ``harness``
    verb's, or a :class:`HarnessError` from any verb (an ``impl`` verb's own
    setup: a construct whose node's CPUs the harness could not read)."""
    if record.get("status") != "raised":
        return False
    v = VERBS.get(record["op"]["verb"])
    return (v is not None and v.party == HARNESS) or \
        (record.get("error") or {}).get("type") == f"{__name__}.{HarnessError.__qualname__}"


INFEASIBLE = {"resources": {"rlc_infeasible": 1}}
#: the env id no registry holds (``fail=unknown_env``, ``one_unknown_env``)
UNKNOWN_ENV_ID = "RlcNoSuchEnv-v0"
BAD_ARGS = {
    "frames_per_batch": {"frames_per_batch": 0},
    "total_frames": {"total_frames": -2},  # the boundary: -1 means endless, below is refused
    "sync_divisible": {"sync": True, "num_collectors": 2, "frames_per_batch": 63},
    "num_collectors": {"num_collectors": 0},
    "capacity": {"buffer_capacity": 0},
    # a count that is not an integer (a user's `n / 4`): refused, never rounded or
    # failing later inside an actor
    "fractional_frames_per_batch": {"frames_per_batch": 2.5},
    "fractional_capacity": {"buffer_capacity": 2.5},
    # one env id per actor (feature per_actor_envs), one id too many
    "env_ids_count": {"env_id": ("CartPole-v1",) * 3, "num_collectors": 2},
    # a negative teardown bound (feature teardown_timeout): 0 is a valid one
    "teardown_timeout": {"teardown_timeout": -1.0},
}
KILL_HOWS = ("ray_kill", "sigkill", "exit", "hang", "remove_node")
#: faults that only make sense while a call is in flight (``kill(during=...)``):
#: ``step_hang`` makes the env of a call that is stepping it hang for good
#: (the scenario's env must be ``conformance.envs:RlcHangableCartPole-v0``)
IN_FLIGHT_HOWS = ("step_hang",)
#: seconds a kill waits for its target to be ALIVE (scheduled, with a process)
KILL_WAIT_ALIVE = 30.0
#: seconds a kill waits to see its effect (the process gone, the actor not ALIVE)
KILL_VERIFY = 10.0
#: seconds a hang's sleeping call must stay unreturned before the kill op returns
HANG_CONFIRM = 1.0


def _spec_for(ctx, op):
    """The spec of a construct op: placement, infeasibility, failure knobs,
    an instance's own total_frames and name. ``Spec.resources`` is keyed by
    kind: the adapter builds one component of that kind from it."""
    a = op.args
    spec = ctx.spec
    kind = kind_of(op.target)
    resources = dict(spec.resources)
    if a.get("place"):
        resources[kind] = {"resources": {a["place"]: 1}}
    if a.get("infeasible"):
        resources[kind] = INFEASIBLE
    if a.get("fill"):  # its actors take every CPU of their node between them (True), or
        # that share of them (a number: two components of 0.5 fill it together)
        actors = spec.num_collectors if kind == "collector" else 1
        share = 1.0 if a["fill"] is True else float(a["fill"])
        resources[kind] = {**resources.get(kind, {}),
                           "num_cpus": ctx.node_cpus(a.get("place")) * share / actors}
    if a.get("restarts"):  # Ray restarts a dead actor that many times, unless killed for good
        resources[kind] = {**resources.get(kind, {}), "max_restarts": int(a["restarts"])}
    changes = {"resources": resources}
    if "sync" in a:
        changes["sync"] = bool(a["sync"])
    if "total_frames" in a:
        changes["total_frames"] = int(a["total_frames"])
    if a.get("ready") is False:
        changes["ready_timeout"] = None
    if a.get("policy"):  # a collector whose weights the scenario sends (``weights``)
        changes["policy"] = a["policy"]
    fail = a.get("fail")
    if fail == "unknown_env":
        changes["env_id"] = UNKNOWN_ENV_ID
    elif fail == "one_unknown_env":  # one healthy actor that must not outlive the error
        changes.update(env_id=(spec.env_id, UNKNOWN_ENV_ID), num_collectors=2)
    elif a.get("per_actor_envs"):  # the same shape, every env healthy: it must build;
        # an env id as the value: the first actor's env (a slow one before a fast one)
        first = a["per_actor_envs"] if isinstance(a["per_actor_envs"], str) else spec.env_id
        changes.update(env_id=(first, spec.env_id), num_collectors=2)
    elif fail and fail.startswith("invalid:"):
        changes.update(BAD_ARGS[fail.split(":", 1)[1]])
    if a.get("named"):
        changes["actor_name"] = actor_name(ctx.actor_name, a["named"])
    return spec.with_(**changes)


def _construct_proposals(model) -> list:
    out = []
    for comp in model.comps:
        if comp not in model.built and model.ray_up:
            args = dict(model.place_args(comp))
            if comp == "collector" and model.usable("buffer"):
                args["buffer"] = True
            out.append((3, comp, args))
    return out


def _constructed(model, op) -> None:
    model.built.add(op.target)
    model.buffer_mode |= bool(op.args.get("buffer"))


def _policy_helpers(ops) -> list:
    """What a script defines for a collector built with a policy module and the
    weights sent to it (``conformance.policies``): once, whichever verbs need it."""
    if not ops:
        return []
    from conformance.policies import HELPERS  # imports torch: only for such a scenario

    return list(HELPERS)


@verb(IMPL, "build a component instance (args: sync, buffer: True or the buffer instance "
            "a collector writes into, fail, may_fail, place, named: True or a second name's "
            "suffix, ready, connect, infeasible, per_actor_envs (True, or the first actor's "
            "env id), total_frames: this "
            "instance's, fill: its actors take all the CPUs of their node (or a share: 0.5), policy: "
            "\"module\", a collector running conformance.policies.CartPolePolicy; restarts: N, its "
            "actors created with max_restarts=N; thread: True, built from a thread of the "
            "user's that ends once the build returned, as a thread pool's worker or "
            "asyncio.to_thread's does; with wait=False the op only starts that thread, so the "
            "next ops' builds run at once with it, and join_build waits for it)", _may_fail,
      needs=_construct_needs,
      deadline=lambda op, adapter, spec: (spec.ready_timeout or 30.0) + 60.0,
      probes_actors=True, builds=True,
      script_header=lambda ops: _policy_helpers([o for o in ops if o.args.get("policy")]),
      walk=WalkRule(_construct_proposals, _constructed))
def construct(ctx, op):
    if op.args.get("thread") and op.args.get("wait") is False:  # join_build waits for it
        ctx.pending_builds[op.target] = Call(lambda: _construct(ctx, op),
                                             f"rlc-user-build-{op.target}")
        return {"started": True}  # join_build's probe records the actors it created
    if op.args.get("thread"):
        # Ray's processes started from a thread die when that thread ends (Linux's
        # PR_SET_PDEATHSIG is per thread): an ended thread is what the build must outlive
        call_within(lambda: _construct(ctx, op), deadline_of(op, ctx.adapter, ctx.spec),
                    "rlc-user-build-thread")
    else:
        _construct(ctx, op)
    ctx.note_ray_started()
    return {}  # the probe after it records the actors it created


def _join_build_script(op, w) -> list[str]:
    return [f"return _join_build({op.target!r})"]


@verb(IMPL, "wait for the build that construct(thread=True, wait=False) started: the "
            "builds started before it ran at once; its error is raised here",
      deadline=lambda op, adapter, spec: (spec.ready_timeout or 30.0) + 60.0,
      probes_actors=True, builds=True, script=_join_build_script)
def join_build(ctx, op):
    build = ctx.pending_builds.pop(op.target)  # one there: Scenario refuses a join without it
    try:
        build.result()  # bounded by the op's deadline; the build's error is raised here
    finally:
        ctx.note_ray_started()
    return {}  # the probe after it records the actors the build created


def _construct(ctx, op) -> None:
    spec = _spec_for(ctx, op)
    adapter = ctx.adapter
    kind = kind_of(op.target)
    if kind == "buffer":
        obj = adapter.make_buffer(spec)
    elif kind == "collector":
        into = writes_into(op)
        buffer = ctx.objects.get(into) if into else None
        if into and buffer is None:
            raise RuntimeError(f"scenario error: collector writes into {into}, never built")
        obj = adapter.make_collector(spec, buffer)
    elif op.args.get("connect"):
        obj = adapter.connect_evaluator(spec)
        ctx.connected.add(op.target)
    else:
        obj = adapter.make_evaluator(spec)
    ctx.objects[op.target] = obj


def frames_of(batch) -> int | None:
    """Frames in one yielded item: a TensorDict's numel, the frames of a list
    of episode chunks (RLlib's ``sample()``: ``len()`` of each is its
    env steps), or the frame count a buffer-mode collector yields (None: not
    measurable, e.g. torchrl's None)."""
    if hasattr(batch, "numel"):
        return int(batch.numel())
    if isinstance(batch, list) and all(hasattr(chunk, "env_steps") for chunk in batch):
        return sum(len(chunk) for chunk in batch)
    if isinstance(batch, int) and not isinstance(batch, bool):
        return batch
    return None


def actions_of(batch) -> list[list[int]] | None:
    """The distinct actions of a batch, per actor: one list per row of a sync
    batch (``[num_collectors, frames]``: row i is actor i's), one list for any
    other TensorDict; None when the batch has no ``action`` entry."""
    if not hasattr(batch, "batch_dims") or "action" not in batch.keys():
        return None
    action = batch["action"]
    rows = action.reshape(action.shape[0], -1) if batch.batch_dims == 2 else action.reshape(1, -1)
    return [sorted({int(a) for a in row.tolist()}) for row in rows]


#: the entries of a batch whose bytes ``digest_of`` reads: what the envs and
#: the policy made (not a collector's own bookkeeping, ``collector``/``traj_ids``)
DIGEST_KEYS = ("observation", "action", ("next", "observation"), ("next", "reward"))


def digest_of(batch) -> str | None:
    """A short hash of a batch's ``DIGEST_KEYS`` (their shapes, dtypes and
    bytes, in that order); None for a batch that is no TensorDict, lacks one
    of them or cannot be read as arrays (never raises: a reading of the
    harness's is never blamed on the implementation's call)."""
    import hashlib

    if not hasattr(batch, "batch_dims"):
        return None
    h = hashlib.sha256()
    try:
        for key in DIGEST_KEYS:
            value = batch.get(key, None)
            if value is None:
                return None
            array = value.detach().cpu().contiguous().numpy()
            h.update(f"{key}{array.shape}{array.dtype}".encode())
            h.update(array.tobytes())
    except Exception:  # noqa: BLE001 - e.g. a dtype numpy cannot take: unknown, not the call's
        return None
    return h.hexdigest()[:16]


def _count(ctx, items, limit=None, read_actions=False, digest=False, times=False) -> dict:
    """The batches and frames the collector yielded, each batch's frames
    (``sizes``: None where not measurable), with ``transition_batches`` what
    each batch's steps say (``steps``: ``transitions.batch_steps``), with
    ``read_actions`` each batch's actions, with ``digest`` each batch's
    ``digest_of``, with ``times`` the seconds from the call to each batch."""
    read_steps = "transition_batches" in ctx.adapter.features
    n, frames, sizes, steps, actions, digests, at = 0, 0, [], [], [], [], []
    t0 = time.monotonic()
    for batch in items:
        at.append(round(time.monotonic() - t0, 4))
        n += 1
        f = frames_of(batch)
        sizes.append(f)
        frames = None if f is None or frames is None else frames + f
        reading = batch_steps(batch) if read_steps else None
        if reading is not None:
            steps.append({"batch": n, **reading})
        if read_actions:
            actions.append(actions_of(batch))
        if digest:
            digests.append(digest_of(batch))
        if limit is not None and n >= limit:
            break  # an early break, as a user's loop does
    return {"batches": n, "frames": frames, "sizes": sizes,
            **({"steps": steps} if read_steps else {}),
            **({"actions": actions} if read_actions else {}),
            **({"digests": digests} if digest else {}),
            **({"times": at} if times else {})}


def _iterate_script(op, api) -> list[str]:
    k = int(op.args.get("batches", 1))
    if k <= 0:
        return ["# batches=0: the collector is never iterated",
                "return '0 batches'"]
    note = ([f"# the env fails midway ({op.args['cause']}): this must raise, naming it"]
            if op.args.get("cause") else [])
    if op.args.get("read_actions"):  # a sync batch: one row per actor
        return [*note, "n, seen = 0, []",
                "for batch in collector:",
                "    n += 1",
                "    rows = batch['action'].reshape(batch.batch_size[0], -1)",
                "    seen.append([sorted(set(row.tolist())) for row in rows])",
                f"    if n >= {k}:",
                "        break  # an early break, as a user's loop does",
                "return f'{n} batches; the actions of each actor, per batch: {seen}'"]
    return [*note, "n = 0",
            "for _ in collector:",
            "    n += 1",
            f"    if n >= {k}:",
            "        break  # an early break, as a user's loop does",
            "return f'{n} batches'"]


def _iterated(model, op) -> None:
    model.written |= model.buffer_mode


@verb(IMPL, "iterate a collector k batches, then break (args: batches, may_fail: an "
            "actor is killed meanwhile, so a clear error is allowed; cause: the env "
            "fails midway, so it must raise, naming that cause; read_actions: record each "
            "batch's distinct actions per actor, which weights_take_effect judges; digest: "
            "record a hash of each batch's observations, actions and rewards, which "
            "seeded_batches_repeat judges; within: seconds from the first batch to the k-th, "
            "which ready_batches_not_held_back judges: each batch's time is recorded)",
      _surfaces_error,
      api_script=_iterate_script,
      use=Use("iterate", lambda ctx, o: next(iter(ctx.adapter.iterate(o))),
              lambda api: "next(iter(collector))"),
      walk=WalkRule(lambda m: [(3, "collector", {"batches": 1})]
                    if m.usable("collector") and not m.started else [], _iterated))
def iterate(ctx, op):
    batches = int(op.args.get("batches", 1))
    if batches <= 0:
        return {"batches": 0, "frames": 0}
    return _count(ctx, ctx.adapter.iterate(ctx.objects[op.target]), batches,
                  bool(op.args.get("read_actions")), bool(op.args.get("digest")),
                  times="within" in op.args)


#: the exhaust verb's deadline on CartPole-v1: EXHAUST_BASE s plus
#: EXHAUST_PER_FRAME s for each of spec.total_frames. The slowest exhaust of
#: the default 512 frames in the committed results took 7.9 s (torchrl 0.10.1,
#: multinode, buffer mode: 15 ms a frame; reference 0.2 s, RLlib 1.6 s,
#: Tianshou 1.3 s, torchrl 0.14.1 under load 5.6 s), so 512 frames get 55.6 s.
#: It was a fixed 180 s: a mutant whose exhaust never ends held the CI sample
#: that long (collector.py:142, 2026-11-27).
EXHAUST_BASE = 30.0
EXHAUST_PER_FRAME = 0.05
#: the exhaust deadline of an endless budget (-1: by contract it never ends) or a
#: slower env than CartPole-v1 (conformance.envs: its steps sleep)
EXHAUST_DEADLINE_OTHERWISE = 180.0


def _exhaust_deadline(op, adapter, spec) -> float:
    spec = spec or Spec()
    if spec.total_frames < 0 or spec.env_id != "CartPole-v1":  # 0: no batch, at once
        return EXHAUST_DEADLINE_OTHERWISE
    return EXHAUST_BASE + EXHAUST_PER_FRAME * spec.total_frames


@verb(IMPL, "iterate a collector until total_frames",
      deadline=_exhaust_deadline, probes_actors=True, settles=True,
      api_script=lambda op, api: [
          "n = 0",
          f"for _ in collector:  # until total_frames={api.spec.total_frames}",
          "    n += 1",
          "return f'{n} batches'"])
def exhaust(ctx, op):
    return _count(ctx, ctx.adapter.iterate(ctx.objects[op.target]))


def _may_start(model) -> bool:
    return model.usable("collector") and not model.started and model.buffer_mode \
        and model.usable("buffer")


def _started(model, op) -> None:
    model.started = True


@verb(IMPL, "start the collector's background thread", _fails_on_purpose,
      # also when it is to fail: without the feature there is no start() to refuse
      # (RLlib's and Tianshou's full reports of 2026-11-25/27 judged their
      # AttributeError "unclear" in construction_failure/*/*/start-without-buffer)
      needs=lambda op: ("background",),
      api_script=lambda op, api: [
          "collector.start()" + (f"  # expected to fail: {op.args['fail']}"
                                 if op.args.get("fail") else "")],
      use=Use("start", lambda ctx, o: ctx.adapter.start(o), lambda api: "collector.start()"),
      walk=WalkRule(lambda m: [(1, "collector", {})] if _may_start(m) else [], _started))
def start(ctx, op):
    ctx.adapter.start(ctx.objects[op.target])
    return {}


#: seconds update_policy_weights_ may take before it counts as hung: a Linear(4, 2)
#: to at most a few actors, or the clear error of a dead one
WEIGHTS_DEADLINE = 60.0


def _weights_args(op) -> tuple:
    """(form, action, workers) of a weights op: the form the weights are
    sent in, the action of the ``CartPolePolicy`` they are the weights of,
    the actor indices they go to (None: every actor)."""
    a = op.args
    return a.get("form", "module"), int(a.get("action", 1)), a.get("workers")


def _send_weights(ctx, collector, form: str = "module", action: int = 1, workers=None) -> None:
    from conformance.policies import weights_of  # imports torch, as the driver has

    ctx.adapter.update_weights(collector, weights_of(form, action), workers)


def _weights_script(op, api) -> list[str]:
    form, action, workers = _weights_args(op)
    a = op.args
    note = ([f"# expected to fail clearly ({a['fail']}): a TypeError, no actor harmed"]
            if a.get("fail") else
            [f"# an actor is dead ({a['cause']}): this must raise, naming its death, promptly"]
            if a.get("cause") else [])
    to = "" if workers is None else f", worker_ids={workers!r}"
    return [*note, f"collector.update_policy_weights_(weights_of({form!r}, {action}){to})",
            f"return 'weights of action {action} ({form}) sent to "
            f"{'every actor' if workers is None else f'actors {workers}'}'"]


@verb(IMPL, "send policy weights to the collector's actors, update_policy_weights_ (args: "
            "form: module, tensordict or dict, or list, which must be refused (with fail); "
            "action: the action of the conformance.policies.CartPolePolicy whose weights "
            "they are, default 1; workers: an actor index or a list of them, default every "
            "actor; fail; cause: actor, one is dead, so it must raise, naming that; "
            "may_fail). The collector must be built with policy=module",
      _surfaces_error, optional_feature="weights", unchecks=("weights_take_effect",),
      deadline=lambda op, adapter, spec: WEIGHTS_DEADLINE, probes_actors=True,
      script_header=_policy_helpers, api_script=_weights_script,
      use=Use("weights", lambda ctx, o: _send_weights(ctx, o),
              lambda api: "collector.update_policy_weights_(weights_of('module', 1))"))
def weights(ctx, op):
    form, action, workers = _weights_args(op)
    _send_weights(ctx, ctx.objects[op.target], form, action, workers)
    return {"form": form, "action": action, "workers": workers}


def _wait_frames_script(op, api) -> list[str]:
    want, limit = int(op.args.get("frames", 1)), float(op.args.get("timeout", 60))
    return ["t0 = time.monotonic()",
            f"n = {api.length}",
            f"while n < {want}:",
            f"    if time.monotonic() - t0 > {limit}:",
            f"        raise TimeoutError(f'buffer holds {{n}} frames after {limit}s, wanted {want}')",
            "    time.sleep(0.05)",
            f"    n = {api.length}",
            "return f'{n} frames'"]


@verb(IMPL, "wait until the buffer holds n frames (args: frames, timeout)",
      timeout_of=lambda op: float(op.args.get("timeout", 60)), api_script=_wait_frames_script)
def wait_frames(ctx, op):
    """Poll the buffer's length until it reaches ``frames`` (bounded)."""
    from fixtures.wait import poll

    want = int(op.args.get("frames", 1))
    limit = float(op.args.get("timeout", 60))
    buffer = ctx.objects[op.target]
    # an error from the buffer ends the wait at once: it is the op's outcome
    n = poll(lambda: ctx.adapter.buffer_len(buffer), lambda n: n >= want, limit)
    if n < want:
        raise TimeoutError(f"buffer holds {n} frames after {limit}s, wanted {want}")
    return {"frames": n}


#: seconds in_ray_call waits for a thread of the implementation to be inside Ray
IN_CALL_WAIT = 30.0


def _in_ray_call_script(op, w) -> list[str]:
    return ["t0 = time.monotonic()",
            "while not (found := inside_ray()) and time.monotonic() - t0 < "
            f"{IN_CALL_WAIT}:",
            "    time.sleep(0.05)",
            "if not found:",
            f"    raise RuntimeError('no thread of the implementation entered a Ray call in "
            f"{IN_CALL_WAIT} s')",
            "return f'inside Ray: {found}'"]


def _in_ray_call_helpers(ops) -> list:
    from conformance.ops.threads import blocked_in_ray, inside_ray, ray_driver_thread

    return [ray_driver_thread, blocked_in_ray, inside_ray] if ops else []


@verb(HARNESS, "wait until a thread the implementation started is blocked in a call into "
               "Ray (its innermost frame in ray.get's or ray.wait's wait: "
               "threads.blocked_in_ray), so that the next op races that "
               "call on purpose, not by chance; records the thread and where",
      deadline=lambda op, adapter, spec: IN_CALL_WAIT + 30.0, script=_in_ray_call_script,
      script_header=_in_ray_call_helpers)
def in_ray_call(ctx, op):
    from conformance.ops.threads import inside_ray, not_the_implementations
    from fixtures.wait import poll

    skip = not_the_implementations({t["key"] for t in ctx.baseline_threads})
    found = poll(lambda: inside_ray(skip), bool, IN_CALL_WAIT)
    if not found:
        raise HarnessError(f"no thread of the implementation was blocked in a Ray call within "
                           f"{IN_CALL_WAIT} s: the race the scenario sets up did not happen")
    return {"inside": found}


@verb(IMPL, "sample a batch from the buffer (args: batch_size, as given: a bad one too; "
            "fail: empty or invalid:batch_size, the call must raise clearly)", _fails_on_purpose,
      api_script=lambda op, api: [f"data = buffer.sample({op.args.get('batch_size', 8)!r})",
                                  "return f'numel={data.numel()}'"],
      use=Use("sample", lambda ctx, o: ctx.adapter.sample(o, 4), lambda api: "buffer.sample(4)"))
def sample(ctx, op):
    """Records how many of the rows are ones nobody wrote (``samples.sampled_rows``)."""
    data = ctx.adapter.sample(ctx.objects[op.target], op.args.get("batch_size", 8))
    return {"numel": int(data.numel()) if hasattr(data, "numel") else None,
            **sampled_rows(data)}


def _batch(n: int):
    """A small CartPole-shaped batch, as a collector would write it."""
    import torch
    from tensordict import TensorDict

    return TensorDict(
        {
            "observation": torch.zeros(n, 4),
            "action": torch.zeros(n, dtype=torch.int64),
            ("next", "observation"): torch.zeros(n, 4),
            ("next", "reward"): torch.ones(n, 1),
            ("next", "done"): torch.zeros(n, 1, dtype=torch.bool),
            ("next", "terminated"): torch.zeros(n, 1, dtype=torch.bool),
            ("next", "truncated"): torch.zeros(n, 1, dtype=torch.bool),
        },
        batch_size=[n],
    )


@verb(IMPL, "write a small batch into the buffer from the driver (args: frames)",
      api_script=lambda op, api: [f"buffer.extend(_batch({int(op.args.get('frames', 8))}))"],
      use=Use("extend", lambda ctx, o: ctx.adapter.extend(o, _batch(4)),
              lambda api: "buffer.extend(_batch(4))"))
def extend(ctx, op):
    n = int(op.args.get("frames", 8))
    ctx.adapter.extend(ctx.objects[op.target], _batch(n))
    return {"frames": n}


@verb(IMPL, "write one transition into the buffer from the driver, add() (a row of "
            "batch_size [], as torchrl's ReplayBuffer.add takes it)",
      needs=lambda op: ("buffer_add",),
      api_script=lambda op, api: ["buffer.add(_batch(1)[0])"],
      use=Use("add", lambda ctx, o: ctx.adapter.add(o, _batch(1)[0]),
              lambda api: "buffer.add(_batch(1)[0])"))
def add(ctx, op):
    ctx.adapter.add(ctx.objects[op.target], _batch(1)[0])
    return {"frames": 1}


def _check_data_script(op, api) -> list[str]:
    at_least = int(op.args.get("at_least", 1))
    return [f"n = {api.length}",
            f"return f'{{n}} frames (the buffer held at least {at_least} before)'"]


def _check_data_proposals(model) -> list:
    # the buffer keeps what it held; at least one frame once an iteration wrote
    if model.usable("buffer") and (model.buffer_mode or model.started):
        return [(1, "buffer", {"at_least": int(model.written)})]
    return []


# declared before submit: a walk proposes the verbs' rules in the order declared
@verb(IMPL, "read how many frames the buffer holds; it must not be fewer than any "
            "earlier reading (args: at_least; at_most: the budget of the collector that "
            "wrote it, judged by batch_counts)", api_script=_check_data_script,
      use=Use("len", lambda ctx, o: ctx.adapter.buffer_len(o), lambda api: api.length),
      walk=WalkRule(_check_data_proposals))
def check_data(ctx, op):
    n = ctx.adapter.buffer_len(ctx.objects[op.target])
    return {"frames": n, "at_least": int(op.args.get("at_least", 1))}


#: characters of a component's repr a describe op records
REPR_KEPT = 400


@verb(IMPL, "read the component's repr(), as a debugger, a log line or a REPL shows it "
            "(judged by repr_names_state, under the convention of that name)",
      api_script=lambda op, api: [f"return repr({kind_of(op.target)})"])
def describe(ctx, op):
    return {"text": repr(ctx.objects[op.target])[:REPR_KEPT]}


@verb(IMPL, "submit an evaluation of at most spec.eval_max_steps steps to the eval worker "
            "(args: fail: invalid:eval_max_steps, the call must raise clearly)", _fails_on_purpose,
      api_script=lambda op, api: None if api.submit is None else [api.submit],
      use=Use("submit", lambda ctx, o: ctx.adapter.submit(o, ctx.spec), lambda api: api.submit),
      walk=WalkRule(lambda m: [(2, "evaluator", {})] if m.usable("evaluator") else []))
def submit(ctx, op):
    ctx.adapter.submit(ctx.objects[op.target], ctx.spec)
    return {}


#: seconds past its own timeout after which a poll counts as hung
POLL_GRACE = 30.0


@verb(IMPL, "poll the eval worker (args: timeout, may_fail)", _may_fail,
      timeout_of=lambda op: float(op.args.get("timeout", 0)),
      deadline=lambda op, adapter, spec: float(op.args.get("timeout", 0)) + POLL_GRACE,
      api_script=lambda op, api: [f"result = evaluator.poll({float(op.args.get('timeout', 0))})",
                                  "return 'ready' if result is not None else 'not ready'"],
      use=Use("poll", lambda ctx, o: ctx.adapter.poll(o, 0.5), lambda api: "evaluator.poll(0.5)"),
      walk=WalkRule(lambda m: [(1, "evaluator", {"timeout": 1})] if m.usable("evaluator") else []))
def poll(ctx, op):
    timeout = float(op.args.get("timeout", 0))
    result = ctx.adapter.poll(ctx.objects[op.target], timeout)
    if result is None:
        return {"ready": False}
    if "eval_episode" not in ctx.adapter.features:
        return {"ready": True}
    try:
        episode = ctx.adapter.episode(result)
    except Exception as exc:  # noqa: BLE001 - the harness's reading, never the call's failure
        episode = {"unreadable": f"Adapter.episode raised {type(exc).__name__}: {str(exc)[:200]}"}
    if episode is None:
        episode = {"unreadable": f"Adapter.episode() cannot read a {type(result).__qualname__}: "
                                 f"{str(result)[:200]}"}
    import gymnasium as gym

    from conformance.envs import NEVER_TERMINATE

    # facts of the env the episode is judged against (eval_episode_consistent): its
    # TimeLimit, whether it terminates (submit's step bound is the spec's, in the run)
    try:
        limit = gym.spec(ctx.spec.env_id.split(":", 1)[-1]).max_episode_steps  # "module:id"
    except Exception:  # noqa: BLE001 - an id gymnasium does not know: no limit recorded
        limit = None
    return {"ready": True, "episode": episode, "episode_limit": limit,
            "never_terminates": ctx.spec.env_id in NEVER_TERMINATE}


# -- faults -----------------------------------------------------------------------

def check_signalable(pid, class_name: str | None = None) -> None:
    """Refuse a signal that could hit the harness or a bystander: pid 0/1/
    negative (a process group or init), this driver, its process group, a
    process that is not a Ray actor worker of the actor's class (a pid the
    GCS gives for another machine is refused the same way)."""
    from fixtures.procs import ray_worker_refusal

    if not isinstance(pid, int) or pid <= 1:
        raise HarnessError(f"refusing to signal pid {pid!r}: not a single live actor process")
    if pid in (os.getpid(), os.getpgrp()):
        raise HarnessError(f"refusing to signal pid {pid}: the driver itself or its process group")
    refusal = ray_worker_refusal(pid, class_name)
    if refusal:
        raise HarnessError(refusal)


def _wait_process_gone(pid: int, what: str) -> None:
    from fixtures import procs
    from fixtures.wait import ConditionTimeout, wait_for_condition

    try:
        wait_for_condition(lambda: not procs.pid_alive(pid), KILL_VERIFY,
                           message=f"pid {pid} gone")
    except ConditionTimeout:
        raise HarnessError(f"{what}: actor process {pid} still running after "
                           f"{KILL_VERIFY}s: the fault was not injected") from None


def _live_target(ctx, op) -> tuple:
    """The handle and the GCS record of the actor to kill, read now: it must
    be ALIVE, with a process (waits up to KILL_WAIT_ALIVE for a starting one)."""
    from fixtures.wait import ConditionTimeout, wait_for_condition

    index = int(op.args.get("index", 0))
    handles = ctx.adapter.actors(kind_of(op.target), ctx.objects[op.target])
    if not handles:
        raise HarnessError(f"{op.target} lists no actor to kill (adapter.actors is empty)")
    try:
        handle = handles[index]
    except IndexError:
        raise HarnessError(f"{op.target} has {len(handles)} actor(s): no index {index}") from None
    aid = handle._actor_id.hex()

    def alive():
        rec = ctx.actor_states([aid]).get(aid, {})
        return rec if rec.get("state") == "ALIVE" and (rec.get("pid") or 0) > 1 else None
    try:
        rec = wait_for_condition(alive, KILL_WAIT_ALIVE, interval=0.1,
                                 message=f"{op.target} actor {aid[:8]} ALIVE")
    except ConditionTimeout as exc:
        raise HarnessError(f"cannot kill {op.target} actor {index}: {exc}") from None
    return handle, {"id": aid, "pid": rec["pid"], "node_id": rec.get("node_id"), "index": index,
                    "class_name": rec.get("class_name")}


def _wait_not_alive(ctx, aid: str, what: str) -> str:
    from fixtures.wait import ConditionTimeout, wait_for_condition

    def left():
        state = ctx.actor_states([aid]).get(aid, {}).get("state")
        return state if state not in ("ALIVE", "unknown", None) else None
    try:
        return wait_for_condition(left, KILL_VERIFY, interval=0.1, message=f"{what} took effect")
    except ConditionTimeout as exc:
        raise HarnessError(f"{what}: {exc}: the fault was not injected") from None


def _hang_step(pid: int, what: str, injected) -> None:
    """Ask process ``pid``'s hangable env to hang at its next step and wait
    (up to KILL_VERIFY) for its answer that a step is stuck."""
    from conformance.envs import FLAG_DIR, hang_flag
    from fixtures.wait import ConditionTimeout, wait_for_condition

    flag = hang_flag(pid)
    os.makedirs(FLAG_DIR, exist_ok=True)
    with open(flag, "w"):
        pass
    injected()
    try:
        wait_for_condition(lambda: os.path.exists(flag + ".hung"), KILL_VERIFY,
                           message=f"{what}: a step stuck")
    except ConditionTimeout:
        if os.path.exists(flag):
            os.remove(flag)  # never let it hang a later call
        raise HarnessError(f"{what}: no step of a hangable env ran in pid {pid} within "
                           f"{KILL_VERIFY}s: no call was in flight, or the env is not "
                           "conformance.envs:RlcHangableCartPole-v0") from None
    os.remove(flag + ".hung")


def _require_ray(how: str) -> None:
    import ray

    if not ray.is_initialized():
        raise HarnessError(f"kill how={how} needs the driver's Ray connection, and Ray is not "
                           "initialized: calling Ray now would start a new runtime")


def _await_actors_script(op, w) -> list[str]:
    return ["t0 = time.monotonic()",
            f"while any(s != 'ALIVE' for s in (_actor_states() or {{}}).get({op.target!r}, ['?'])):",
            f"    if time.monotonic() - t0 > {KILL_WAIT_ALIVE}:",
            f"        raise RuntimeError('the {op.target} actors are not ALIVE after "
            f"{KILL_WAIT_ALIVE} s')",
            "    time.sleep(0.1)",
            "return 'ALIVE'"]


@verb(HARNESS, "wait until every actor of a component is ALIVE (up to KILL_WAIT_ALIVE s): "
               "the race that follows needs them running, whether or not the constructor "
               "waited for them (torchrl's eval worker returns while its actor is created)",
      script=_await_actors_script)
def await_actors(ctx, op):
    from fixtures.wait import ConditionTimeout, wait_for_condition

    handles = ctx.adapter.actors(kind_of(op.target), ctx.objects[op.target])
    if not handles:
        raise HarnessError(f"{op.target} lists no actor (adapter.actors is empty)")
    ids = [h._actor_id.hex() for h in handles]
    t0 = time.monotonic()

    def all_alive():
        states = ctx.actor_states(ids)
        return states if all(states[i].get("state") == "ALIVE" for i in ids) else None
    try:
        wait_for_condition(all_alive, KILL_WAIT_ALIVE, interval=0.1,
                           message=f"every {op.target} actor ALIVE")
    except ConditionTimeout as exc:
        raise HarnessError(str(exc)) from None
    return {"actors": len(ids), "waited": round(time.monotonic() - t0, 3)}


def _busy_cluster_helpers(ops) -> list:
    from conformance.ops import busy_cluster as b

    return [f"OCCUPY_WAIT = {b.OCCUPY_WAIT}", f"VACATE_WAIT = {b.VACATE_WAIT}",
            "_OCCUPIERS: list = []  # the harness's actors that hold every CPU (occupy)",
            b.CpuOccupier, b.occupy, b.vacate] if ops else []


@verb(HARNESS, "make the cluster busy: a harness actor on each node holds all its CPUs "
               "(conformance.ops.busy_cluster), so an actor that needs a CPU waits for one; "
               "`vacate` kills them. Not on the external fixture (a user's cluster)",
      script=lambda op, w: ["_OCCUPIERS.extend(occupy())",
                            "RECORDED.update(h._actor_id.hex() for h in _OCCUPIERS)  # the harness's",
                            "return f'{len(_OCCUPIERS)} node(s) busy'"],
      script_header=_busy_cluster_helpers)
def occupy(ctx, op):
    from conformance.ops import busy_cluster

    if ctx.occupiers:
        raise HarnessError("scenario error: occupy twice without vacate")
    try:
        ctx.occupiers = busy_cluster.occupy()
    except TimeoutError as exc:
        raise HarnessError(str(exc)) from None
    return {"occupiers": [h._actor_id.hex() for h in ctx.occupiers]}


@verb(HARNESS, "end the busy cluster: kill the occupiers and wait until they are dead (the "
               "CPUs they held are free again for what waited)", probes_actors=True,
      script=lambda op, w: ["took = vacate(_OCCUPIERS)", "_OCCUPIERS.clear()",
                            "return f'occupiers dead after {took} s'"],
      script_header=_busy_cluster_helpers)
def vacate(ctx, op):
    from conformance.ops import busy_cluster

    handles, ctx.occupiers = ctx.occupiers, []
    try:
        return {"seconds": busy_cluster.vacate(handles)}
    except TimeoutError as exc:
        raise HarnessError(str(exc)) from None


#: seconds a kill armed with ``during`` waits for that op to start
KILL_ARM_WAIT = 120.0


def _kill_script(op, w) -> list[str]:
    a = op.args
    if a.get("during"):
        now = _kill_script(type(op)("kill", op.target, {
            k: v for k, v in a.items() if k not in ("during", "after")}), w)
        after = float(a.get("after", 0.5))
        body = [line for line in now[1:] if not line.startswith("return ")]
        return [now[0], "", "def _land():", "    try:"] + ["        " + line for line in body] + [
            "        _ARMED_RESULTS.append(result)",
            "    except BaseException as exc:  # reported by the kill_landed op",
            "        _ARMED_ERRORS.append(exc)",
            "", f"# lands {after}s into the next op ({a['during']}): a call in flight",
            f"_ARMED.append(threading.Timer({after}, _land))",
            f"return 'armed: lands {after}s into the next {a['during']}'"]
    how, index = a.get("how", "ray_kill"), int(a.get("index", 0))
    if how == "remove_node":
        raise NoScript("removing a node is not done by a standalone script: kill every process of "
                       "the node hosting the actor (e.g. `ray stop --force` on that machine) here")
    # As the suite's kill (_live_target, _kill_now; conformance.ops.kill_effect
    # says why): the target ALIVE with a process first, and the op returns once
    # the fault took effect. Each form sets ``result`` and then returns it: an
    # armed kill (above) runs the same lines in its timer and keeps ``result``.
    head = [f"handle = ({w.actors(op.target)})[{index}]",
            f"pid = _await_alive_pid(handle, {KILL_WAIT_ALIVE})  # the actor's worker process"]
    if how == "ray_kill":
        return head + ["ray.kill(handle)",
                       f"result = _await_kill_effect(lambda: _actor_not_alive(handle), "
                       f"{KILL_VERIFY}, 'ray.kill')",
                       "return result"]
    if how in ("sigkill", "exit"):
        inject = ("os.kill(pid, signal.SIGKILL)  # the actor's worker process (this machine)"
                  if how == "sigkill" else
                  "handle.__ray_call__.remote(lambda self: os._exit(1))  # inside the actor")
        return head + [inject,
                       f"result = _await_kill_effect(lambda: _pid_gone(pid), {KILL_VERIFY}, "
                       f"f'{how} of pid {{pid}} (this machine)')",
                       "return result"]
    if how == "hang":
        return head + ["ref = handle.__ray_call__.remote(lambda self: time.sleep(3600))  # the actor hangs",
                       f"ready, _ = ray.wait([ref], timeout={HANG_CONFIRM})",
                       "if ready:",
                       "    raise RuntimeError('the sleeping call returned at once: the actor does not hang')",
                       f"result = 'the actor hangs: a call to it has not returned in {HANG_CONFIRM} s'",
                       "return result"]
    if how == "step_hang":  # hang_flag and FLAG_DIR: conformance.envs's, in the script
        return head + ["flag = hang_flag(pid)",
                       "os.makedirs(FLAG_DIR, exist_ok=True)",
                       "open(flag, 'w').close()  # its env's next step hangs for good "
                       "(conformance.envs:RlcHangableCartPole-v0)",
                       "t0 = time.monotonic()",
                       f"while not os.path.exists(flag + '.hung') and time.monotonic() - t0 < "
                       f"{KILL_VERIFY}:",
                       "    time.sleep(0.05)",
                       "if not os.path.exists(flag + '.hung'):",
                       "    os.remove(flag)  # never let it hang a later call",
                       "    raise RuntimeError('no step of a hangable env ran: nothing hangs')",
                       "os.remove(flag + '.hung')",
                       "result = 'a step hangs'",
                       "return result"]
    raise HarnessError(f"unknown kill method {how!r}; valid: {KILL_HOWS + IN_FLIGHT_HOWS}")


def _kill_helpers(ops) -> list:
    from conformance.ops import kill_effect

    hows = {op.args.get("how", "ray_kill") for op in ops} - {"remove_node"}
    out = [kill_effect._await_alive_pid] if hows else []
    if hows & {"ray_kill", "sigkill", "exit"}:
        out.append(kill_effect._await_kill_effect)
    if "ray_kill" in hows:
        out.append(kill_effect._actor_not_alive)
    # _pid_gone (sigkill, exit): every script has it (conformance.repro.script)
    if hows & set(IN_FLIGHT_HOWS):
        from conformance import envs

        out += [f"FLAG_DIR = {envs.FLAG_DIR!r}", envs.process_key, envs.hang_flag]
    return out


#: the ways a walk kills: it keeps its nodes
WALK_KILL_HOWS = tuple(h for h in KILL_HOWS if h != "remove_node")


def _killed(model, op) -> None:
    model.killed.add(op.target)
    model.hung |= op.args.get("how") == "hang"


KILL_WALK = WalkRule(
    lambda m: [(1, comp, {}) for comp in sorted(m.built - m.closed - m.killed) if m.ray_up],
    _killed, draw=lambda args, rng: {"how": rng.choice(WALK_KILL_HOWS)},
    # a killed component's death must be reported (a hung one may not answer)
    then=lambda op: [] if op.args["how"] == "hang" else [
        ("check_alive", op.target, {"expect": False})])


@verb(HARNESS, "kill one actor of a component from outside the implementation "
               "(args: how, index: 0 the first, -1 the last; during: a verb, after: s: "
               "armed now, the kill lands from a harness thread `after` seconds into "
               "the next op with that verb; kill_landed reports it. how=step_hang, "
               "armed only: the call in flight hangs in its env's next step)",
      # removing the node under a component needs it placed there (an actor option)
      needs=lambda op: ("actor_options",) if op.args.get("how") == "remove_node" else (),
      probes_actors=True, script=_kill_script, script_header=_kill_helpers, walk=KILL_WALK)
def kill(ctx, op):
    """A fault aimed at what is live: the actor's pid and node are read from the
    GCS now, a signal never goes to a process group, this driver or anything
    but a Ray worker, and the kill's effect is checked before it counts."""
    if op.args.get("during"):
        return _arm_kill(ctx, op)
    return _kill_now(ctx, op)


def _arm_kill(ctx, op):
    """Start a harness thread that kills while the op ``during`` runs (a call
    of the implementation in flight: ray-project/ray#54260's kill/complete race)."""
    from fixtures.wait import wait_for_condition

    during, after = op.args["during"], float(op.args.get("after", 0.5))
    now = {k: v for k, v in op.args.items() if k not in ("during", "after")}
    armed = {"during": during, "after": after, "done": threading.Event()}

    def land():
        try:
            wait_for_condition(lambda: (ctx.running_op or {}).get("verb") == during,
                               KILL_ARM_WAIT, message=f"op {during} started")
            armed["done"].wait(after)  # an offset into the op, not a synchronisation
            armed["in"] = dict(ctx.running_op or {})
            landing = time.monotonic()

            def injected():  # the signal is sent, ray.kill called: is the op still running?
                armed["still_in"] = dict(ctx.running_op or {}) == armed["in"]
                armed["injected_after"] = round(time.monotonic() - landing, 3)
            armed["result"] = _kill_now(ctx, type(op)(op.verb, op.target, {**now, "armed": True}),
                                        injected)
        except BaseException as exc:  # noqa: BLE001 - reported by kill_landed
            armed["error"] = exc
        finally:
            armed["done"].set()

    ctx.armed_kills.append(armed)
    start_harness_thread(land, "rlc-kill")
    return {"armed": {"during": during, "after": after}}


@verb(HARNESS, "wait for the kill armed with `during` and check it landed inside that op",
      probes_actors=True,
      # past the longest wait below, so that its own message is what a user reads
      deadline=lambda op, adapter, spec: KILL_ARM_WAIT + KILL_WAIT_ALIVE + KILL_VERIFY + 30.0,
      script=lambda op, w: ["timer = _ARMED.pop(0)", "timer.join()",
                            "if _ARMED_ERRORS:",
                            "    raise _ARMED_ERRORS.pop(0)  # the kill itself failed",
                            "return 'the armed kill landed: ' + _ARMED_RESULTS.pop(0)"])
def kill_landed(ctx, op):
    if not ctx.armed_kills:
        raise HarnessError("no kill was armed")
    armed = ctx.armed_kills.pop(0)
    if not armed["done"].wait(KILL_ARM_WAIT + KILL_WAIT_ALIVE + KILL_VERIFY):
        raise HarnessError(f"the kill armed for {armed['during']} never landed")
    if "error" in armed:
        exc = armed["error"]
        raise HarnessError(f"the kill armed for {armed['during']} failed: "
                           f"{type(exc).__name__}: {exc}") from exc
    if armed["in"].get("verb") != armed["during"] or not armed["still_in"]:
        raise HarnessError(f"the kill was not injected inside {armed['during']} (the op "
                           f"running then: {armed['in']}; still running at injection, "
                           f"{armed.get('injected_after')} s after the kill began: "
                           f"{armed.get('still_in')}): no call was in flight as the "
                           "scenario says")
    return {**armed["result"], "landed_in": armed["in"],
            "injected_after": armed["injected_after"]}


def _kill_now(ctx, op, injected=lambda: None):
    """``injected`` is called the moment the fault is injected, before its
    effect is verified."""
    how = op.args.get("how", "ray_kill")
    if how not in KILL_HOWS + IN_FLIGHT_HOWS:
        raise HarnessError(f"unknown kill method {how!r}; valid: {KILL_HOWS + IN_FLIGHT_HOWS}")
    if how in IN_FLIGHT_HOWS and not op.args.get("armed"):
        raise HarnessError(f"kill how={how} hits a call in flight: arm it with `during`")
    if how == "step_hang" and ctx.fixture.get("kind") not in ("local", "multinode"):
        raise HarnessError(f"refusing a step hang on the {ctx.fixture.get('kind')} fixture: "
                           "its flag file must be on the actor's machine (this one)")
    if how == "remove_node" and ctx.fixture.get("kind") != "multinode":
        raise HarnessError(f"refusing to remove a node of the {ctx.fixture.get('kind')} "
                           "fixture: the suite stops only nodes of a cluster it started "
                           "(multinode)")
    handle, info = _live_target(ctx, op)
    what = f"{how} of {op.target} actor {info['id'][:8]} (pid {info['pid']})"
    out = {"how": how, "actor": info}
    if how == "ray_kill":
        import ray

        _require_ray(how)
        ray.kill(handle)
        injected()
        out["state"] = _wait_not_alive(ctx, info["id"], what)
    elif how == "sigkill":
        check_signalable(info["pid"], info["class_name"])
        os.kill(info["pid"], signal.SIGKILL)
        injected()
        _wait_process_gone(info["pid"], what)
    elif how == "exit":
        _require_ray(how)
        check_signalable(info["pid"], info["class_name"])
        handle.__ray_call__.remote(lambda self: os._exit(1))
        injected()
        _wait_process_gone(info["pid"], what)
    elif how == "hang":
        import ray

        _require_ray(how)
        ref = handle.__ray_call__.remote(lambda self: time.sleep(3600))
        injected()
        ready, _ = ray.wait([ref], timeout=HANG_CONFIRM)
        if ready:
            raise HarnessError(f"{what}: the sleeping call returned at once: the actor does not hang")
        ctx.keep.append(ref)
    elif how == "step_hang":
        check_signalable(info["pid"], info["class_name"])  # a Ray worker of this machine
        _hang_step(info["pid"], what, injected)
    else:  # remove_node
        from fixtures.clusters import kill_node

        node = next((n for n in ctx.fixture.get("nodes", []) if n["node_id"] == info["node_id"]),
                    None)
        if node is None:
            raise HarnessError(f"{what}: the actor's node {str(info['node_id'])[:8]} is not a "
                               "node of this fixture")
        if node.get("name") == "head":
            raise HarnessError(f"{what}: refusing to remove the head node")
        killed = kill_node(node)
        injected()
        ctx.removed_nodes.append(node["name"])
        _wait_process_gone(info["pid"], what)
        out.update(node=node["name"], killed=[p["pid"] for p in killed])
    return out


def _interrupt_script(op, w) -> list[str]:
    from conformance.ops.interrupts import ends_program

    a = op.args
    sig, after = a.get("signal", "SIGINT"), float(a.get("after", 0.5))
    then = ("the program ends with what it raises, as a user's that does not catch it"
            if ends_program(a) else "the user catches the KeyboardInterrupt and goes on")
    return [f"# {sig} to this very process {after}s into the next op ({a['during']}); {then}",
            f"_INTERRUPTS.append({{'signal': signal.{sig}, 'ends_program': "
            f"{ends_program(a)}, 'sent': None}})",
            f"_ARMED.append(threading.Timer({after}, _send_signal, args=(_INTERRUPTS[-1],)))",
            f"return 'armed: {sig} {after}s into the next {a['during']}'"]


@verb(HARNESS, "send a signal to the driver process itself from a harness thread, `after` "
               "seconds into the next op with verb `during` (args: signal: SIGINT, a user's "
               "Ctrl-C, or SIGTERM, a CI cancellation; during; after; caught: the user's "
               "`except KeyboardInterrupt` around that op lets the program go on (default), "
               "else the program ends with what the signal raised; SIGTERM always ends it). "
               "That op records it: status `interrupted`, the latency from the signal to the "
               "raise, and whether it landed inside the op (conformance.ops.interrupts)",
      script=_interrupt_script)
def interrupt(ctx, op):
    return ctx.interrupts.arm(op.args)


# -- teardown and the user's Ray ----------------------------------------------------

def _call_teardown(ctx, target, obj, shutdown_ray, via=None, body_raises=False):
    """One teardown call in the form ``via`` (``TEARDOWN_FORMS``): the
    adapter's; awaiting its coroutine teardown (``"async"``,
    ``conformance.ops.coroutine_teardown``); or leaving a ``with`` block
    (``"with"``, ``conformance.ops.with_block``) whose body raises if
    ``body_raises``."""
    t0 = time.monotonic()
    body = None
    kind = kind_of(target)
    try:
        if via == "async":
            from conformance.ops.coroutine_teardown import await_in_a_running_loop

            await_in_a_running_loop(ctx.adapter.async_teardown(kind, obj, shutdown_ray=shutdown_ray))
        elif via == "with":
            from conformance.ops.with_block import leave_with_block

            body = leave_with_block(lambda *exc: ctx.adapter.exit_block(kind, obj, *exc),
                                    body_raises)
        else:
            ctx.adapter.teardown(kind, obj, shutdown_ray=shutdown_ray)
        status, error = "ok", None
    except BaseException as exc:  # noqa: BLE001 - the history records everything
        if ctx.interrupts is not None and ctx.interrupts.interrupting(exc):
            raise  # the harness's signal: the op is interrupted (conformance.ops.interrupts)
        status, error = "raised", describe_error(exc)
    return {
        "status": status,
        "error": error,
        "duration": round(time.monotonic() - t0, 4),
        "thread": threading.current_thread().name,
        **({"body_error": body} if body is not None else {}),
    }


#: how a teardown op tears down (``via``), and the feature each form needs
TEARDOWN_FORMS = {"with": "context_manager", "async": "async_shutdown"}


def _teardown_needs(op) -> tuple:
    via = op.args.get("via")
    return (("shutdown_ray",) if op.args.get("shutdown_ray") else ()) + \
        ((TEARDOWN_FORMS[via],) if via else ())


def _teardown_header(ops) -> list:
    from conformance.ops.coroutine_teardown import await_in_a_running_loop
    from conformance.ops.with_block import leave_with_block

    forms = {o.args.get("via") for o in ops}
    return ([leave_with_block] if "with" in forms else []) + \
        ([await_in_a_running_loop] if "async" in forms else [])


def _teardown_deadline(op, adapter, spec) -> float:
    per_call = 2 * adapter.teardown_bound + 10
    return per_call * int(op.args.get("times", 1)) + 5


def _teardown_proposals(model) -> list:
    if model.hung:  # a careful user's only move
        return [(1, comp, {}) for comp in sorted(model.built - model.closed)]
    return [(2, comp, {}) for comp in sorted(model.built - model.closed)] + \
        [(1, comp, {}) for comp in sorted(model.closed)]


def _closed(model, op) -> None:
    model.closed.add(op.target)


def _first_bad_call(result) -> dict | None:
    return next((c["error"] for c in result.get("calls", []) if c["status"] != "ok"), None)


@verb(IMPL, "shutdown/close a component (args: times, thread, concurrent, shutdown_ray; "
            "via='with': leave a `with component:` block instead, whose body raises the "
            "user's own error if body_raises; via='async': await the collector's coroutine "
            "teardown, collector.async_shutdown(), in an event loop that goes on after it)",
      needs=_teardown_needs, script_header=_teardown_header,
      deadline=_teardown_deadline, probes_actors=True, settles=True, releases=True,
      inner_error=_first_bad_call,
      walk=WalkRule(_teardown_proposals, _closed, when_hung=True))
def teardown(ctx, op):
    """shutdown/close ``times`` times, from ``thread`` or ``concurrent`` threads;
    each of ``concurrent`` calls records, the moment it returns, its
    component's actors and the implementation's threads (``at_return``): a
    call that returns while another thread's call still tears down is seen
    there, not in the op's probe after both."""
    obj = ctx.objects[op.target]
    shutdown_ray = bool(op.args.get("shutdown_ray", False))
    via = op.args.get("via")
    if via is not None and via not in TEARDOWN_FORMS:
        raise HarnessError(f"teardown(via={via!r}): no such teardown form; the scenario is wrong")
    body_raises = bool(op.args.get("body_raises", False))
    if via == "with" and shutdown_ray:
        raise HarnessError("teardown(via='with') with shutdown_ray: leaving a with block "
                           "cannot ask to end Ray; the scenario is wrong")
    times = int(op.args.get("times", 1))
    concurrent = int(op.args.get("concurrent", 1))
    in_thread = op.args.get("thread", "main") != "main" or concurrent > 1
    calls = []
    for _ in range(times):
        if not in_thread:
            calls.append(_call_teardown(ctx, op.target, obj, shutdown_ray, via, body_raises))
            continue
        results = [None] * concurrent
        barrier = threading.Barrier(concurrent)

        def run(k):
            barrier.wait()
            results[k] = _call_teardown(ctx, op.target, obj, shutdown_ray, via, body_raises)
            if concurrent > 1:  # the op's probe comes after every call returned
                results[k]["at_return"] = ctx.call_return_reading(op.target)

        threads = [start_harness_thread(run, f"rlc-teardown-{k}", args=(k,))
                   for k in range(concurrent)]
        for t in threads:
            t.join()
        calls.extend(results)
    return {"calls": calls}


def _ray_down(model, op) -> None:
    model.ray_up = False


#: ``ray_shutdown(binding=...)``: the name the user's code calls. "module": ``ray.shutdown``
#: looked up when called (a wrapper the implementation set on the module runs);
#: "before-import": the name as a module imported before the implementation bound
#: it (``from ray import shutdown``): no wrapper of the implementation's runs, and
#: what it keeps with a runtime must notice the end on its own
SHUTDOWN_BINDINGS = ("module", "before-import")
#: seconds a check_alive or check_error waits for its answer unless told (the
#: contract's liveness bound)
LIVENESS_BOUND = 5.0
#: seconds a ``ray_shutdown(binding="before-import")`` waits at most for the threads
#: the scenario started to end, as a program that goes on after it would
#: (``no_leftover_thread`` judges the final probe's): the liveness bound
NOTICE_BOUND = LIVENESS_BOUND


def _ray_shutdown_script(op, w) -> list[str]:
    if op.args.get("across_teardown"):
        raise NoScript("a teardown and the user's ray.shutdown() in two threads at once is not "
                       "written as a standalone script yet")
    if op.args.get("binding", "module") == "module":
        return ["ray.shutdown()  # the user's own"]
    return ["# the user's own, through a name bound before the library's import",
            "RAY_SHUTDOWN_BOUND_EARLY()",
            f"# then the program goes on: the suite waits up to {NOTICE_BOUND} s for the",
            "# library's threads to end (it reads them once the operations are done)",
            "_noticed_by = time.monotonic() + %r" % NOTICE_BOUND,
            "while time.monotonic() < _noticed_by and _threads_left(THREADS_BEFORE, quiet=True):",
            "    time.sleep(0.05)",
            "_threads_left(THREADS_BEFORE)  # prints what is still running"]


def _ray_shutdown_prelude(ops) -> list[str]:
    """The name a ``ray_shutdown(binding="before-import")`` calls, bound
    before the library's import (``Verb.script_prelude``)."""
    if not any(o.args.get("binding") == "before-import" for o in ops):
        return []
    return ["RAY_SHUTDOWN_BOUND_EARLY = ray.shutdown  # a module imported before the library's: "
            "`from ray import shutdown`"]


def _ray_shutdown_deadline(op, adapter, spec) -> float:
    across = _teardown_deadline(op, adapter, spec) if op.args.get("across_teardown") else 0.0
    return DEFAULT_DEADLINE + NOTICE_BOUND + across


@verb(IMPL, "the user calls ray.shutdown() (args: binding, one of SHUTDOWN_BINDINGS: "
            "\"module\" by default; \"before-import\" calls the name as bound before the "
            "implementation's import, then waits up to NOTICE_BOUND for the threads "
            "the scenario started to end; across_teardown: a component whose teardown "
            "another thread of the program runs meanwhile, teardown_in: \"thread\" (a "
            "user's thread; ray.shutdown() in the main one) or \"main\" (the other way "
            "round), after: s into the teardown; its call is the op's `calls`)",
      probes_actors=True, script=_ray_shutdown_script, script_prelude=_ray_shutdown_prelude,
      deadline=_ray_shutdown_deadline,
      inner_error=_first_bad_call,
      walk=WalkRule(lambda m: [(1, None, {})] if m.owner == "user" and m.ray_up and m.built
                    else [], _ray_down))
def ray_shutdown(ctx, op):
    binding = op.args.get("binding", "module")
    shutdown = _user_shutdown(ctx, binding)
    if op.args.get("across_teardown"):
        return _ray_shutdown_across_teardown(ctx, op, shutdown)
    with ctx.as_user():
        shutdown()
    if binding == "module":
        return {}
    from conformance.ops.threads import new_threads
    from fixtures.wait import poll

    t0 = time.monotonic()
    # what is left then the final probe reads: no_leftover_thread judges it
    left = poll(lambda: new_threads(ctx.baseline_threads), lambda threads: not threads,
                NOTICE_BOUND)
    return {"threads_waited_s": round(time.monotonic() - t0, 3),
            "threads_left": [t["name"] for t in left]}


def _user_shutdown(ctx, binding: str):
    """The user's ``ray.shutdown`` as the program names it (``SHUTDOWN_BINDINGS``)."""
    import ray

    if binding not in SHUTDOWN_BINDINGS:
        raise HarnessError(f"ray_shutdown binding {binding!r}: not one of {SHUTDOWN_BINDINGS}")
    if binding == "module":
        return lambda: ray.shutdown()  # looked up when called: a wrapper set since runs
    shutdown = ctx.runtime_watch.installed.get("shutdown") if ctx.runtime_watch else None
    if shutdown is None:
        raise HarnessError("ray.shutdown as bound before the implementation's import is "
                           "unknown: the runtime watch did not install")
    return shutdown


@verb(IMPL, "the user restarts Ray: ray.shutdown(), then ray.init() as the user "
            "does at the start (for the impl owner too: the new runtime is the user's)",
      probes_actors=True, deadline=lambda op, adapter, spec: INIT_DEADLINE + 30.0,
      script=lambda op, w: [
          "ray.shutdown()  # the user restarts Ray: the components' handles are stale now",
          "ray.init(**USER_INIT)"])
def ray_restart(ctx, op):
    import ray

    with ctx.as_user():
        ray.shutdown()
    return ctx.init_ray_as_user()


def _ray_shutdown_across_teardown(ctx, op, shutdown_fn):
    """A program whose one thread ends Ray while another tears a component
    down (a worker thread's ``finally`` closes what it used as the main thread
    ends Ray, or the other way round): the user's ``ray.shutdown()`` begins
    ``after`` seconds into the teardown (its envs' ``close()`` is slow), and
    the op is judged by both calls: the teardown's is its ``calls`` (a raise
    there is the op's, ``inner_error``), the shutdown must end the runtime
    (``user_shutdown_ends_ray``). ``shutdown_fn`` is the name the user calls
    (``_user_shutdown``). A teardown done before the shutdown began did not
    overlap it: the scenario did not happen (HarnessError)."""
    target, after = op.args["across_teardown"], float(op.args.get("after", 0.5))
    teardown_in = op.args.get("teardown_in", "thread")
    if teardown_in not in ("thread", "main"):
        raise HarnessError(f"ray_shutdown teardown_in={teardown_in!r}: 'thread' or 'main'")
    if target not in ctx.objects:
        raise HarnessError(f"ray_shutdown across_teardown={target!r}: never built")
    obj, done, out = ctx.objects[target], threading.Event(), {}

    def teardown():
        try:
            out["call"] = _call_teardown(ctx, target, obj, False)
        finally:
            out["ended"] = time.monotonic()
            done.set()

    def shutdown():
        if done.wait(after):  # an offset into the teardown, not a synchronisation
            return
        out["began"] = time.monotonic()
        with ctx.as_user():
            shutdown_fn()
        out["shutdown_s"] = round(time.monotonic() - out["began"], 3)

    first, second = (teardown, shutdown) if teardown_in == "main" else (shutdown, teardown)
    other = Call(second, f"rlc-user-{second.__name__}")  # the program's other thread
    try:
        first()
    finally:
        other.result()  # what the shutdown raised (the teardown's: the op's inner_error)
    result = {"calls": [out["call"]], "shutdown_s": out.get("shutdown_s"),
              "teardown_in": teardown_in}
    if out["call"]["status"] != "ok":
        return result  # what the teardown raised is the op's (inner_error), overlap or not
    if "began" not in out or out["began"] >= out["ended"]:
        raise HarnessError(f"the teardown of {target} returned before the user's "
                           "ray.shutdown() began: the two did not overlap")
    return result


#: the calls of ``use`` an adapter has only with a feature: without it, that
#: call is unsupported and the other calls of the scenario are still checked
USE_FEATURES = {"start": "background", "weights": "weights"}


def _use_script(op, api) -> list[str] | None:
    expr = use_calls()[op.args["call"]].expr(api)
    return None if expr is None else [
        "# after teardown: the contract wants a clear 'closed' error, at once",
        f"return repr({expr})"]


@verb(IMPL, "call a method of a component after its teardown (args: call, a verb's "
            "`Verb.use` name)", lambda op: True,
      optional_feature=lambda op: USE_FEATURES.get(op.args.get("call")),
      script_header=lambda ops: _policy_helpers([o for o in ops if o.args.get("call") == "weights"]),
      api_script=_use_script)
def use(ctx, op):
    use_calls()[op.args["call"]].run(ctx, ctx.objects[op.target])
    return {}


def _check_alive_deadline(op, adapter, spec) -> float:
    a = op.args
    return float(a.get("within", LIVENESS_BOUND)) + float(a.get("stays", 0)) \
        + adapter.teardown_bound + 10


@verb(IMPL, "ask is_alive() over time (args: expect; within: s to reach it; stays: s "
            "it must then keep answering it). expect=True is a healthy component: its "
            "first answer counts (no polling, no cache may hide a death later); "
            "expect=False is asked until it comes, within `within`",
      optional_feature="liveness", unchecks=("liveness_reports_death",),
      deadline=_check_alive_deadline)
def check_alive(ctx, op):
    """Ask ``is_alive()`` until it answers ``expect`` (for expect=True the
    first answer is the verdict's) or ``within`` seconds pass; then, for
    ``stays`` seconds, go on asking. Records each change of answer with the
    time it came, from the op's start to the return of that call, so a
    single call that blocks past ``within`` is measured too."""
    from fixtures.wait import poll

    expect = bool(op.args.get("expect", False))
    within = float(op.args.get("within", LIVENESS_BOUND))
    stays = float(op.args.get("stays", 0))
    obj = ctx.objects[op.target]
    t0 = time.monotonic()
    seen = {"calls": 0, "answers": [], "reached": None}

    def ask():
        value = bool(ctx.adapter.is_alive(kind_of(op.target), obj))
        elapsed = round(time.monotonic() - t0, 3)
        seen["calls"] += 1
        if not seen["answers"] or seen["answers"][-1][1] != value:
            seen["answers"].append([elapsed, value])
        if seen["reached"] is None and value == expect:
            seen["reached"] = elapsed
        return value, elapsed

    def done(answer):
        value, elapsed = answer
        if seen["reached"] is None:  # a healthy component's first answer is final
            return expect or elapsed > within
        return elapsed - seen["reached"] >= stays

    value, elapsed = poll(ask, done, within + stays, interval=0.1)
    return {"expect": expect, "within": within, "stays": stays, "value": value,
            "elapsed": elapsed, "reached": seen["reached"], "answers": seen["answers"],
            "calls": seen["calls"]}


def _check_error_deadline(op, adapter, spec) -> float:
    return float(op.args.get("within", LIVENESS_BOUND)) + adapter.teardown_bound + 10


def _check_error_script(op, api) -> list[str] | None:
    a = op.args
    expr = use_calls()[a["call"]].expr(api)
    if expr is None:
        return None
    within = float(a.get("within", 5.0))
    return [f"# the {a.get('cause')} failure behind it must reach this call: it raises "
            f"(within {within}s), clearly, chained to that cause",
            "t0 = time.monotonic()",
            f"while time.monotonic() - t0 < {within}:",
            f"    {expr}",
            "    time.sleep(0.1)",
            "return 'returned without raising: the error was not surfaced'"]


@verb(IMPL, "the user's next call after the work behind it failed (args: call, one of "
            "the `use` calls; cause: env or actor; within: s): repeated until it raises, "
            "which is the expected outcome; returning only means the error was not "
            "surfaced", lambda op: True, deadline=_check_error_deadline,
      needs=lambda op: ("background",) if op.args.get("call") == "start" else (),
      api_script=_check_error_script)
def check_error(ctx, op):
    """Call ``call`` until it raises (the op then raises that error) or
    ``within`` seconds pass (the op returns how often it returned silently)."""
    from fixtures.wait import poll

    within = float(op.args.get("within", LIVENESS_BOUND))
    call = use_calls()[op.args["call"]].run
    obj = ctx.objects[op.target]
    t0 = time.monotonic()
    tries = {"returned": 0}

    def attempt():
        try:
            call(ctx, obj)
        except Exception as exc:  # noqa: BLE001 - the outcome the op is about
            return exc
        tries["returned"] += 1
        return None

    error = poll(attempt, lambda exc: exc is not None, within, interval=0.1)
    if error is not None:
        raise error
    return {"returned": tries["returned"], "elapsed": round(time.monotonic() - t0, 3),
            "within": within}


def _check_name_script(op, w) -> list[str]:
    named = op.args.get("named", True)
    first = named is True  # the scenario's name, ACTOR_NAME; or a second one
    name = "ACTOR_NAME" if first else "name"
    return ([] if first else [f"name = {w.actor_name(named)}"]) + [
            "if not ray.is_initialized():  # ray.get_actor would start a new runtime",
            "    return 'not looked up: Ray is not initialized here'",
            "try:",
            f"    ray.get_actor({name}, namespace=ray.get_runtime_context().namespace)",
            f"    return f'{{{name}!r}} is registered'",
            "except ValueError:",
            f"    return f'{{{name}!r}} is not registered'"]


@verb(HARNESS, "is the named eval worker registered under its name (asks the GCS; "
               "never starts Ray; args: named, the construct's: True or a second name's suffix)",
      script=_check_name_script)
def check_name(ctx, op):
    obs = ctx.observer
    if obs is None:
        raise HarnessError("no GCS address known to look the name up")
    name = actor_name(ctx.actor_name, op.args.get("named", True))
    records = obs.named_actors(name)  # in any namespace: is the name freed?
    live = [aid for aid, r in records.items() if r["state"] != "DEAD"]
    return {"found": bool(live), "name": name, "actors": sorted(live)}


#: seconds check_writes waits for a collector's frames to land in its buffer
#: (the instances family's writers run the slow env: 16 frames take 0.8 s;
#: measured: 16 frames landed 0.6 s into the wait), and the frames it waits
#: for by default
WRITES_WAIT = 20.0
WRITES_MORE = 16


def _writes_into(ctx, target: str) -> str:
    into = next((writes_into(o) for o in ctx.scenario.ops
                 if VERBS[o.verb].builds and o.target == target), None)
    if into is None or into not in ctx.objects:
        raise HarnessError(f"scenario error: {target} writes into no buffer that was built")
    return into


def _check_writes_script(op, api) -> list[str]:
    """The op's lines bind ``buffer`` to the one it writes into."""
    more = int(op.args.get("more", WRITES_MORE))
    limit = float(op.args.get("timeout", WRITES_WAIT))
    return ["t0 = time.monotonic()",
            f"start = n = {api.length}",
            f"while n < start + {more} and time.monotonic() - t0 < {limit}:",
            "    time.sleep(0.05)",
            f"    n = {api.length}",
            f"return f'the buffer grew by {{n - start}} frames in "
            f"{{time.monotonic() - t0:.1f}}s ({more} wanted: the collector still writes)'"]


@verb(IMPL, "wait until the buffer a collector instance writes into holds `more` frames more "
            "than when the op started: the collector's writes still land (args: more, "
            "timeout); a buffer that does not grow is recorded, not raised: data_kept "
            "judges each writer",
      deadline=lambda op, adapter, spec: float(op.args.get("timeout", WRITES_WAIT)) + 30.0,
      api_script=_check_writes_script, on_written_buffer=True)
def check_writes(ctx, op):
    from fixtures.wait import poll

    into = _writes_into(ctx, op.target)
    buffer, more = ctx.objects[into], int(op.args.get("more", WRITES_MORE))
    limit = float(op.args.get("timeout", WRITES_WAIT))
    t0 = time.monotonic()
    start = ctx.adapter.buffer_len(buffer)
    n = poll(lambda: ctx.adapter.buffer_len(buffer), lambda n: n >= start + more, limit)
    return {"buffer": into, "from": start, "frames": n, "more": more, "timeout": limit,
            "elapsed": round(time.monotonic() - t0, 3)}


def _check_clean_script(op, w) -> list[str]:
    return ["if not ray.is_initialized():",
            "    return 'Ray is down here: no actor of this driver runs in it'",
            "from ray._private import state  # not ray.util.state: see _actor_states",
            "job = ray.get_runtime_context().get_job_id()",
            "live = [f\"{a['ActorClassName']} {a['ActorID'][:8]} {a['State']}\"",
            "        for a in state.actors().values()",
            "        if a['JobID'] == job and a['State'] != 'DEAD']",
            "threads = [t.name for t in threading.enumerate() if t is not threading.main_thread()]",
            "return f'live actors of this job: {live or \"none\"}; threads: {threads}'"]


@verb(HARNESS, "read what is left once the components built so far are torn down: the live "
               "actors of the driver's jobs and the implementation's threads (between two "
               "generations of a sweep; no_leftover_actor and no_leftover_thread judge it "
               "as they judge the end)", script=_check_clean_script)
def check_clean(ctx, op):
    return ctx.leftovers()


@verb(IMPL, "drop every reference to every component and collect garbage", probes_actors=True,
      script=lambda op, w: [
          f"global {', '.join(w.variables())}",
          f"{' = '.join(w.variables())} = None  # every reference to every component",
          "gc.collect()"])
def drop(ctx, op):
    ctx.objects.clear()
    gc.collect()
    return {}


def _peer_deadline(op, adapter, spec) -> float:
    return PEER_DEADLINE + 30.0  # the peer is killed at PEER_DEADLINE: its history is judged


@verb(HARNESS, "a second driver process runs ops against a named eval worker (args: ops)",
      deadline=_peer_deadline,
      script=lambda op, w: ["# a second driver (a fresh interpreter) runs these ops against the",
                            f"# named eval worker: {w.peer_ops(op)}",
                            f"return _run_peer({w.peer_script(op)!r})"])
def peer(ctx, op):
    return ctx.run_peer(op)

