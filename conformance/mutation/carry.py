"""Committed results carried to a changed ``impl/``: an incremental analysis.

``mutate init`` takes the committed results only for the very ``impl/``
tree they were measured on (``resume.take_committed``). Once ``impl/``
changed, ``mutate init --carry`` takes them mutant by mutant instead: a
mutant of today's tree whose change (its module, operator and diff, line
numbers aside, one line of context around it: ``report.change_of``) is the
change of a committed mutant gets that mutant's result where it still holds
(``still_holds``); every other mutant (new code, code next to an edit, or a
result that no longer holds) is pending, and ``mutate run`` runs only those.

Where a result still holds: a kill while its killing scenario still runs the
mutant's lines in today's coverage map (and passes on the reference there);
a first-pass (shallow) survivor always, ``mutate run --deep`` running every
covering scenario it has not passed; a survivor that passed all its
covering scenarios while no more scenarios run its lines today than it
passed (a survivor that new or moved scenarios reach runs again). Only kills
and survivors are carried. This is weaker than PIT's incremental analysis,
which keeps a result only while neither the class nor its covering tests
changed: a change here is matched at its own lines, the killing scenario
may have changed since, and a survivor is compared by the number of its
covering scenarios, not by their ids (a full survivor's output does not list
them). The CI sample (``mutate sample``) runs sampled kills again on today's
tree; ``session-P.provenance.json`` records what was carried, from which
tree (``score.json``'s ``provenance.carried``).
"""
from __future__ import annotations

from pathlib import Path

from conformance.mutation.resume import OUTCOMES


#: the outcomes carried: the others say what the old run's harness met, not
#: what the suite does to the mutant
CARRIED = ("killed", "survived")


def mutant_diff(module: str, operator: str, occurrence: int, args: dict | None = None) -> str | None:
    """The diff that mutant makes to ``module`` as it is now, computed in
    memory (the file on disk is never written); None when the operator has
    no such occurrence."""
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator

    from conformance.mutation.distributor import _diff

    source = Path(module).read_text()
    mutated = mutate_code(source, get_operator(operator)(**(args or {})), occurrence)
    return None if mutated is None else _diff(source, mutated, module)


def _passed_count(output: str) -> int | None:
    """How many covering scenarios a full (not shallow) survivor passed, from
    its output ("survived: N covering scenario(s) passed"); 0 for one no
    scenario executed; None when the output does not say."""
    from conformance.mutation.distributor import SHALLOW

    if output.startswith(SHALLOW):
        return None
    if "no scenario" in output.splitlines()[0]:
        return 0
    words = output.split()
    return int(words[1]) if len(words) > 1 and words[1].isdigit() else None


def still_holds(old: dict, covering: set) -> bool:
    """Whether a committed result holds for the mutant of today's tree that
    makes its change, the scenarios that run its lines now being
    ``covering``: a kill while its killer still runs them; a shallow survivor
    always (``mutate run --deep`` runs what it has not passed); a full
    survivor while no more scenarios run its lines than it passed (one that
    more scenarios reach now runs again)."""
    from conformance.mutation.distributor import SHALLOW, killer_of

    if old["outcome"] == "killed":
        return killer_of(old["output"]) in covering
    if old["output"].startswith(SHALLOW):
        return True
    passed = _passed_count(old["output"])
    return passed is not None and len(covering) <= passed


def carry(db: Path, rows: list[dict], selection) -> dict:
    """Put the committed ``rows``' results into session ``db`` for its
    pending mutants that make the same change, where they still hold
    (``still_holds``). Returns the counts ``{"carried", "rerun", "new"}``
    (``rerun``: the same change, but a kill whose killer no longer runs its
    lines or a survivor more scenarios reach now; ``new``: no committed
    mutant made that change)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkResult

    from conformance.mutation.distributor import statement_line
    from conformance.mutation.report import change_of, session_rows

    committed: dict = {}
    for r in rows:
        if r["outcome"] in CARRIED:
            committed.setdefault((r["module"], r["operator"], change_of(r["diff"])), []).append(r)
    counts = {"carried": 0, "rerun": 0, "new": 0}
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        args_of = {item.job_id: item.mutations[0].operator_args for item in work_db.work_items}
        for row in session_rows(work_db):
            if row["outcome"] != "pending":
                continue
            diff = mutant_diff(row["module"], row["operator"], row["occurrence"],
                               args_of.get(row["job_id"]))
            same = committed.get((row["module"], row["operator"], change_of(diff or "")))
            if not same:
                counts["new"] += 1
                continue
            old = min(same, key=lambda r: abs(r["occurrence"] - row["occurrence"]))
            same.remove(old)  # one committed result for one mutant of today's tree
            statement = statement_line(Path(row["module"]).read_text(), (row["line"], row["col"]))
            if not still_holds(old, selection.covering(row["module"], row["line"],
                                                       row["end_line"], statement)):
                counts["rerun"] += 1
                continue
            worker, test = OUTCOMES[old["outcome"]]
            work_db.set_result(row["job_id"], WorkResult(worker_outcome=worker, test_outcome=test,
                                                         output=old["output"], diff=diff))
            counts["carried"] += 1
    return counts
