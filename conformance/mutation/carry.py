"""Committed results carried to a changed ``impl/``: an incremental analysis.

``mutate init`` takes the committed results only for the very ``impl/``
tree they were measured on (``resume.take_committed``). Once ``impl/``
changed, ``mutate init --carry`` takes them mutant by mutant instead, as
PIT's incremental analysis does: a mutant of today's tree whose change (its
module, operator and diff, line numbers aside, one line of context around
it: ``report.change_of``) is the change of a committed mutant gets that
mutant's result; every other mutant (new code, or code next to a change) is
pending, and ``mutate run`` runs only those.

A carried kill stands only while its killing scenario still passes on the
reference in today's coverage map (else the mutant runs again); a carried
survivor keeps its output, and ``mutate answers --write`` carries its answer
to its new key by the same change. The assumption, as PIT's: a suite that killed a change at unchanged code still
does. ``mutate sample`` (the CI ratchet) checks it: each sampled kill is run
again on today's tree.
"""
from __future__ import annotations

from pathlib import Path

from conformance.mutation.resume import OUTCOMES


def change_of_mutant(module: str, operator: str, occurrence: int) -> str | None:
    """The change (``report.change_of`` of its diff) that mutant makes to
    ``module`` on disk now (written and restored by cosmic-ray); None when
    the operator has no such occurrence."""
    from cosmic_ray.mutating import use_mutation
    from cosmic_ray.plugins import get_operator

    from conformance.mutation.distributor import _diff
    from conformance.mutation.report import change_of

    with use_mutation(Path(module), get_operator(operator)(), occurrence) as (original, mutated):
        if mutated is None:
            return None
        return change_of(_diff(original, mutated, module))


def carry(db: Path, rows: list[dict], selection) -> dict:
    """Put the committed ``rows``' results into session ``db`` for its
    pending mutants that make the same change. Returns the counts
    ``{"carried", "rerun", "new"}`` (``rerun``: a kill whose killer the map
    no longer lets run; ``new``: no committed mutant made that change)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkResult

    from conformance.mutation.distributor import killer_of
    from conformance.mutation.report import change_of, session_rows

    committed: dict = {}
    for r in rows:
        if r["outcome"] in OUTCOMES:
            committed.setdefault((r["module"], r["operator"], change_of(r["diff"])), []).append(r)
    counts = {"carried": 0, "rerun": 0, "new": 0}
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        for row in session_rows(work_db):
            if row["outcome"] != "pending":
                continue
            change = change_of_mutant(row["module"], row["operator"], row["occurrence"])
            same = committed.get((row["module"], row["operator"], change)) or []
            if not same:
                counts["new"] += 1
                continue
            old = min(same, key=lambda r: abs(r["occurrence"] - row["occurrence"]))
            same.remove(old)  # one committed result for one mutant of today's tree
            if old["outcome"] == "killed" and killer_of(old["output"]) not in selection.baseline:
                counts["rerun"] += 1
                continue
            worker, test = OUTCOMES[old["outcome"]]
            work_db.set_result(row["job_id"], WorkResult(worker_outcome=worker, test_outcome=test,
                                                         output=old["output"], diff=old["diff"]))
            counts["carried"] += 1
    return counts
