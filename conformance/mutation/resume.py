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
    committed: ``init`` and ``run`` refuse a changed impl/)."""
    return {"impl_tree": _git("rev-parse", "HEAD:impl"),
            "mutant_sources_sha256": _sha256(REPO_ROOT / p for p in MUTANT_SOURCES),
            "coverage_sha256": _sha256([coverage]),
            "suite_commit": _git("rev-parse", "HEAD")}


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


def take_committed(db: Path, rows: list[dict], then: dict, now: dict) -> tuple[int, str]:
    """Put the committed ``rows``' results into session ``db`` for its
    pending mutants of the same key. Returns (how many, why none or from
    what)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkResult

    from conformance.mutation.report import session_rows

    changed = changed_since(then, now)
    if changed:
        return 0, (f"committed results not taken: {', '.join(changed)} changed since they were "
                   f"measured (at {then.get('suite_commit', 'an unrecorded commit')[:12]}); "
                   "every mutant is pending")
    committed = {r["key"]: r for r in rows if r["outcome"] in OUTCOMES}
    taken = 0
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        for row in session_rows(work_db):
            old = committed.get(row["key"])
            if row["outcome"] != "pending" or old is None or any(
                    field in old and old[field] != row[field] for field in ("occurrence", "end_line")):
                continue
            worker, test = OUTCOMES[old["outcome"]]
            work_db.set_result(row["job_id"], WorkResult(worker_outcome=worker, test_outcome=test,
                                                         output=old["output"], diff=old["diff"]))
            taken += 1
    return taken, (f"{taken} results taken from the committed ones (measured at "
                   f"{then['suite_commit'][:12]}, same impl/, operators and coverage map)")
