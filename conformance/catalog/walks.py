"""Random lifecycle walks: seeded op sequences, replayable and shrinkable.

Like Hypothesis' ``RuleBasedStateMachine``, a small model of the components'
state (built, open, killed, closed; Ray up) gives each rule its
precondition; a seed fixes every choice, so ``walk/<fixture>/<owner>/seed-<n>``
always names the same sequence (``conformance.repro.shrink`` shrinks a failing
one, as any scenario).
"""
from __future__ import annotations

import random

from conformance.catalog.build import ALL, components_of, place_args, requirements, \
    subset_variant
from conformance.catalog.quick_slots import quick_on
from conformance.ops.verbs import KILL_HOWS as ALL_KILL_HOWS
from conformance.ops.scenario import Op, Scenario

QUICK_SEEDS = (4,)
FULL_SEEDS = tuple(range(1, 11))
KILL_HOWS = tuple(h for h in ALL_KILL_HOWS if h != "remove_node")  # a walk keeps its nodes


class _Model:
    def __init__(self, fixture: str, owner: str, comps=ALL):
        self.fixture, self.owner, self.comps = fixture, owner, tuple(comps)
        self.built, self.closed, self.killed = set(), set(), set()
        self.ray_up, self.started, self.buffer_mode = True, False, False
        self.written = False  # frames are known to be in the buffer
        self.hung = False  # after a hung actor, only teardown (anything else may wait forever)

    def open(self, comp):
        return comp in self.built and comp not in self.closed

    def usable(self, comp):
        return self.open(comp) and comp not in self.killed and self.ray_up

    def rules(self):
        """(weight, op) pairs whose preconditions hold, in an order fixed by
        the model alone: sets are iterated sorted, so the same seed gives the
        same walk in every process, whatever its PYTHONHASHSEED."""
        out = []
        if self.hung:
            return [(1, Op("teardown", c)) for c in sorted(self.built - self.closed)]
        for comp in self.comps:
            if comp not in self.built and self.ray_up:
                args = dict(place_args(self.fixture, comp))
                if comp == "collector" and self.usable("buffer"):
                    args["buffer"] = True
                out.append((3, Op("construct", comp, args)))
        if self.usable("collector") and not self.started:
            out.append((3, Op("iterate", "collector", {"batches": 1})))
            if self.buffer_mode and self.usable("buffer"):
                out.append((1, Op("start", "collector")))
        if self.usable("buffer") and (self.buffer_mode or self.started):
            # the buffer keeps what it held; at least one frame once an iteration wrote
            out.append((1, Op("check_data", "buffer", {"at_least": int(self.written)})))
        if self.usable("evaluator"):
            out.append((2, Op("submit", "evaluator")))
            out.append((1, Op("poll", "evaluator", {"timeout": 1})))
        for comp in sorted(self.built - self.closed - self.killed):
            if self.ray_up:
                out.append((1, Op("kill", comp, {"how": "__how__"})))
        for comp in sorted(self.built - self.closed):
            out.append((2, Op("teardown", comp)))
        for comp in sorted(self.closed):
            out.append((1, Op("teardown", comp)))
        if self.owner == "user" and self.ray_up and self.built:
            out.append((1, Op("ray_shutdown")))
        return out

    def apply(self, op: Op):
        if op.verb == "construct":
            self.built.add(op.target)
            self.buffer_mode |= bool(op.args.get("buffer"))
        elif op.verb == "start":
            self.started = True
        elif op.verb == "iterate":
            self.written |= self.buffer_mode
        elif op.verb == "kill":
            self.killed.add(op.target)
            self.hung |= op.args.get("how") == "hang"
        elif op.verb == "teardown":
            self.closed.add(op.target)
        elif op.verb == "ray_shutdown":
            self.ray_up = False


def generate(seed: int, fixture: str, owner: str, length: int = 8,
             comps=ALL) -> tuple[Op, ...]:
    rng = random.Random(f"{seed}/{fixture}/{owner}")
    model = _Model(fixture, owner, comps)
    ops = []
    while len(ops) < length:
        rules = model.rules()
        if not rules:
            break
        op = rng.choices([o for _, o in rules], weights=[w for w, _ in rules])[0]
        if op.args.get("how") == "__how__":
            op = Op("kill", op.target, {"how": rng.choice(KILL_HOWS)})
        model.apply(op)
        ops.append(op)
        if op.verb == "kill" and op.args["how"] != "hang":
            ops.append(Op("check_alive", op.target, {"expect": False}))
    # end like a careful user: everything still open is torn down
    for comp in ("collector", "evaluator", "buffer"):
        if model.open(comp):
            ops.append(Op("teardown", comp))
    return tuple(ops)


def walk(seed: int, fixture: str, owner: str, quick: bool = False, comps=ALL) -> Scenario:
    ops = generate(seed, fixture, owner, comps=comps)
    return Scenario(family="walk", fixture=fixture, owner=owner,
                    variant=subset_variant(f"seed-{seed}", comps),
                    ops=ops, spec={"num_collectors": 1}, requires=requirements(ops),
                    profiles=("quick", "full") if quick else ("full",), seed=seed)


def walks(fixture: str, owner: str, comps=ALL):
    for seed in FULL_SEEDS:
        yield walk(seed, fixture, owner, quick=(seed in QUICK_SEEDS and owner == "user" and
                                                quick_on(fixture, "walk", owner, f"seed-{seed}")),
                   comps=comps)


def walk_from_id(scenario_id: str) -> Scenario | None:
    """Any seed, not only the catalog's: ``walk/local/user/seed-1234``."""
    parts = scenario_id.split("/")
    if len(parts) != 4 or parts[0] != "walk" or not parts[3].startswith("seed-"):
        return None
    seed = int(parts[3][len("seed-"):].split("~")[0])
    return walk(seed, parts[1], parts[2],
                quick=seed in QUICK_SEEDS and quick_on(parts[1], "walk", parts[2], f"seed-{seed}"),
                comps=components_of(parts[3]))
