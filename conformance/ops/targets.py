"""Targets: the component instances a scenario's operations name.

A target is a component kind (``collector``, ``buffer``, ``evaluator``),
optionally followed by an instance number from 2 on: ``collector.2`` is a
second collector, built and torn down on its own. The kind decides which of
the adapter's calls builds and tears it down (``make_collector``,
``teardown("collector", obj)``); the target names the object in the
driver's context, its actors in the probes, and its variable in a
standalone script (``collector_2``). A bare kind is the first instance, so a
scenario of one component of each kind reads as it always did.

No Ray, no harness: names only.
"""
from __future__ import annotations

import re

KINDS = ("collector", "buffer", "evaluator")
_TARGET = re.compile(r"^(?P<kind>[a-z]+)(?:\.(?P<n>[2-9]|[1-9][0-9]+))?$")


def parse(target: str) -> tuple[str, int]:
    """``(kind, instance number)``; raises ValueError for a name that is none."""
    found = _TARGET.match(target) if isinstance(target, str) else None
    if not found or found["kind"] not in KINDS:
        raise ValueError(f"unknown target {target!r}; valid: a kind of {KINDS}, optionally "
                         "with an instance number from 2 on (collector.2)")
    return found["kind"], int(found["n"] or 1)


def kind_of(target: str | None) -> str | None:
    """The component kind of a target (None for an op without one)."""
    return None if target is None else parse(target)[0]


def instance(kind: str, n: int = 1) -> str:
    """The target of instance ``n`` of ``kind``: the kind itself for the first."""
    return kind if n == 1 else f"{kind}.{n}"


def variable(target: str) -> str:
    """The target's variable name in a standalone script."""
    return target.replace(".", "_")


def writes_into(op) -> str | None:
    """The buffer a collector's construct op writes into: its ``buffer``
    argument, True for the first buffer or the buffer's target."""
    into = op.args.get("buffer") if op.verb == "construct" else None
    if not into:
        return None
    return "buffer" if into is True else into


def actor_name(base: str, named) -> str:
    """The name of a named eval worker: ``named=True`` is the scenario's
    name, a string gives a second one (``base-<named>``); two workers built
    with the same ``named`` ask for the same name."""
    return base if named is True else f"{base}-{named}"


def check_op(op) -> None:
    """The target and the instance arguments of one op are well formed."""
    if op.target is not None:
        parse(op.target)
    into = op.args.get("buffer") if op.verb == "construct" else None
    if isinstance(into, str) and kind_of(into) != "buffer":
        raise ValueError(f"{op.verb} {op.target}: buffer={into!r} is not a buffer target")
    named = op.args.get("named")
    if named not in (None, True, False) and not (isinstance(named, str) and named.isalnum()):
        raise ValueError(f"{op.verb} {op.target}: named={named!r}: True or a short alnum suffix")


def at_once(ops) -> bool:
    """Two instances of one kind are open at the same time: a target is
    open from its construct until its teardown (or its collector's
    exhaust, which tears it down)."""
    open_now: set = set()
    for op in ops:
        if op.target is None:
            continue
        if op.verb == "construct":  # a second one that must fail still tries
            open_now.add(op.target)
            kind = kind_of(op.target)
            if sum(1 for t in open_now if kind_of(t) == kind) > 1:
                return True
        elif op.verb in ("teardown", "exhaust"):
            open_now.discard(op.target)
    return False
