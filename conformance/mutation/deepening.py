"""Shallow survivors sent deeper (``mutate run --deep``), kept beside the
session in ``session-P.shallow.json``.

cosmic-ray runs only the work items that have no result, so ``--deep``
deletes a shallow survivor's first-pass result. Until its deeper result is
in, the record here keeps what that result said: the scenarios it passed
(the deeper run skips them, also after a stop or in another shard), its
first-pass output and its diff. ``mutate report`` counts such a mutant as
the shallow survivor it still is, with that diff: a stopped ``--deep`` pass
leaves a score (a lower bound, as the first pass's), never a hole of
pending mutants the score would leave out.
"""
from __future__ import annotations

import json
import os
from pathlib import Path


def path_of(db: Path) -> Path:
    return Path(db).with_suffix(".shallow.json")


def load(db: Path) -> dict[str, dict]:
    """``{job id: {"passed": [...], "output": str | None, "diff": str | None}}``."""
    path = path_of(db)
    raw = json.loads(path.read_text()) if path.exists() else {}
    return {job: {"passed": list(rec.get("passed", ())), "output": rec.get("output"),
                  "diff": rec.get("diff")} for job, rec in raw.items()}


def save(db: Path, records: dict[str, dict]) -> None:
    """Whole or not at all (``mutate report`` reads it without the shards' lock)."""
    path = path_of(db)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def record(passed: list, result) -> dict:
    """The record of a shallow survivor's first-pass ``result`` (a WorkResult)."""
    return {"passed": list(passed), "output": result.output, "diff": result.diff}


def passed_of(records: dict[str, dict]) -> dict[str, list]:
    """``{job id: scenarios it passed}``: what the distributor skips."""
    return {job: rec["passed"] for job, rec in records.items()}
