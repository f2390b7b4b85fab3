"""Random lifecycle walks: seeded op sequences, replayable and shrinkable.

Like Hypothesis' ``RuleBasedStateMachine``, a small model of the components'
state (built, open, killed, closed; Ray up) gives each rule its
precondition; the rules are the verbs' own (``Verb.walk``, declared beside
each verb in ``conformance.ops.verbs``). A seed fixes every choice, so ``walk/<fixture>/<owner>/seed-<n>``
always names the same sequence (``conformance.repro.shrink`` shrinks a failing
one, as any scenario).
"""
from __future__ import annotations

import random

from conformance.catalog.build import ALL, components_of, place_args, requirements, \
    subset_variant
from conformance.catalog.quick_slots import quick_on
from conformance.ops.verbs import VERBS
from conformance.ops.scenario import Op, Scenario

QUICK_SEEDS = (4,)
FULL_SEEDS = tuple(range(1, 11))


class _Model:
    """The components' state as a walk sees it; each verb's ``WalkRule``
    (``conformance.ops.verbs``) reads it for its precondition and updates it
    with its effect."""

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

    def place_args(self, comp) -> dict:
        return place_args(self.fixture, comp)

    def rules(self):
        """(weight, op) pairs whose preconditions hold: each verb's proposals
        in the order the verbs are declared, each in an order fixed by the
        model alone (sets are iterated sorted), so the same seed gives the
        same walk in every process, whatever its PYTHONHASHSEED."""
        return [(weight, Op(v.name, target, args))
                for v in VERBS.values() if v.walk is not None and (v.walk.when_hung or not self.hung)
                for weight, target, args in v.walk.propose(self)]

    def apply(self, op: Op):
        VERBS[op.verb].walk.effect(self, op)


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
        rule = VERBS[op.verb].walk
        if rule.draw is not None:
            op = Op(op.verb, op.target, rule.draw(op.args, rng))
        model.apply(op)
        ops.append(op)
        ops += [Op(*then) for then in rule.then(op)]
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
