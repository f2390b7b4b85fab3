"""A failure a busy machine may have made, rerun once alone.

Timing verdicts flip under load: a teardown bound exceeded, an actor still
alive when the settle wait ran out, a worker still exiting when its grace
ran out (``load.timing_violation``). A ``fail`` with such a violation, in a
scenario that ran under CPU pressure (``load.CpuPressure``, its evidence's
``cpu_pressure``) of at least ``RERUN_PRESSURE``, is run once more, alone,
once every other scenario of the run is done (the pytest controller, after
its workers finished: ``plugin.pytest_sessionfinish``). So is such a failure
on a machine that gives no reading (no PSI: a container without
``/proc/pressure``), where a busy runner cannot be told from an idle one:
``teardown_prompt_when_healthy``'s 1.5 s is tight enough for that to
matter. The rerun decides:
the verdict stands only if the rerun agrees, and the report's entry is the
rerun's, with both runs in ``evidence.rerun``.
"""
from __future__ import annotations

import os
import tempfile

from conformance.run.cpu_pressure import timing_violation

#: the CPU pressure from which a timing failure is rerun alone. One run of the
#: quick profile with -n 2, nothing else running, holds about 0.65 (see
#: ``load``); two busy loops on both cores beside it, 0.9-1.0. Below 0.5 the
#: machine was not oversubscribed: the failure is the implementation's.
RERUN_PRESSURE = 0.5


def needs_rerun(entry: dict, unmeasured: bool = False) -> str | None:
    """Why ``entry`` is to be rerun alone ("ORACLES failed at CPU pressure
    P"), or None. ``unmeasured``: a timing failure without a pressure
    reading is rerun too (the suite's own runs); without it, only one
    measured under pressure (``repro.upstream.undecided`` reads committed
    reports by that rule: one without a reading was judged as it stands)."""
    evidence = entry.get("evidence") or {}
    pressure = evidence.get("cpu_pressure")
    if entry.get("verdict") != "fail" or "rerun" in evidence \
            or (pressure is None and not unmeasured) \
            or (pressure is not None and pressure < RERUN_PRESSURE):
        return None
    timed = sorted({o for o, msgs in (evidence.get("violations") or {}).items()
                    for m in msgs if timing_violation(o, m)})
    if not timed:
        return None
    if pressure is None:
        return f"{', '.join(timed)} failed, CPU pressure unmeasured (no PSI)"
    return f"{', '.join(timed)} failed at CPU pressure {pressure:.2f}"


def run_summary(entry: dict) -> dict:
    """What the report keeps of each of the two runs."""
    evidence = entry.get("evidence") or {}
    return {"verdict": entry["verdict"], "oracles": entry.get("oracles") or [],
            "violations": evidence.get("violations") or {},
            "unknown": evidence.get("unknown") or {},
            "cpu_pressure": evidence.get("cpu_pressure"), "duration": entry.get("duration")}


def merged(first: dict, second: dict, why: str) -> dict:
    """The rerun's entry (run alone, it decides), with both runs in its
    evidence: ``evidence.rerun`` = {why, agreed, runs: [first, second]}."""
    agreed = (first["verdict"], sorted(first.get("oracles") or [])) == \
        (second["verdict"], sorted(second.get("oracles") or []))
    return {**second, "evidence": {**second["evidence"], "rerun": {
        "why": why, "agreed": agreed, "runs": [run_summary(first), run_summary(second)]}}}


def rerun_alone(entries: list[dict], impl: str, adapter, address: str | None,
                preload: list[str]) -> list[dict]:
    """``entries`` with every one ``needs_rerun`` names (a timing failure
    without a pressure reading too) replaced by the merge
    of its two runs; the reruns run one after the other, in a session of
    their own (a fresh fork server and clusters)."""
    from conformance import catalog
    from conformance.run.execute import run_scenario
    from fixtures.session import SessionResources

    todo = [(i, why) for i, e in enumerate(entries) if (why := needs_rerun(e, unmeasured=True))]
    if not todo:
        return entries
    out = list(entries)
    session = SessionResources(preload=preload)
    try:
        with tempfile.TemporaryDirectory(prefix="rlc-rerun-") as scratch:
            for i, why in todo:
                scenario = catalog.find(entries[i]["id"])
                workdir = os.path.join(scratch, f"rerun-{i}")
                out[i] = merged(entries[i], run_scenario(scenario, impl, adapter, session,
                                                         workdir, address), why)
    finally:
        session.close()
    return out


def describe(entry: dict) -> str | None:
    """One line about the entry's rerun (None if it had none)."""
    rerun = (entry.get("evidence") or {}).get("rerun")
    if not rerun:
        return None
    first, second = rerun["runs"]

    def cell(run):
        return run["verdict"] + (f" [{', '.join(run['oracles'])}]" if run["oracles"] else "") \
            + (f" (CPU pressure {run['cpu_pressure']:.2f})" if run["cpu_pressure"] is not None
               else "")
    return (f"{entry['id']}: rerun alone ({rerun['why']}): {cell(first)}, then {cell(second)}"
            + ("" if rerun["agreed"] else ": the rerun's verdict stands"))
