"""Shrinking a failing scenario: the fewest ops that still fail the same way.

    python -m conformance shrink ID --impl NAME

``shrink`` is the search (any scenario, any predicate); ``shrink_against``
runs it against an implementation: each candidate in its own driver, "the
same way" meaning the same verdict with at least the same failing oracles.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

from conformance.catalog.build import requirements
from conformance.ops.scenario import Scenario
from conformance.ops.targets import KINDS


def shrink(scenario: Scenario, still_fails) -> Scenario:
    """The smallest scenario (by removing ops) for which ``still_fails`` holds.

    ``still_fails(candidate) -> bool`` runs the candidate (ddmin-style: try
    removing chunks of halving size, then single ops, until nothing goes;
    first, every op of each further instance at once: ``collector.2``, then
    of each component).
    """
    ops = list(scenario.ops)

    def candidate(kept):
        return Scenario(family=scenario.family, fixture=scenario.fixture, owner=scenario.owner,
                        variant=scenario.variant + "-shrunk", ops=tuple(kept),
                        spec=scenario.spec, requires=requirements(kept, scenario.spec), seed=scenario.seed)

    def fails(kept) -> bool:
        try:
            smaller = candidate(kept)
        except ValueError:  # not a scenario (a build left running, never joined): not tried
            return False
        return still_fails(smaller)

    # Whole instances first: a scenario of several instances of one kind
    # often fails with one of them (collector.2) left out altogether; then
    # whole components (a build left running and its join go together).
    further = [t for t in scenario.components if t not in KINDS]
    for target in further + [t for t in scenario.components if t in KINDS]:
        kept = [o for o in ops if o.target != target]
        if kept and len(kept) < len(ops) and fails(kept):
            ops = kept
    chunk = max(1, len(ops) // 2)
    while chunk >= 1:
        i, progressed = 0, False
        while i < len(ops):
            kept = ops[:i] + ops[i + chunk:]
            if kept and fails(kept):
                ops, progressed = kept, True
            else:
                i += chunk
        if not progressed:
            chunk //= 2
    return candidate(ops)


@dataclass
class Shrunk:
    """What shrinking found: the first run's entry, the smallest scenario
    failing the same way (the scenario itself when it passed) and the runs."""

    first: dict
    small: Scenario
    runs: int


def shrink_against(scenario: Scenario, impl: str, adapter, log=print) -> Shrunk:
    """Run ``scenario`` against ``impl``; if it does not pass, shrink it."""
    from conformance.run.execute import run_scenario
    from conformance.run.execute import preload_modules
    from fixtures.session import SessionResources

    session = SessionResources(preload=preload_modules(adapter))
    runs = 0
    with tempfile.TemporaryDirectory(prefix="rlc-shrink-") as scratch:  # the runs' workdirs

        def outcome(s):
            nonlocal runs
            runs += 1
            entry = run_scenario(s, impl, adapter, session, os.path.join(scratch, f"run-{runs}"))
            log(f"  run {runs}: {len(s.ops)} ops -> {entry['verdict']} {entry['oracles']}")
            return entry

        try:
            first = outcome(scenario)
            if first["verdict"] == "pass":
                return Shrunk(first, scenario, runs)
            want = (first["verdict"], set(first["oracles"]))

            def still_fails(candidate):
                e = outcome(candidate)
                return e["verdict"] == want[0] and want[1] <= set(e["oracles"])

            return Shrunk(first, shrink(scenario, still_fails), runs)
        finally:
            session.close()
