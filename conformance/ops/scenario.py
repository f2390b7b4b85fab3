"""Scenarios as data: an ordered list of operations plus the fixture they need.

A scenario never contains code. The driver (``conformance.run.driver``) executes
its operations, the oracles (``conformance.judge.oracles``) judge the history.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from conformance.ops import targets
from conformance.ops.verbs import VERBS  # the vocabulary, each verb declared once (no Ray, no torch)

COMPONENTS = targets.KINDS
FIXTURES = ("local", "multinode", "external")
OWNERS = ("user", "impl")

@dataclass(frozen=True)
class Op:
    """One operation: a verb, the component instance it targets (a kind, or
    a kind with an instance number: ``collector.2``, see
    :mod:`conformance.ops.targets`), and its arguments."""

    verb: str
    target: str | None = None
    args: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.verb not in VERBS:
            raise ValueError(f"unknown verb {self.verb!r}; valid: {sorted(VERBS)}")
        targets.check_op(self)

    def to_dict(self) -> dict:
        d = {"verb": self.verb}
        if self.target:
            d["target"] = self.target
        if self.args:
            d["args"] = dict(self.args)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Op":
        return cls(d["verb"], d.get("target"), dict(d.get("args", {})))

    def __str__(self) -> str:
        args = ",".join(f"{k}={v}" for k, v in sorted(self.args.items()) if k != "ops")
        tgt = f" {self.target}" if self.target else ""
        return f"{self.verb}{tgt}" + (f"({args})" if args else "")


def _check_builds_joined(ops) -> None:
    """A build left running (``construct(thread=True, wait=False)``) is joined
    (``join_build``) before any other op on its target, and by the end."""
    running: set = set()
    for op in ops:
        if op.verb == "construct" and op.args.get("wait") is False:
            if not op.args.get("thread"):
                raise ValueError(f"{op}: wait=False needs thread=True (the build's own thread)")
            running.add(op.target)
        elif op.verb == "join_build":
            if op.target not in running:
                raise ValueError(f"{op}: no build of {op.target} left running to join")
            running.discard(op.target)
        elif op.target in running or targets.writes_into(op) in running:
            building = op.target if op.target in running else targets.writes_into(op)
            raise ValueError(f"{op}: {building} is still being built (join_build it first)")
    if running:
        raise ValueError(f"builds never joined: {sorted(running)}")


@dataclass(frozen=True)
class Scenario:
    """A named list of operations, run on one fixture under one ownership case.

    ``requires`` names adapter features the scenario needs; an adapter that
    lacks one skips the scenario with the reason. ``profiles`` says which
    profiles include it (every scenario is in ``full``).
    """

    family: str
    fixture: str
    owner: str
    variant: str
    ops: tuple[Op, ...]
    spec: dict = field(default_factory=dict)
    requires: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ("full",)
    seed: int | None = None

    def __post_init__(self):
        if self.fixture not in FIXTURES:
            raise ValueError(f"unknown fixture {self.fixture!r}; valid: {FIXTURES}")
        if self.owner not in OWNERS:
            raise ValueError(f"unknown owner {self.owner!r}; valid: {OWNERS}")
        _check_builds_joined(self.ops)

    @property
    def id(self) -> str:
        return f"{self.family}/{self.fixture}/{self.owner}/{self.variant}"

    @property
    def components(self) -> tuple[str, ...]:
        """The component instances the scenario builds, in order (targets:
        ``collector``, ``collector.2``, ...)."""
        seen = []
        for op in self._all_ops():
            if VERBS[op.verb].builds and op.target not in seen:
                seen.append(op.target)
        return tuple(seen)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The component kinds the scenario builds, in order."""
        return tuple(dict.fromkeys(targets.kind_of(t) for t in self.components))

    @property
    def tests_interpreter_exit(self) -> bool:
        """About the interpreter exit itself (components left open): the driver
        leaves Ray to the exit instead of a careful user's ray.shutdown()."""
        return self.family == "exit" or any(o.verb == "drop" for o in self.ops)

    def peer_of(self, op: Op) -> "Scenario":
        """The second driver's scenario of a ``peer`` op: its ops, on the
        cluster this one runs on, as a user who calls ray.init."""
        return Scenario(family=self.family, fixture="external", owner="user",
                        variant=self.variant + "#peer",
                        ops=tuple(Op.from_dict(o) for o in op.args["ops"]), spec=self.spec)

    def _all_ops(self):
        for op in self.ops:
            yield op
            if op.verb == "peer":
                for sub in op.args.get("ops", ()):
                    yield Op.from_dict(sub)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "family": self.family,
            "fixture": self.fixture,
            "owner": self.owner,
            "variant": self.variant,
            "components": list(self.components),
            "ops": [op.to_dict() for op in self.ops],
            "spec": dict(self.spec),
            "requires": list(self.requires),
            "profiles": list(self.profiles),
            "seed": self.seed,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict) -> "Scenario":
        return cls(
            family=d["family"],
            fixture=d["fixture"],
            owner=d["owner"],
            variant=d["variant"],
            ops=tuple(Op.from_dict(o) for o in d["ops"]),
            spec=dict(d.get("spec", {})),
            requires=tuple(d.get("requires", ())),
            profiles=tuple(d.get("profiles", ("full",))),
            seed=d.get("seed"),
        )

    def describe(self) -> str:
        return " ; ".join(str(op) for op in self.ops)

