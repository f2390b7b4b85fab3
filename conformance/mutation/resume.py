"""A mutation session that goes on where the committed results stopped.

cosmic-ray's session database (``reports/mutation/session-P.sqlite``) is
not committed: a fresh clone has none, and its ``mutate init`` would start
the analysis again from the first mutant. So ``mutate init`` records beside
the new database what its mutants and their scenarios come from
(``session-P.provenance.json``: ``impl/``'s git tree, a hash of what makes
the mutants, of the coverage map, and the suite's commit); ``mutate run``
refuses to add results to a session whose tree or map is no longer the
checkout's; ``mutate report`` copies that record into ``score.json``; and
``mutate init`` in a fresh clone takes every committed result whose mutant
is the same into its new session (``take_committed``), as cosmic-ray's own
resume does within one clone.

The same mutant: the same key (position, operator, ordinal), occurrence
and end in the same ``impl/`` tree made by the same operators. Results are
taken only when the tree, the mutants' sources and the coverage map are all
unchanged; the suite's commit may differ (a newer suite can kill a
committed survivor: that is an answer, ``killed since by scenario X``, not
a reason to forget the result).
"""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from fixtures.rayenv import REPO_ROOT

#: what makes the mutants and their ids, besides impl/ itself: the operators
#: subset, our operators and filters and their declaration, cosmic-ray's pin
#: (its core operators; parso's positions)
MUTANT_SOURCES = ("ci/mutation.toml", "ci/mutation.lock", "conformance/mutation/operators.py",
                  "conformance/mutation/filters.py",
                  "conformance/mutation/plugins/rlc_mutation-1.0.dist-info/entry_points.txt")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def _sha256(paths) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(Path(path).read_bytes())
    return h.hexdigest()


def provenance(coverage: Path) -> dict:
    """What this checkout's mutants and their scenarios come from (impl/ as
    committed: ``init`` and ``run`` refuse a changed impl/), with the
    scenarios the coverage map lets a mutant run (those that pass on the
    reference)."""
    return {"impl_tree": _git("rev-parse", "HEAD:impl"),
            "mutant_sources_sha256": _sha256(REPO_ROOT / p for p in MUTANT_SOURCES),
            "coverage_sha256": _sha256([coverage]),
            "coverage_scenarios": scenario_prints(coverage),
            "suite_commit": _git("rev-parse", "HEAD")}


def scenario_prints(coverage: Path) -> dict:
    """``{scenario id: a hash of the lines of impl/ it runs}`` of the map's
    scenarios that pass on the reference: one measured again differently
    is told from one that was not."""
    from conformance.mutation.coverage_map import load

    cmap = load(coverage)
    runs: dict = {sid: [] for sid, b in cmap["baseline"].items() if b["verdict"] == "pass"}
    for module, per in sorted(cmap["lines"].items()):
        for line, ids in sorted(per.items(), key=lambda kv: int(kv[0])):
            for sid in ids:
                if sid in runs:
                    runs[sid].append(f"{module}:{line}")
    return {sid: hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
            for sid, lines in sorted(runs.items())}


def provenance_path(db: Path) -> Path:
    """The record ``init`` writes beside session ``db``."""
    return Path(db).with_suffix(".provenance.json")


def record(db: Path, coverage: Path) -> dict:
    """Write (at ``init``) what session ``db`` is measured on."""
    import json

    then = provenance(coverage)
    provenance_path(db).write_text(json.dumps(then, indent=1, sort_keys=True) + "\n")
    return then


def recorded(db: Path) -> dict | None:
    import json

    path = provenance_path(db)
    return json.loads(path.read_text()) if path.exists() else None


def changed_since(then: dict, now: dict) -> list[str]:
    """What differs between two provenances, of what makes a result
    reusable (empty: the committed results hold for this tree)."""
    names = {"impl_tree": "impl/", "mutant_sources_sha256": "what makes the mutants (operators, filters, cosmic-ray)",
             "coverage_sha256": "the coverage map"}
    return [label for field, label in names.items() if then.get(field) != now[field]]


#: a committed row's outcome -> cosmic-ray's (worker outcome, test outcome)
OUTCOMES = {"killed": ("normal", "killed"), "survived": ("normal", "survived"),
            "incompetent": ("normal", "incompetent"), "no-test": ("no-test", None),
            "exception": ("exception", None), "abnormal": ("abnormal", None)}


def grown(then: dict, now: dict) -> list[str] | None:
    """The scenarios the coverage map gained since ``then`` when that is all
    that changed (the same impl/ and mutants; every scenario ``then`` could
    run still there, passing, running the same lines); None otherwise."""
    if then.get("impl_tree") != now["impl_tree"] or \
            then.get("mutant_sources_sha256") != now["mutant_sources_sha256"] or \
            not isinstance(then.get("coverage_scenarios"), dict):
        return None
    before, after = then["coverage_scenarios"], now["coverage_scenarios"]
    if any(after.get(sid) != lines for sid, lines in before.items()):
        return None
    return sorted(set(after) - set(before)) or None


def take_committed(db: Path, rows: list[dict], then: dict, now: dict,
                   selection=None) -> tuple[int, str]:
    """Put the committed ``rows``' results into session ``db`` for its
    pending mutants of the same key. Returns (how many, why none or from
    what).

    When the coverage map only gained scenarios (``grown``; ``selection``:
    the new map's ``selection.Selection``), a kill is taken if its killer
    is still there, and a survivor becomes a first-pass (shallow) survivor
    that passed the scenarios it ran then (the map's old ones covering it):
    ``mutate run --deep`` runs only the new ones on it. The old scenarios
    are taken to be unchanged (their ids are the same)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkResult

    from conformance.mutation.distributor import SHALLOW
    from conformance.mutation.report import session_rows

    changed = changed_since(then, now)
    added = grown(then, now) if changed == ["the coverage map"] and selection is not None else None
    if changed and added is None:
        return 0, (f"committed results not taken: {', '.join(changed)} changed since they were "
                   f"measured (at {then.get('suite_commit', 'an unrecorded commit')[:12]})"
                   + ("" if changed != ["the coverage map"] else
                      " other than by added scenarios") + "; every mutant is pending")
    committed = {r["key"]: r for r in rows if r["outcome"] in OUTCOMES}
    taken, deeper = 0, 0
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        for row in session_rows(work_db):
            old = committed.get(row["key"])
            if row["outcome"] != "pending" or old is None or any(
                    field in old and old[field] != row[field] for field in ("occurrence", "end_line")):
                continue
            worker, test = OUTCOMES[old["outcome"]]
            output = old["output"]
            if added is not None:
                output = _on_the_grown_map(old, row, selection, set(then["coverage_scenarios"]))
                if output is None:
                    continue  # its killer is gone from the map: run it again
                deeper += output.startswith(SHALLOW) and not old["output"].startswith(SHALLOW)
            work_db.set_result(row["job_id"], WorkResult(worker_outcome=worker, test_outcome=test,
                                                         output=output, diff=old["diff"]))
            taken += 1
    if added is None:
        return taken, (f"{taken} results taken from the committed ones (measured at "
                       f"{then['suite_commit'][:12]}, same impl/, operators and coverage map)")
    return taken, (f"{taken} results taken from the committed ones (measured at "
                   f"{then['suite_commit'][:12]}, same impl/ and operators); the coverage map gained "
                   f"{len(added)} scenario(s): {deeper} survivor(s) they cover are first-pass survivors "
                   "now, `mutate run --deep` runs the new scenarios on them")


def unknown_of(output: str) -> set:
    """The scenarios a survivor's output names as unknown (a harness error
    under the mutant: not passed, so a deeper run gives them another go)."""
    from conformance.mutation.distributor import UNKNOWN

    return {sid for line in output.splitlines() if line.startswith(UNKNOWN)
            for sid in line[len(UNKNOWN):].split()}


def _on_the_grown_map(old: dict, row: dict, selection, before: set) -> str | None:
    """A committed result's output on a map that gained scenarios (None: not
    taken, its killer is no longer a scenario the map lets run)."""
    from conformance.mutation.distributor import SHALLOW, killer_of, passed_of, statement_line

    if old["outcome"] == "killed":
        return old["output"] if killer_of(old["output"]) in selection.baseline else None
    if old["outcome"] != "survived":
        return old["output"]
    statement = statement_line((REPO_ROOT / row["module"]).read_text(), (row["line"], row["col"]))
    covering = selection.covering(row["module"], row["line"], row["end_line"], statement)
    if old["output"].startswith(SHALLOW):  # it passed what its output lists, first pass or not
        passed = passed_of(old["output"])
    else:  # every covering scenario it ran passed, but those the harness could not judge
        passed = (covering & before) - unknown_of(old["output"])
    if covering <= passed:
        return old["output"]  # nothing new covers it
    return "\n".join([f"{SHALLOW}{len(passed & covering)} of {len(covering)} covering scenario(s) "
                      "passed (the coverage map gained scenarios since)",
                      f"passed: {' '.join(sorted(passed))}"])
