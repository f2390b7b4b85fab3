"""The bound on a declared varying oracle (``varies:ORACLE`` or
``varies:ORACLE@K/N`` in a scenario list, ``conformance.reports.known_failures``).

``compare`` leaves a varying oracle out of a ``fail``'s oracles: a race the
scenario does not control decides whether it fails. Unbounded, that hides
any regression of the oracle, a deterministic one included. So each
declared oracle has a *usual outcome*: failing, when the declaration's
measured rate ``@K/N`` says it failed in more than half of N runs; passing,
when it says fewer, or gives no rate. A run whose outcome is not the usual
one must see the usual one in one of the scenario's reruns (``compare
--reruns``); missing it in every one of ``RUNS`` runs (this one and its
reruns), the oracle no longer varies as declared: a drift. With fewer runs,
all unusual, the scenario is undecided: ``compare --pending`` lists it to be
rerun (``ci/torchrl-slice.sh`` does, up to ``RUNS`` runs in all). Only runs
judged by the oracles count (``pass`` or ``fail``): a rerun that crashed
says nothing about the oracle.

The usual outcome is the declaration's, never the committed report's: a
committed run may hold the rare outcome (tried and reverted on 2026-11-26:
the torchrl run of 06:07 failed ``clean_stderr`` of
``background/multinode/user/ray-shutdown-under-thread``, which failed in 1
of 9 runs before, and a bound read from it would have made the slice red on
the race).

``RUNS``: a race whose unusual outcome has rate q misses the usual one in
all of 5 runs with probability q**5: 3 % at q = 0.5 (a bare ``varies:``,
whose rate nobody measured), 0.03 % at q = 0.2, the price of a false drift;
a scenario then needs about 1/(1-q) runs, and a rerun costs 20-60 s here.
A rate of exactly one half names no usual outcome and is refused.

A scenario's *verdict* may race too (``exit/*/*/background-running`` of
torchrl crashes at the interpreter exit in some runs and passes in the
others): declared ``crash  flaky:K/N`` (the outcome in K of N runs, a pass
otherwise), it is bounded the same way by ``bound_verdict``; both sides'
verdicts must be one of the two. A race between two failures names the
other runs' outcome: ``crash  flaky:K/N  otherwise:fail[ORACLE,...]``
(torchrl's ``background/multinode/user/ray-shutdown-under-thread``: its
thread segfaulted in Ray's ``CoreWorker::Wait`` in one CI run of 2026-11-27,
``fail`` in the others).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, NamedTuple

if TYPE_CHECKING:
    from conformance.reports.known_failures import VerdictRace

#: runs that must all miss a varying oracle's usual outcome for a drift
RUNS = 5
JUDGED = ("pass", "fail")


class Bounded(NamedTuple):
    """One declared varying oracle's runs: ``state`` "varies" (a run had the
    usual outcome), "drift" (none of ``RUNS`` runs or more had it) or
    "pending" (fewer runs, none had it); ``failed`` of ``runs`` judged runs
    failed it; ``usually_fails`` is the declaration's usual outcome."""

    state: str
    failed: int
    runs: int
    usually_fails: bool


def usually_fails(rate: tuple | None) -> bool:
    """The usual outcome of a declaration's rate ``(K, N)``: fails in K of N."""
    return rate is not None and 2 * rate[0] > rate[1]


def failed(entry: dict | None, oracle: str) -> bool:
    return entry is not None and entry["verdict"] == "fail" and oracle in (entry.get("oracles") or [])


def bound(now: dict | None, reruns: list, rates: Mapping) -> dict:
    """``{oracle: Bounded}`` for each declared varying oracle whose outcome in
    this run (``now``, judged) is not its usual one. ``rates``: ``{oracle:
    (K, N) or None}`` (no rate: usually passing)."""
    out = {}
    if now is None or now["verdict"] not in JUDGED:
        return out  # not judged by the oracles: the verdict itself is compared
    runs = [e for e in [now, *reruns] if e is not None and e["verdict"] in JUDGED]
    for oracle in sorted(rates):
        usual = usually_fails(rates[oracle])
        if failed(now, oracle) == usual:
            continue
        n_failed = sum(failed(e, oracle) for e in runs)
        n_usual = n_failed if usual else len(runs) - n_failed
        state = "varies" if n_usual else "drift" if len(runs) >= RUNS else "pending"
        out[oracle] = Bounded(state, n_failed, len(runs), usual)
    return out


#: the key of a scenario's declared verdict race in ``bound``'s answers
VERDICT = "verdict"


def bound_verdict(cells: list[str], race: "VerdictRace") -> dict:
    """``{VERDICT: Bounded}`` when the first of ``cells`` (this run's verdict
    cell, then its reruns', every run counting) is not the usual outcome of
    a declared verdict race (``race.outcome`` in K of N runs, ``flaky:K/N``,
    ``race.otherwise`` in the others, a pass unless declared); ``failed``
    counts the runs with ``race.outcome``."""
    usual = usual_cell(race)
    if not cells or cells[0] == usual:
        return {}
    n_usual = sum(c == usual for c in cells)
    state = "varies" if n_usual else "drift" if len(cells) >= RUNS else "pending"
    return {VERDICT: Bounded(state, sum(c == race.outcome for c in cells), len(cells),
                             usually_fails(race.rate))}


def usual_cell(race: "VerdictRace") -> str:
    """The verdict cell a declared verdict race has in most runs."""
    return race.outcome if usually_fails(race.rate) else race.otherwise


def describe(found: dict, states=("drift", "pending"), race: "VerdictRace | None" = None) -> str:
    """"clean_stderr failed in 5 of 5 runs, usually passing" for the oracles
    in ``states`` (the usual outcome as declared); a verdict race (``race``)
    as "crash in 0 of 5 runs, usually crash"."""
    return "; ".join(
        f"{race.outcome} in {b.failed} of {b.runs} runs, usually {usual_cell(race)}"
        if o == VERDICT else
        f"{o} failed in {b.failed} of {b.runs} runs, usually "
        f"{'failing' if b.usually_fails else 'passing'}"
        for o, b in found.items() if b.state in states)
