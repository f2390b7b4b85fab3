"""Command line: ``python -m conformance COMMAND``.

  repro ID [--impl NAME] [--ray-address ADDR]   rerun one scenario alone, print
                                                its history, stderr and verdict
  shrink ID [--impl NAME]                       shrink a failing scenario
  catalog [--profile P] [--fixture F] [--counts] list scenarios or count them
          [--shard I/N [--shard-durations R]]    ... or those of one shard, with its estimate
  bench [--profile P] [-n N]                    scenario throughput benchmark
  summary REPORT.json [--out FILE] [CLAIM]      the report as Markdown (GitHub step summary)
  gate REPORT.json [CLAIM]                      exit 1 on a new failure or a report that covers
                                                less than the claim (the CI decision); CLAIM:
                                                --components, --features, --fixtures, --profile,
                                                --known-failures FILE (decide again against it)
  known-failures REPORT.json... [-o FILE]       a known-failures file from reports
  merge OUT.json SHARD.json...                  shard reports (--shard I/N) into one report
  matrix REPORT.json... --html OUT [--markdown OUT]  scenario x implementation matrix
  compare REPORT.json --against COMMITTED.json [--scenarios-from FILE] [--reruns R.json...]
          [--pending]
                                                exit 1 when verdicts drifted from a committed
                                                report (printed as a table with repro commands)
  job --address URL [--report PATH] [-- SUITE ARGS]
                                                the suite as a Ray job on your cluster (its
                                                drivers run there), the report brought back
  mutate SUBCOMMAND                              mutation analysis of impl/ with cosmic-ray
                                                (python -m conformance mutate --help)
  script ID [--impl NAME] [-o FILE]             a standalone Python script of the scenario's
                                                operations (needs no part of this project)
  upstream ID --impl NAME [--report R] [-o FILE] an issue body for the library's tracker
  upstream --report R --impl NAME --out-dir DIR  ... one per cause of a report's findings
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile

from fixtures.rayenv import RAY_ENV, absolute_pythonpath


def cmd_shrink(args) -> int:
    """Run a failing scenario, then remove ops while it keeps failing the same way."""
    from conformance import catalog
    from conformance.adapters.registry import load_adapter
    from conformance.repro.shrink import shrink_against

    scenario = catalog.load(args.scenario_id)
    found = shrink_against(scenario, args.impl, load_adapter(args.impl),
                           log=lambda line: print(line, flush=True))
    if found.first["verdict"] == "pass":
        print(f"{scenario.id} passes against {args.impl}: nothing to shrink")
        return 0
    small = found.small
    out = args.out or "shrunk-scenario.json"
    with open(out, "w") as f:
        json.dump(small.to_dict(), f, indent=1)
    print(f"\nminimal ({len(small.ops)} of {len(scenario.ops)} ops, {found.runs} runs): "
          f"{small.describe()}")
    from conformance.run.execute import repro_command

    print(f"saved {out}; rerun it: {repro_command(out, args.impl)}")
    return 1


def cmd_repro(args) -> int:
    from conformance import catalog
    from conformance.run.execute import failure_message, preload_modules, run_scenario
    from conformance.adapters.registry import UsageError, load_adapter
    from fixtures.session import SessionResources

    try:
        adapter = load_adapter(args.impl)
        scenario = catalog.load(args.scenario_id)
    except (UsageError, KeyError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    missing = adapter.unsupported(scenario.requires)
    if missing:
        print(f"SKIP: {adapter.name} does not support {', '.join(missing)}")
        return 0
    print(f"scenario {scenario.id}\nops: {scenario.describe()}\nimpl: {args.impl}", flush=True)
    # the driver's files (request, history, stderr) go to --workdir, kept; or
    # to a scratch directory removed at the end, after what they say is printed
    with contextlib.ExitStack() as stack:
        workdir = args.workdir or stack.enter_context(
            tempfile.TemporaryDirectory(prefix="rlc-repro-"))
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
        where = (os.path.join(workdir, "stderr.txt") if args.workdir
                 else "the driver's; keep its files with --workdir DIR")
        print(f"\nstderr ({where}):")
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
    adapter = None
    if args.impl:
        from conformance.adapters.registry import UsageError, load_adapter

        try:
            adapter = load_adapter(args.impl)
        except UsageError as exc:
            print(f"catalog: {exc}", file=sys.stderr)
            return 2
    components = adapter.components if adapter else catalog.ALL
    if args.counts:
        for profile, fams in catalog.counts(fixtures, components).items():
            total = sum(sum(c.values()) for c in fams.values())
            print(f"{profile}: {total} scenarios")
            print(f"  {'family':<22}" + "".join(f"{fx:>11}" for fx in fixtures))
            for fam, c in fams.items():
                print(f"  {fam:<22}" + "".join(f"{c.get(fx, 0):>11}" for fx in fixtures))
            if adapter is not None:
                _print_skips(adapter, catalog.scenarios(fixtures, profile, components=components),
                             args.verbose)
        return 0
    found = catalog.scenarios(fixtures, args.profile, components=components)
    if args.shard:
        found = _one_shard(found, args.shard, args.shard_durations)
        if found is None:
            return 2
    for s in found:
        print(s.id if not args.verbose else f"{s.id}\n    {s.describe()}")
    return 0


def _print_skips(adapter, found, verbose: bool) -> None:
    """Which of ``found`` the adapter's features skip, by the feature it lacks."""
    from collections import Counter

    skipped = [(s, adapter.unsupported(s.requires)) for s in found]
    skipped = [(s, lacks) for s, lacks in skipped if lacks]
    by_feature = sorted(Counter(f for _, lacks in skipped for f in lacks).items())
    lacking = ", ".join(f"{f} in {n}" for f, n in by_feature)
    print(f"  {adapter.name} runs {len(found) - len(skipped)}, skips {len(skipped)}"
          + (f" (features it lacks: {lacking})" if skipped else ""))
    for s, lacks in skipped if verbose else ():
        print(f"    skip {s.id}: needs {', '.join(lacks)}")


def _one_shard(found, which: str, durations_from: str | None):
    """The scenarios of shard ``which`` (I/N) of ``found``, as ``--shard``
    splits them; its estimate on stderr. None after a usage error."""
    from conformance.reports import report, shard

    try:
        this = shard.Shard.parse(which)
        known = shard.durations(report.load(durations_from)) if durations_from else {}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    parts = shard.plan([s.id for s in found], this.count, known)
    mine = set(parts[this.index - 1].ids)
    timed = sum(1 for s in found if s.id in known)
    print(f"shard {this}: {len(mine)} of {len(found)} scenarios, estimated "
          f"{parts[this.index - 1].estimate:.0f} s of scenario time (shards: "
          f"{', '.join(f'{p.estimate:.0f}' for p in parts)} s; "
          + (f"durations of {timed} of {len(found)} from {durations_from}, the rest at "
             "their median)" if known else "no durations: split by id)"), file=sys.stderr)
    return [s for s in found if s.id in mine]


def _lazy(module: str):
    """``conformance.<module>.main``, imported only when its command runs."""
    def run(args) -> int:
        from importlib import import_module

        return import_module(f"conformance.{module}").main(args)
    return run


def main(argv=None) -> int:
    os.environ.update(RAY_ENV)
    absolute_pythonpath()
    p = argparse.ArgumentParser(prog="python -m conformance")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("repro", help="rerun one scenario alone")
    r.add_argument("scenario_id", help="a catalog id or a scenario .json file")
    r.add_argument("--impl", default=os.environ.get("RLC_IMPL", "reference"))
    r.add_argument("--ray-address", default=os.environ.get("RLC_RAY_ADDRESS"))
    r.add_argument("--workdir", help="keep the driver's files (request, history, stderr) "
                                      "here (default: a scratch directory, removed)")
    r.add_argument("--json", help="also write the report entry here")
    r.set_defaults(func=cmd_repro)
    k = sub.add_parser("shrink", help="shrink a failing scenario to a minimal op sequence")
    k.add_argument("scenario_id", help="a catalog id (e.g. walk/local/user/seed-7) or a .json file")
    k.add_argument("--impl", default=os.environ.get("RLC_IMPL", "reference"))
    k.add_argument("--out", help="where to save the minimal scenario (JSON)")
    k.set_defaults(func=cmd_shrink)
    c = sub.add_parser("catalog", help="list the scenarios or count them")
    c.add_argument("--profile", default="full", choices=["quick", "full"])
    c.add_argument("--fixture", action="append")
    c.add_argument("--counts", action="store_true")
    c.add_argument("--impl", help="the scenarios for this implementation's components "
                                  "(default: all three)")
    c.add_argument("-v", "--verbose", action="store_true",
                   help="each scenario's operations; with --counts --impl, each skipped id")
    c.add_argument("--shard", metavar="I/N", help="only the scenarios shard I of N runs "
                                                  "(as pytest's --shard splits them)")
    c.add_argument("--shard-durations", metavar="REPORT.json",
                   help="the report whose durations balance the shards")
    c.set_defaults(func=cmd_catalog)
    from conformance.reports.ruling import add_options

    s = sub.add_parser("summary", help="the report as Markdown, for $GITHUB_STEP_SUMMARY")
    s.add_argument("report")
    s.add_argument("--out", help="write here instead of stdout")
    add_options(s)
    s.set_defaults(func=_lazy("reports.summary"))
    g = sub.add_parser("gate", help="exit 0 when the report meets the claim with no new "
                                    "failure")
    g.add_argument("report")
    add_options(g)
    g.set_defaults(func=_lazy("reports.gate"))
    w = sub.add_parser("known-failures", help="a known-failures file from reports (each "
                                              "failing scenario with its verdict and oracles)")
    w.add_argument("reports", nargs="+", metavar="REPORT.json",
                   help="one run's report, or several runs' (a flaky scenario's rate)")
    w.add_argument("-o", "--out", help="write the file here (default: stdout)")
    w.set_defaults(func=_lazy("reports.write_known_failures"))
    j = sub.add_parser("merge", help="shard reports (pytest --shard I/N) into one report")
    j.add_argument("out", metavar="OUT.json", help="the merged report")
    j.add_argument("reports", nargs="+", metavar="SHARD.json", help="every shard's report")
    j.set_defaults(func=_lazy("reports.merge"))
    m = sub.add_parser("matrix", help="scenario x implementation matrix from reports")
    m.add_argument("reports", nargs="+", metavar="REPORT.json")
    m.add_argument("--html", required=True, metavar="OUT.html")
    m.add_argument("--markdown", metavar="OUT.md")
    m.set_defaults(func=_lazy("reports.matrix_cli"))
    d = sub.add_parser("compare", help="exit 1 when this run's verdicts drifted from a "
                                       "committed report")
    d.add_argument("report", metavar="REPORT.json", help="this run's report")
    d.add_argument("--against", required=True, metavar="COMMITTED.json",
                   help="the committed report (e.g. ci/results/torchrl/...json)")
    d.add_argument("--scenarios-from", metavar="FILE",
                   help="compare these scenarios (one id a line, '# why' after it; e.g. "
                        "ci/torchrl-slice.txt); default: every scenario of REPORT.json")
    d.add_argument("--varies-from", metavar="FILE",
                   help="declared races (varies:ORACLE@K/N, or a verdict race: OUTCOME "
                        "flaky:K/N; the --scenarios-from format) for the scenarios compared, "
                        "without narrowing them; e.g. ci/results/torchrl/varies.txt")
    d.add_argument("--reruns", nargs="+", metavar="RERUN.json",
                   help="reports of reruns of some of the scenarios: a declared varying "
                        "oracle (varies:) must not miss its usual outcome in every run "
                        "(conformance.reports.varies)")
    d.add_argument("--pending", action="store_true",
                   help="only print the scenarios to rerun (a --scenarios-from file): a "
                        "varying oracle missed its usual outcome in each of their runs so far")
    d.set_defaults(func=_lazy("reports.compare"))
    x = sub.add_parser("script", help="a standalone reproduction script of one scenario")
    x.add_argument("scenario_id", help="a catalog id or a scenario .json file")
    x.add_argument("--impl", default=os.environ.get("RLC_IMPL", "reference"))
    x.add_argument("-o", "--out", help="write the script here (default: stdout)")
    x.set_defaults(func=_lazy("repro.script"))
    o = sub.add_parser("job", help="run the suite as a Ray job on your cluster (ray job "
                                   "submit), its report brought back")
    o.add_argument("--address", default=os.environ.get("RAY_API_SERVER_ADDRESS"),
                   required="RAY_API_SERVER_ADDRESS" not in os.environ,
                   help="the cluster's job server: its head's dashboard, "
                        "http://HOST:8265 (env RAY_API_SERVER_ADDRESS)")
    o.add_argument("--report", default=os.path.join("reports", "conformance.json"),
                   help="where the job's JSON report is written here (default: "
                        "reports/conformance.json)")
    o.add_argument("--python", default="python",
                   help="the Python the job runs the suite with, as the head's shell finds it "
                        "(default: python, the PATH `ray start` ran with)")
    o.add_argument("suite_args", nargs=argparse.REMAINDER, metavar="-- SUITE ARGS",
                   help="pytest conformance's options (--impl, --profile, --scenarios-from, "
                        "-k, -n, ...); the job adds --ray-fixture external and the address")
    o.set_defaults(func=_lazy("job"))
    v = sub.add_parser("bisect", help="the first release where a scenario's verdict changed")
    v.add_argument("scenario_id", help="a catalog id or a scenario .json file")
    v.add_argument("--impl", required=True, help="an adapter name (torchrl, rllib, module:attr)")
    v.add_argument("--package", help="pip name of the implementation (default: the "
                                     "adapter's `package`)")
    v.add_argument("--versions", help="A,B,C or a range of the index's releases, e.g. "
                                      "'>=0.10,<0.15'")
    v.add_argument("--ray", help="Ray: one version for all, one per --versions entry, or "
                                 "(one --versions) the axis: A,B,C or a range")
    v.add_argument("--all", action="store_true", help="run every point, list every change")
    v.add_argument("--by-oracles", action="store_true",
                   help="a change of the failing oracles counts too, not just the verdict")
    v.add_argument("--out", help="directory for the report entries (default bisect-<id>)")
    v.set_defaults(func=_lazy("releases.bisection"))
    w = sub.add_parser("releases", help="the verdict matrix over releases (one cached "
                                        "environment per column)")
    w.add_argument("releases", help="the columns: 'IMPL VERSION RAY' a line "
                                    "(e.g. ci/results/releases/columns.txt)")
    w.add_argument("--out", required=True, help="directory for the reports and the matrix")
    w.add_argument("--profile", default="quick", choices=["quick", "full"])
    w.add_argument("--ray-fixture", default="local,multinode")
    w.add_argument("--scenarios-from", help="only these scenarios (one id a line)")
    w.add_argument("--workers", type=int, default=2, help="pytest-xdist workers per column")
    w.add_argument("--shards", type=int, default=1, metavar="N",
                   help="run each column as N shards, merged (a stopped run resumes: a "
                        "shard with a report is not run again)")
    w.add_argument("--only-shard", type=int, metavar="I",
                   help="with --shards N: run only shard I of each column, merge nothing")
    w.set_defaults(func=_lazy("releases.releases"))
    e = sub.add_parser("venv", help="one release's environment (cached; built when missing): "
                                    "prints its python, for `upstream --check --python` or "
                                    "`repro` in that release")
    e.add_argument("impl", help="an adapter that names its package (torchrl, rllib, tianshou)")
    e.add_argument("version", help="the package's version (rllib: Ray's)")
    e.add_argument("ray", help="Ray's version")
    e.set_defaults(func=_lazy("releases.venvs"))
    u = sub.add_parser("upstream", help="issue bodies for the library's tracker: one finding, "
                                        "or every cause of a report")
    u.add_argument("scenario_id", nargs="?", help="a catalog id: one body (its finding in "
                                                "--report, else the scenario run now); "
                                                "not with --out-dir")
    u.add_argument("--impl", default=os.environ.get("RLC_IMPL", "reference"))
    u.add_argument("--report", metavar="R.json",
                   help="take the finding(s) from this report instead of running them")
    u.add_argument("--no-shrink", action="store_true",
                   help="write the scenario's script as it is (shrinking reruns it)")
    u.add_argument("-o", "--out", help="write the one body here (default: stdout)")
    u.add_argument("--out-dir", "--dir", dest="out_dir", metavar="DIR",
                   help="with --report: one body per cause into DIR, and DIR/README.md")
    u.add_argument("--check", metavar="DIR",
                   help="run each body's script of DIR alone and read its output for the "
                        "finding (writes DIR/CHECKED.md)")
    u.add_argument("--python", default=sys.executable,
                   help="with --check: the Python to run the scripts with (a fresh "
                        "environment of the library's release)")
    u.add_argument("--save-outputs", metavar="DIR2",
                   help="with --check: keep each script's output in DIR2 (one JSON per body)")
    u.add_argument("--from-outputs", metavar="DIR2",
                   help="with --check: read the outputs kept in DIR2 instead of running the "
                        "scripts (a fixed check needs no rerun)")
    u.add_argument("--varies-from", metavar="FILE",
                   help="with --check: the library's races file (varies.txt); a finding it "
                        "declares at rate K/N gets up to 10 runs, until one shows it")
    u.set_defaults(func=_lazy("repro.upstream"))
    b = sub.add_parser("bench", help="scenario throughput benchmark (prints figures)",
                       add_help=False)
    b.set_defaults(func=None)
    m = sub.add_parser("mutate", help="mutation analysis of impl/ (cosmic-ray; "
                       "see docs/mutation.md)", add_help=False)
    m.set_defaults(func=None)
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "bench":
        from conformance.run import bench

        return bench.main(argv[1:])
    if argv and argv[0] == "mutate":
        from conformance.mutation import cli

        return cli.main(argv[1:])
    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
