"""The bound on a declared varying oracle (``varies:ORACLE`` in a scenario
list, ``conformance.reports.known_failures``).

``compare`` leaves a varying oracle out of a ``fail``'s oracles: a race the
scenario does not control decides whether it fails. Unbounded, that hides
any regression of the oracle, a deterministic one included. So a run whose
varying oracle has not the committed outcome (failed there and not here, or
the other way) must be seen with the committed outcome in one of the
scenario's reruns (``compare --reruns``): an oracle that mostly passes must
still pass sometimes, and one that mostly fails (a race the implementation
mostly loses) must still fail sometimes. One that misses the committed
outcome in every one of ``RUNS`` runs (this one and its reruns) no longer
varies: a drift. With fewer runs, all without it, the scenario is
undecided: ``compare --pending`` lists it to be rerun (``ci/torchrl-slice.sh``
does, up to ``RUNS`` runs in all). Only runs judged by the oracles count
(``pass`` or ``fail``): a rerun that crashed says nothing about the oracle.

``RUNS``: at a failure rate of 0.5 a race fails all of 5 runs with
probability 1/32 (3 %), the price of a false drift; a scenario then needs
one rerun on average, and a rerun costs 20-60 s here. The races declared in
``ci/torchrl-slice.txt`` are rarer: measured 2026-11-25 (torchrl 0.14.1, Ray
2.60, 8 runs, `multinode`), ``clean_stderr`` of
``background/multinode/user/ray-shutdown-under-thread`` failed in 0 of 8
(it failed in a CI run of 2026-11-24); ``others_untouched`` of
``order/multinode/user/collector(shutdown_ray)>evaluator>buffer`` failed in
8 of 8 once it judged the eval worker's actor still PENDING_CREATION (its
"race" was whether that actor was ALIVE before the teardown), so the slice
no longer declares it varying.
"""
from __future__ import annotations

#: runs in which a varying oracle must miss its committed outcome, every one,
#: to be a drift
RUNS = 5
JUDGED = ("pass", "fail")


def failed(entry: dict | None, oracle: str) -> bool:
    return entry is not None and entry["verdict"] == "fail" and oracle in (entry.get("oracles") or [])


def bound(committed: dict | None, now: dict | None, reruns: list, oracles) -> dict:
    """``{oracle: (state, failed runs, judged runs, failed in committed)}`` for
    each declared varying oracle whose outcome in this run (``now``) is not
    the committed one; ``state`` is "varies" (a run with the committed
    outcome), "drift" (none in ``RUNS`` runs or more) or "pending" (fewer
    runs, none with it)."""
    if now is None or now["verdict"] not in JUDGED:
        return {}
    out = {}
    runs = [e for e in [now, *reruns] if e is not None and e["verdict"] in JUDGED]
    for oracle in sorted(oracles):
        expected = failed(committed, oracle)
        if failed(now, oracle) == expected:
            continue
        n_failed = sum(failed(e, oracle) for e in runs)
        seen = n_failed > 0 if expected else n_failed < len(runs)
        state = "varies" if seen else "drift" if len(runs) >= RUNS else "pending"
        out[oracle] = (state, n_failed, len(runs), expected)
    return out


def describe(found: dict, states=("drift", "pending")) -> str:
    """"clean_stderr failed in 5 of 5 runs", or "teardown_never_raises failed
    in 0 of 5 runs (committed: failed)", for the oracles in ``states``."""
    return "; ".join(f"{o} failed in {k} of {n} runs" + (" (committed: failed)" if expected else "")
                     for o, (state, k, n, expected) in found.items() if state in states)
