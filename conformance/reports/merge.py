"""Shard reports into one report:
``python -m conformance merge OUT.json SHARD.json [SHARD.json ...]``.

Each shard's report (``pytest conformance --shard I/N``) says which shard it
was and what the run split (``"shard"``: :func:`conformance.reports.shard.record`).
The merge is a report of the same schema as a single run's, which
``summary``, ``gate``, ``matrix`` and ``compare`` read as one run: every
shard's entries as they are (their ``known_failure`` included), the summary
and coverage counted again, ``generated`` the last shard's. It adds
``"shards"``: what was split and, per shard, its scenarios, its estimated
and its measured seconds.

It refuses (exit 2, saying why) shard reports that are not of one run (an
other implementation, other versions, another profile, fixtures, selection
or known-failures file, another number of shards), a shard given twice or
missing, a scenario in two shards, and shards whose scenarios are not all
of the run's (a shard that stopped early): a merged report is complete.
"""
from __future__ import annotations

import os
import sys

from conformance.reports import report, shard as shards

#: what every shard of one run records alike (besides impl and versions)
SAME_RUN = ("count", "profile", "fixtures", "selected", "selection", "known_failures",
            "durations")


class MergeError(ValueError):
    """Shard reports that do not make one complete run; the message says why."""


def _shard(name: str, doc: dict) -> dict:
    info = doc.get("shard")
    if not info:
        raise MergeError(f"{name}: not a shard's report (it has no 'shard': run the suite "
                         "with --shard I/N)")
    if info.get("selection") is None:
        raise MergeError(f"{name}: shard {info.get('index')}/{info.get('count')} recorded no "
                         "selection: its run ended before it collected its scenarios")
    return info


def _same_run(named: list[tuple[str, dict]]) -> None:
    first_name, first = named[0]
    for name, doc in named[1:]:
        if doc["impl"] != first["impl"]:
            raise MergeError(f"{name} is of {doc['impl']!r}, {first_name} of {first['impl']!r}: "
                             "shards of one run test one implementation")
        ours, theirs = doc.get("versions") or {}, first.get("versions") or {}
        differ = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
        if differ:
            raise MergeError(f"{name} and {first_name} ran other versions: " + ", ".join(
                f"{k} {ours.get(k, '-')} against {theirs.get(k, '-')}" for k in differ))
        for key in SAME_RUN:
            a, b = doc["shard"].get(key), first["shard"].get(key)
            if a != b:
                raise MergeError(f"{name} and {first_name} are shards of different runs: "
                                 f"{key} {a!r} against {b!r}")
        if doc.get("claim") != first.get("claim"):
            raise MergeError(f"{name} and {first_name} claim different things: "
                             f"{doc.get('claim')!r} against {first.get('claim')!r}")


def _every_shard_once(named: list[tuple[str, dict]]) -> None:
    by_index: dict[int, str] = {}
    count = named[0][1]["shard"]["count"]
    for name, doc in named:
        index = doc["shard"]["index"]
        if index in by_index:
            raise MergeError(f"shard {index}/{count} given twice: {by_index[index]} and {name}")
        by_index[index] = name
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
    if missing:
        raise MergeError(f"shard {', '.join(missing)} missing: the run was split into {count} "
                         f"and {len(named)} shard report(s) were given")


def _complete(named: list[tuple[str, dict]]) -> list[dict]:
    """Every shard's entries, each scenario once, all the run's scenarios."""
    seen: dict[str, str] = {}
    entries = []
    for name, doc in named:
        for entry in doc["scenarios"]:
            if entry["id"] in seen:
                raise MergeError(f"{entry['id']} is in two shards: {seen[entry['id']]} and "
                                 f"{name}")
            seen[entry["id"]] = name
            entries.append(entry)
    run = named[0][1]["shard"]
    if len(seen) != run["selected"] or shards.digest(seen) != run["selection"]:
        short = [f"{name} (shard {doc['shard']['index']}/{run['count']}) has "
                 f"{len(doc['scenarios'])} of its {doc['shard']['assigned']}"
                 for name, doc in named if len(doc["scenarios"]) != doc["shard"]["assigned"]]
        raise MergeError(f"incomplete: {len(seen)} scenarios in the shards' reports, the run "
                         f"split {run['selected']}" + (f": {'; '.join(short)}" if short else
                                                       " (not the scenarios it split)"))
    return entries


def merge(named: list[tuple[str, dict]]) -> dict:
    """One report from ``(name, shard report)`` pairs, or :class:`MergeError`."""
    if not named:
        raise MergeError("no shard report given")
    for name, doc in named:
        _shard(name, doc)
    _same_run(named)
    _every_shard_once(named)
    entries = _complete(named)
    first = named[0][1]
    doc = report.document(first["impl"], first.get("versions") or {}, entries,
                          generated=max(d.get("generated") or "" for _, d in named) or None,
                          claim=first.get("claim"))
    if "features_missing" in first:
        doc["features_missing"] = first["features_missing"]
    run = {k: v for k, v in first["shard"].items() if k in SAME_RUN}
    doc["shards"] = {**run, "parts": sorted(
        ({"index": d["shard"]["index"], "scenarios": len(d["scenarios"]),
          "estimate": d["shard"].get("estimate"), "elapsed": d["shard"].get("elapsed"),
          "generated": d.get("generated")} for _, d in named), key=lambda p: p["index"])}
    return doc


def lines(doc: dict) -> list[str]:
    """What the merge says: each shard's scenarios and times, then the run's."""
    run = doc["shards"]
    out = [f"merge: {run['count']} shard(s) of a {run.get('profile')} run of {doc['impl']} on "
           f"{','.join(run.get('fixtures') or [])}: {len(doc['scenarios'])} scenarios"]
    elapsed = []
    for p in run["parts"]:
        took = p.get("elapsed")
        elapsed.append(took)
        out.append(f"  shard {p['index']}/{run['count']}: {p['scenarios']} scenarios, "
                   + (f"{took:.0f} s" if took is not None else "? s")
                   + (f" (estimated {p['estimate']:.0f} s)" if p.get("estimate") is not None
                      else ""))
    if elapsed and None not in elapsed:
        out.append(f"  wall time {max(elapsed):.0f} s (the longest shard), "
                   f"{sum(elapsed):.0f} s in all shards")
    return out


def main(args) -> int:
    if os.path.abspath(args.out) in {os.path.abspath(p) for p in args.reports}:
        print(f"merge: {args.out} is one of the shard reports: write the merge elsewhere",
              file=sys.stderr)
        return 2
    named = report.load_all_for_cli(args.reports, "merge")
    if named is None:
        return 2
    try:
        merged = merge(named)
    except MergeError as exc:
        print(f"merge: refused: {exc}", file=sys.stderr)
        return 2
    report.write(merged, args.out)
    for line in lines(merged):
        print(line)
    print(f"merge: wrote {args.out}")
    return 0
