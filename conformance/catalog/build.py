"""Small builders shared by every family: the same op sequences, one place."""
from __future__ import annotations

from conformance.adapter import SPEC_FEATURES
from conformance.ops.verbs import needs_of, scenario_needs
from conformance.ops.scenario import Op
from conformance.ops.targets import instance, kind_of

#: every component, in the order the catalog builds them
ALL = ("buffer", "collector", "evaluator")
SUBSET_MARK = "~no-"
#: an env whose step sleeps 0.05 s (``conformance.envs``): a 64-frame batch
#: takes 3.2 s, so a race against a collector's call finds it in flight
SLOW_ENV = {"env_id": "conformance.envs:RlcSlowCartPole-v0"}
#: a total_frames no scenario reaches (at most a few hundred batches run):
#: a background thread keeps collecting through the race. Not -1, "endless"
#: by contract: torchrl 0.14.1 reads -1 as already reached and its start()
#: thread ends after the first round (measured), so no race would happen;
#: -1 itself is checked by early_break/*/*/endless-after-2
ENDLESS_IN_PRACTICE = 10**9
#: an env whose 64-frame batch takes 12.8 s: longer than any graceful wait
#: of a teardown (``conformance.envs.LONG_STEP_SECONDS``)
LONG_BATCH_ENV = {"env_id": "conformance.envs:RlcVerySlowCartPole-v0"}
#: the slow env whose step the harness can make hang mid-call (kill how=step_hang)
HANGABLE_ENV = {"env_id": "conformance.envs:RlcHangableCartPole-v0"}
#: an env with a helper process that only its close() stops
#: (``conformance.envs.HelperProcessCartPole``)
HELPER_ENV = {"env_id": "conformance.envs:RlcHelperProcessCartPole-v0"}
#: the helper env whose close() takes 1.5 s (``conformance.envs.SlowCloseHelperCartPole``)
SLOW_CLOSE_HELPER_ENV = {"env_id": "conformance.envs:RlcSlowCloseHelperCartPole-v0"}
#: CartPole whose close() takes 1.5 s, no helper (``conformance.envs.SlowCloseCartPole``)
SLOW_CLOSE_ENV = {"env_id": "conformance.envs:RlcSlowCloseCartPole-v0"}
#: an env that raises from its 100th step on: a batch fails midway
#: (``conformance.envs.FAIL_AT_STEP``)
FAILING_ENV = {"env_id": "conformance.envs:RlcFailingCartPole-v0"}


def subset_variant(variant: str, comps) -> str:
    """``variant``, marked with the components left out when a scenario
    written for all of them runs on ``comps``: ``buffer-sigkill>teardown~no-evaluator``."""
    missing = [c for c in ALL if c not in comps]
    return variant + (SUBSET_MARK + "-".join(missing) if missing else "")


def components_of(variant: str) -> tuple:
    """The components a (possibly marked) variant was built for."""
    if SUBSET_MARK not in variant:
        return ALL
    missing = variant.split(SUBSET_MARK, 1)[1].split("-")
    return tuple(c for c in ALL if c not in missing)


# Where each component lives on the multinode fixture unless a family says
# otherwise: every component on its own node.
DEFAULT_PLACEMENT = {"collector": "node_a", "buffer": "node_b", "evaluator": None}


def op(verb: str, target: str | None = None, **args) -> Op:
    return Op(verb, target, args)


def place_args(fixture: str, component: str, placement: dict | None = None) -> dict:
    node = (placement or DEFAULT_PLACEMENT).get(component)
    return {"place": node} if fixture == "multinode" and node else {}


def build(fixture: str, components=("buffer", "collector", "evaluator"), *,
          sync: bool = False, buffer_mode: bool = True, placement: dict | None = None,
          extra: dict | None = None) -> list[Op]:
    """Construct the given components (the buffer first, so a collector can
    write into it)."""
    out = []
    for comp in ("buffer", "collector", "evaluator"):
        if comp not in components:
            continue
        args = {**place_args(fixture, comp, placement), **(extra or {}).get(comp, {})}
        if comp == "collector":
            args["sync"] = sync
            if buffer_mode and "buffer" in components:
                args["buffer"] = True
        out.append(op("construct", comp, **args))
    return out


def warm_up(components) -> list[Op]:
    """Use every component once so each has in-flight or finished work."""
    out = []
    if "collector" in components:
        out.append(op("iterate", "collector", batches=1))
    if "evaluator" in components:
        out.append(op("submit", "evaluator"))
    return out


def teardowns(order) -> list[Op]:
    """Teardown ops in ``order``; ``"ray"`` is the user's ray.shutdown()."""
    return [op("ray_shutdown") if t == "ray" else op("teardown", t) for t in order]


def as_instance(ops, n: int) -> list[Op]:
    """``ops`` on instance ``n`` of each component they name: ``collector``
    becomes ``collector.2`` (and a collector writes into ``buffer.2``)."""
    out = []
    for o in ops:
        args = dict(o.args)
        if o.verb == "construct" and args.get("buffer"):
            args["buffer"] = instance("buffer", n)
        target = None if o.target is None else instance(kind_of(o.target), n)
        out.append(Op(o.verb, target, args))
    return out


def requirements(ops, spec=None) -> tuple[str, ...]:
    """Adapter features a list of ops needs (each verb declares its own,
    ``conformance.ops.verbs.Verb.needs``): without one the scenario is skipped. A
    feature a verb can do without (``liveness`` for check_alive:
    ``optional_feature``) is not among them: that op is recorded
    "unsupported" and the scenario runs. Nor is ``ready_timeout``:
    ``construct(ready=False)`` asks an adapter that has the knob not to wait
    for its actors; one without it builds as it always does (a constructor
    that then blocks forever on unschedulable actors is a ``hang``). Two
    instances of one kind open at once need ``instances``; a spec that sets
    a field of ``SPEC_FEATURES``, that feature."""
    from_spec = {f for f in SPEC_FEATURES if f in (spec or {})}
    return tuple(sorted(set().union(*(needs_of(o) for o in ops)) | scenario_needs(ops) | from_spec))
