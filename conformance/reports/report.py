"""The JSON report: a stable interface for CI tools (documented in README).

    {"schema": 2, "impl": "reference", "versions": {...}, "generated": "...",
     "summary": {"pass": n, ...}, "coverage": {...}, "features_missing": [...],
     "scenarios": [{"id", "family", "fixture", "owner", "components",
                    "verdict", "oracles", "findings", "evidence", "repro",
                    "duration", "known_failure"}]}

An entry's ``findings`` (added in schema 2; absent from older reports) is
every finding of the run as data, earliest first:
``{"oracle", "op", "time", "text", "unknown"}`` (``conformance.judge.findings``);
``evidence.violations`` and ``evidence.unknown`` hold the same texts per
oracle, for a human reader.

A shard's report (``--shard I/N``) also has ``"shard"`` (which shard, what
was split: :func:`conformance.reports.shard.record`); a merge of shard reports has
``"shards"`` instead (``conformance.reports.merge``) and reads as one run.
"""
from __future__ import annotations

import json
import platform
import time
from collections import Counter
from importlib import metadata

from conformance.adapter import FEATURES
from conformance.judge.verdict import VERDICTS

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


def build(impl: str, adapter, results: list[dict], shard: dict | None = None,
          claim: dict | None = None) -> dict:
    """The report of this run (its entries marked against the known-failures
    file: ``ruling.mark``); ``shard``: what a shard run records about its
    shard (:func:`conformance.reports.shard.record`); ``claim``: what the run claims
    (``conformance.reports.claims.Claim.of_run``)."""
    doc = document(impl, versions(adapter), results, claim=claim)
    doc["features_missing"] = features_missing(adapter)
    if shard is not None:
        doc["shard"] = shard
    return doc


def features_missing(adapter) -> list[str]:
    """The features of the contract, conventions included, that ``adapter``
    does not declare: what its scenarios skip, do without, or leave unchecked."""
    return sorted(set(FEATURES) - set(adapter.features))


def document(impl: str, versions: dict, scenarios: list[dict],
             generated: str | None = None, claim: dict | None = None) -> dict:
    """A report of ``scenarios`` (entries with their ``known_failure`` and
    ``expected`` set): their summary and coverage, sorted by id."""
    scenarios = sorted(scenarios, key=lambda r: r["id"])
    summary = Counter(s["verdict"] for s in scenarios)
    return {
        "claim": claim,
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


def shard_note(doc: dict) -> str | None:
    """For a shard's report: that it holds only part of a run."""
    shard = doc.get("shard")
    if not shard:
        return None
    return (f"shard {shard['index']}/{shard['count']}: {len(doc['scenarios'])} of the run's "
            f"{shard.get('selected', '?')} scenarios (merge the shards' reports into one: "
            "python -m conformance merge OUT.json SHARD.json...)")


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


def load_all_for_cli(paths, who: str):
    """``[(path, report)]`` of every path, or None once one is unusable
    (``load_for_cli`` told stderr why)."""
    named = []
    for path in paths:
        doc = load_for_cli(path, who)
        if doc is None:
            return None
        named.append((path, doc))
    return named
