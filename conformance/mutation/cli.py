"""``python -m conformance mutate SUBCOMMAND``: mutation analysis of ``impl/``.

  coverage [--profile P]        run the profile once under coverage; write
                                ci/results/mutation/coverage-P.json
  canary                        prove that a mutant on disk is what drivers and
                                Ray workers run, on both fixtures
  init [--session DB]           cosmic-ray's session: every mutant of impl/
                                (cosmic-ray init + our filters)
  run [--profile P] [--shard I/N] [--minutes M]
                                cosmic-ray exec with the scenario distributor:
                                resumes where the session stopped
  report [--session DB]         ci/results/mutation/: scores, survivors, answers
  sample [--count N] [--seed S] the CI ratchet: N mutants the committed results
                                say are killed must still be killed

The mutation extra (``RLC_EXTRAS=mutation bash ci/setup.sh``) lives in
``$VENV/mutation-site``, off the venv's path: this command puts it on its own
``sys.path`` only (see ci/mutation.lock). No pytest on this path.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from fixtures.rayenv import RAY_ENV, REPO_ROOT

RESULTS = REPO_ROOT / "ci" / "results" / "mutation"
CONFIG = REPO_ROOT / "ci" / "mutation.toml"
SESSIONS = REPO_ROOT / "reports" / "mutation"
PLUGINS = Path(__file__).with_name("plugins")


def use_mutation_extra() -> None:
    """The mutation extra and our cosmic-ray plugins (operators, distributor,
    declared by ``plugins/*.dist-info``) on this process's path only."""
    site = Path(sys.prefix) / "mutation-site"
    if not (site / "cosmic_ray").is_dir():
        raise SystemExit(f"error: cosmic-ray is not installed in {site}: run "
                         f"RLC_EXTRAS=mutation RLC_VENV={sys.prefix} bash ci/setup.sh")
    for path in (str(PLUGINS), str(site)):
        if path not in sys.path:
            sys.path.insert(0, path)


def session_path(profile: str) -> Path:
    return SESSIONS / f"session-{profile}.sqlite"


def cmd_coverage(args) -> int:
    from conformance.mutation.coverage_map import measure

    RESULTS.mkdir(parents=True, exist_ok=True)
    out = args.out or str(RESULTS / f"coverage-{args.profile}.json")
    result = measure(args.profile, out, scenario_filter=args.scenario)
    print(f"coverage of {len(result['baseline'])} scenarios in {result['seconds']} s: {out}")
    return 0


def main(argv=None) -> int:
    os.environ.update(RAY_ENV)
    parser = argparse.ArgumentParser(prog="python -m conformance mutate",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("coverage", help="measure which scenarios run which line")
    p.add_argument("--profile", default="quick", choices=("quick", "full"))
    p.add_argument("--scenario", action="append", help="only ids matching this glob")
    p.add_argument("--out")
    p.set_defaults(func=cmd_coverage)
    args = parser.parse_args(argv)
    use_mutation_extra()
    return args.func(args)
