"""The bound on a declared varying oracle (``varies:ORACLE`` in a scenario
list, ``conformance.reports.known_failures``).

``compare`` leaves a varying oracle out of a ``fail``'s oracles: a race the
scenario does not control decides whether it fails. Unbounded, that hides
any regression of the oracle, a deterministic one included. So an oracle
declared varying that fails in this run must be seen *not* failing in one
of the scenario's reruns (``compare --reruns``); one that fails in every
one of ``RUNS`` runs (this one and its reruns) no longer varies: a drift.
With fewer runs, all failing, the scenario is undecided: ``compare
--pending`` lists it to be rerun (``ci/torchrl-slice.sh`` does, up to
``RUNS`` runs in all). Only runs judged by the oracles count (``pass`` or
``fail``): a rerun that crashed says nothing about the oracle.

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

#: runs in which a varying oracle must fail, every one, to be a drift
RUNS = 5
JUDGED = ("pass", "fail")


def failed(entry: dict | None, oracle: str) -> bool:
    return entry is not None and entry["verdict"] == "fail" and oracle in (entry.get("oracles") or [])


def bound(now: dict | None, reruns: list, oracles) -> dict:
    """``{oracle: (state, failed runs, judged runs)}`` for each declared
    varying oracle that failed in this run (``now``); ``state`` is "varies"
    (a run without it), "drift" (it failed in every one of ``RUNS`` runs or
    more) or "pending" (fewer runs, all failing it)."""
    out = {}
    runs = [e for e in [now, *reruns] if e is not None and e["verdict"] in JUDGED]
    for oracle in sorted(oracles):
        if not failed(now, oracle):
            continue
        n_failed = sum(failed(e, oracle) for e in runs)
        state = "varies" if n_failed < len(runs) else "drift" if len(runs) >= RUNS else "pending"
        out[oracle] = (state, n_failed, len(runs))
    return out


def describe(found: dict, states=("drift", "pending")) -> str:
    """"clean_stderr failed in 5 of 5 runs" for the oracles in ``states``."""
    return "; ".join(f"{o} failed in {k} of {n} runs" for o, (state, k, n) in found.items()
                     if state in states)
