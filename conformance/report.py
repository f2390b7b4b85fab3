"""The JSON report: a stable interface for CI tools (documented in README).

    {"schema": 2, "impl": "reference", "versions": {...}, "generated": "...",
     "summary": {"pass": n, ...},
     "scenarios": [{"id", "family", "fixture", "owner", "components",
                    "verdict", "oracles", "findings", "evidence", "repro",
                    "duration", "known_failure"}]}

An entry's ``findings`` (added in schema 2; absent from older reports) is
every finding of the run as data, earliest first:
``{"oracle", "op", "time", "text", "unknown"}`` (``conformance.findings``);
``evidence.violations`` and ``evidence.unknown`` hold the same texts per
oracle, for a human reader.

A shard's report (``--shard I/N``) also has ``"shard"`` (which shard, what
was split: :func:`conformance.shard.record`); a merge of shard reports has
``"shards"`` instead (``conformance.merge``) and reads as one run.
"""
from __future__ import annotations

import json
import platform
import time
from collections import Counter
from importlib import metadata

from conformance.verdict import BAD, VERDICTS

#: 2: the "error" verdict, each entry's "unknown" oracles and evidence
#: "unknown"/"missing" (schema 1 reports are still read)
SCHEMA = 2
READABLE_SCHEMAS = (1, 2)
PACKAGES = ("ray", "torch", "tensordict", "gymnasium", "torchrl")


def versions(adapter=None) -> dict:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    if adapter is not None:
        out.update(adapter.versions() or {})
    return out


def build(impl: str, adapter, results: list[dict], known: dict | None = None,
          shard: dict | None = None) -> dict:
    """The report of this run; ``shard``: what a shard run records about its
    shard (:func:`conformance.shard.record`)."""
    known = known or {}
    for s in results:
        s["known_failure"] = known.get(s["id"])
    doc = document(impl, versions(adapter), results)
    if shard is not None:
        doc["shard"] = shard
    return doc


def document(impl: str, versions: dict, scenarios: list[dict],
             generated: str | None = None) -> dict:
    """A report of ``scenarios`` (entries with their ``known_failure`` set):
    their summary and coverage, sorted by id."""
    scenarios = sorted(scenarios, key=lambda r: r["id"])
    summary = Counter(s["verdict"] for s in scenarios)
    return {
        "coverage": coverage(scenarios),
        "schema": SCHEMA,
        "impl": impl,
        "versions": versions,
        "generated": generated or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "summary": {v: summary.get(v, 0) for v in VERDICTS},
        "scenarios": scenarios,
    }


def coverage(scenarios: list[dict]) -> dict:
    """How much of the run reached a verdict: scenarios run / skipped (with
    their reasons), ops the implementation could not do (a missing feature),
    ops on a component whose construction failed, rules not checked."""
    skipped = Counter((s.get("evidence") or {}).get("reason", "?") for s in scenarios
                      if s["verdict"] == "skip")
    not_checked = Counter(o for s in scenarios for o in s.get("not_checked") or [])
    return {
        "scenarios": len(scenarios),
        "run": sum(1 for s in scenarios if s["verdict"] != "skip"),
        "skipped": sum(skipped.values()),
        "skip_reasons": dict(skipped),
        "ops_unsupported": sum(len(s.get("unsupported") or []) for s in scenarios),
        "ops_not_built": sum(len(s.get("not_built") or []) for s in scenarios),
        "not_checked": dict(not_checked),
    }


def gate(doc: dict) -> dict:
    """New failures (red), known failures, and listed scenarios that now pass."""
    # an "error" is the harness's: a known-failures entry (about the
    # implementation) never hides it
    new = [s for s in doc["scenarios"] if s["verdict"] in BAD
           and (not s.get("known_failure") or s["verdict"] == "error")]
    known = [s for s in doc["scenarios"] if s["verdict"] in BAD and s.get("known_failure")
             and s["verdict"] != "error"]
    fixed = [s for s in doc["scenarios"] if s["verdict"] == "pass" and s.get("known_failure")]
    return {"new_failures": new, "known_failures": known, "unexpected_passes": fixed}


def shard_note(doc: dict) -> str | None:
    """For a shard's report: that it holds only part of a run."""
    shard = doc.get("shard")
    if not shard:
        return None
    return (f"shard {shard['index']}/{shard['count']}: {len(doc['scenarios'])} of the run's "
            f"{shard.get('selected', '?')} scenarios (merge the shards' reports into one: "
            "python -m conformance merge OUT.json SHARD.json...)")


def summary_lines(doc: dict) -> list[str]:
    counts = ", ".join(f"{n} {v}" for v, n in doc["summary"].items() if n)
    lines = [f"impl {doc['impl']}: {len(doc['scenarios'])} scenarios: {counts}"]
    if shard_note(doc):
        lines.append(shard_note(doc))
    cov = doc.get("coverage") or coverage(doc["scenarios"])
    if cov["skipped"] or cov["ops_unsupported"] or cov.get("ops_not_built"):
        lines.append(f"coverage: {cov['run']} of {cov['scenarios']} scenarios run to a verdict; "
                     f"{cov['ops_unsupported']} ops unsupported; "
                     f"{cov.get('ops_not_built', 0)} ops on a component never built; not checked: "
                     + (", ".join(f"{o} ({n})" for o, n in cov["not_checked"].items()) or "-"))
    g = gate(doc)
    for s in g["new_failures"]:
        lines.append(f"{s['verdict'].upper():11} {s['id']}  [{', '.join(s['oracles'])}]")
        lines.append(f"            repro: {s['repro']}")
    if g["known_failures"]:
        lines.append(f"known failures still failing: {len(g['known_failures'])}")
    for s in g["unexpected_passes"]:
        lines.append(f"UNEXPECTED PASS {s['id']} (listed as known failure: "
                     f"{s['known_failure']}): remove it from the known-failures file")
    return lines


def write(doc: dict, path: str) -> None:
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)


def load(path: str) -> dict:
    with open(path) as f:
        doc = json.load(f)
    if doc.get("schema") not in READABLE_SCHEMAS:
        raise ValueError(f"{path}: not a conformance report of schema {READABLE_SCHEMAS}")
    return doc


def load_for_cli(path: str, who: str):
    """The report at ``path``, or None after telling stderr why (a command's
    exit 2: "``who``: no usable report: ...")."""
    import sys

    try:
        return load(path)
    except (OSError, ValueError, KeyError) as exc:
        print(f"{who}: no usable report: {exc}", file=sys.stderr)
        return None
