"""A mutation session that goes on where the committed results stopped.

cosmic-ray's session database (``reports/mutation/session-P.sqlite``) is
not committed: a fresh clone has none, and its ``mutate init`` would start
the analysis again from the first mutant. ``mutate report`` therefore
records, beside the results, what they were measured on (``provenance``:
``impl/``'s git tree, the operators and filters that made the mutants, the
coverage map that chose the scenarios, the suite's commit), and ``mutate
init`` takes every committed result whose mutant is the same into the new
session (``take_committed``): a killed or interrupted analysis goes on in the
next clone, as cosmic-ray's own resume does within one.

The same mutant: same key (position, operator, ordinal) in the same
``impl/`` tree made by the same operators. Results are taken only when the
tree, the operators and the coverage map are all unchanged; the suite's
commit may differ (a newer suite can kill a committed survivor: that is an
answer, ``killed since by scenario X``, not a reason to forget the result).
"""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from fixtures.rayenv import REPO_ROOT

#: what makes the mutants and their ids, besides impl/ itself
MUTANT_SOURCES = ("ci/mutation.toml", "conformance/mutation/operators.py", "conformance/mutation/filters.py")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def _sha256(paths) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(Path(path).read_bytes())
    return h.hexdigest()


def provenance(coverage: Path) -> dict:
    """What a session's results were measured on (impl/ as committed: a
    mutation run refuses to start otherwise)."""
    return {"impl_tree": _git("rev-parse", "HEAD:impl"),
            "mutant_sources_sha256": _sha256(REPO_ROOT / p for p in MUTANT_SOURCES),
            "coverage_sha256": _sha256([coverage]),
            "suite_commit": _git("rev-parse", "HEAD")}


def unchanged(then: dict, now: dict) -> list[str]:
    """What differs between two provenances, of what makes a result
    reusable (empty: the committed results hold for this tree)."""
    names = {"impl_tree": "impl/", "mutant_sources_sha256": "the operators or filters",
             "coverage_sha256": "the coverage map"}
    return [label for field, label in names.items() if then.get(field) != now[field]]


#: a committed row's outcome -> cosmic-ray's (worker outcome, test outcome)
OUTCOMES = {"killed": ("normal", "killed"), "survived": ("normal", "survived"),
            "incompetent": ("normal", "incompetent"), "no-test": ("no-test", None),
            "exception": ("exception", None), "abnormal": ("abnormal", None)}


def take_committed(db: Path, rows: list[dict], then: dict, now: dict) -> tuple[int, str]:
    """Put the committed ``rows``' results into session ``db`` for its
    pending mutants of the same key. Returns (how many, why none or from
    what)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkResult

    from conformance.mutation.report import session_rows

    changed = unchanged(then, now)
    if changed:
        return 0, (f"committed results not taken: {', '.join(changed)} changed since they were "
                   f"measured (at {then.get('suite_commit', 'an unrecorded commit')[:12]}); "
                   "every mutant is pending")
    committed = {r["key"]: r for r in rows if r["outcome"] in OUTCOMES}
    taken = 0
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        for row in session_rows(work_db):
            old = committed.get(row["key"])
            if row["outcome"] != "pending" or old is None:
                continue
            worker, test = OUTCOMES[old["outcome"]]
            work_db.set_result(row["job_id"], WorkResult(worker_outcome=worker, test_outcome=test,
                                                         output=old["output"], diff=old["diff"]))
            taken += 1
    return taken, (f"{taken} results taken from the committed ones (measured at "
                   f"{then['suite_commit'][:12]}, same impl/, operators and coverage map)")
