"""Command line: ``python -m conformance COMMAND``.

  repro ID [--impl NAME] [--ray-address ADDR]   rerun one scenario alone, print
                                                its history, stderr and verdict
  catalog [--profile P] [--fixture F] [--counts] list scenarios or count them
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from conformance.plugin import RAY_ENV


def cmd_repro(args) -> int:
    from conformance import catalog
    from conformance.execute import failure_message, run_scenario
    from conformance.registry import UsageError, load_adapter
    from conformance.plugin import preload_modules
    from fixtures.session import SessionResources

    try:
        adapter = load_adapter(args.impl)
        scenario = catalog.find(args.scenario_id)
    except (UsageError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    missing = adapter.unsupported(scenario.requires)
    if missing:
        print(f"SKIP: {adapter.name} does not support {', '.join(missing)}")
        return 0
    print(f"scenario {scenario.id}\nops: {scenario.describe()}\nimpl: {args.impl}", flush=True)
    workdir = args.workdir or tempfile.mkdtemp(prefix="rlc-repro-")
    session = SessionResources(preload=preload_modules(adapter))
    try:
        entry = run_scenario(scenario, args.impl, adapter, session, workdir, args.ray_address)
    finally:
        session.close()
    print("\nhistory:")
    for line in entry["evidence"]["history"]:
        print(f"  {line}")
    with open(os.path.join(workdir, "stderr.txt"), errors="replace") as f:
        stderr = f.read()
    print(f"\nstderr ({os.path.join(workdir, 'stderr.txt')}):")
    print(stderr[-6000:] if stderr else "  (empty)")
    print()
    if entry["verdict"] == "pass":
        print(f"verdict: PASS ({entry['duration']}s)")
    else:
        print(failure_message(entry))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(entry, f, indent=1)
    return 0 if entry["verdict"] == "pass" else 1


def cmd_catalog(args) -> int:
    from conformance import catalog

    fixtures = args.fixture or ["local", "multinode"]
    if args.counts:
        table = catalog.counts(fixtures)
        for profile, fams in table.items():
            total = sum(sum(c.values()) for c in fams.values())
            print(f"{profile}: {total} scenarios")
            print(f"  {'family':<22}" + "".join(f"{fx:>11}" for fx in fixtures))
            for fam, c in fams.items():
                print(f"  {fam:<22}" + "".join(f"{c.get(fx, 0):>11}" for fx in fixtures))
        return 0
    for s in catalog.scenarios(fixtures, args.profile):
        print(s.id if not args.verbose else f"{s.id}\n    {s.describe()}")
    return 0


def main(argv=None) -> int:
    os.environ.update(RAY_ENV)
    p = argparse.ArgumentParser(prog="python -m conformance")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("repro", help="rerun one scenario alone")
    r.add_argument("scenario_id")
    r.add_argument("--impl", default=os.environ.get("RLC_IMPL", "reference"))
    r.add_argument("--ray-address", default=os.environ.get("RLC_RAY_ADDRESS"))
    r.add_argument("--workdir")
    r.add_argument("--json", help="also write the report entry here")
    r.set_defaults(func=cmd_repro)
    c = sub.add_parser("catalog", help="list the scenarios or count them")
    c.add_argument("--profile", default="full", choices=["quick", "full"])
    c.add_argument("--fixture", action="append")
    c.add_argument("--counts", action="store_true")
    c.add_argument("-v", "--verbose", action="store_true")
    c.set_defaults(func=cmd_catalog)
    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
