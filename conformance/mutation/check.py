"""``mutate check``: does a named scenario kill a committed mutant on today's ``impl/``?

What a survivor's answer "killed since by scenario X" rests on: the mutant
(a row of ``mutants-PROFILE.json``, found again by its diff where its line
moved, as ``mutate sample`` does) written into ``impl/`` on disk, each
scenario run ``runs`` times in one mutation session (no bytecode cache,
``conformance.mutation.runner``), ``impl/`` restored after each mutant. A
mutant is killed by a scenario only when every run fails it (fail, hang,
crash); a pass in any run is a survival and a harness error is unknown,
never a kill. A scenario the reference does not pass kills nothing: the
reference is run first on each scenario named; one chosen from the coverage
map (``--covering``) is taken only where the map's own run of the reference
passed it.

Its lines are what an answer quotes (``--answers`` prints the answer line).
"""
from __future__ import annotations

import json
import time


def _verdict(outcomes: list) -> str:
    """``killed`` when every run failed the mutant, ``SURVIVED`` when one
    passed, ``UNKNOWN`` otherwise (a harness error in some run, none passed)."""
    if any(o.passed for o in outcomes):
        return "SURVIVED"
    return "killed" if all(o.killed for o in outcomes) else "UNKNOWN"


def _runs_text(outcomes: list) -> str:
    return ", ".join(f"{o.verdict} [{','.join(o.oracles) or '-'}]" for o in outcomes)


def answer_line(key: str, scenario: str, moved: str, outcomes: list, when: str,
                reference: str = "the reference passes", release_suffix: str = "") -> str:
    """The survivor's answer, for answers.txt. Measured in a release
    environment (``release_suffix``, from ``release_environment``: another
    Ray than the suite's), the kill is recorded but stays open: the
    profile's score counts only what the suite catches on its own Ray (no
    CI step runs the reference on another one)."""
    measured = (f"the mutant applied to today's impl/{moved} and the scenario run "
                f"{len(outcomes)} times with `mutate check` ({when}): {_runs_text(outcomes)}; "
                f"{reference}")
    if release_suffix:
        return (f"{key}  open [release matrix]: killed by scenario {scenario}{release_suffix}: "
                f"{measured}; not counted: the profile's score is the suite's on its own Ray")
    return f"{key}  killed since by scenario {scenario}: {measured}"


def release_environment(lock_text: str, ray_version: str, prefix: str) -> str:
    """`` on Ray X (the release environment NAME)`` when this process's Ray is
    not the one ``lock_text`` (ci/requirements.lock) pins, else ``""``: a kill
    measured in another release (``python -m conformance venv ...``) says so."""
    import re

    pinned = re.search(r"^ray(?:\[[^\]]*\])?==(\S+)", lock_text, re.M)
    if pinned and pinned.group(1) == ray_version:
        return ""
    from pathlib import Path

    return f" on Ray {ray_version} (the release environment {Path(prefix).name})"


def _changed_line(module: str, original: str) -> int | None:
    """The first line (1-based) where ``module`` on disk (the mutant) differs
    from ``original``."""
    from pathlib import Path

    now = Path(module).read_text().splitlines()
    was = original.splitlines()
    return next((n + 1 for n, (a, b) in enumerate(zip(was, now)) if a != b),
                None if len(was) == len(now) else min(len(was), len(now)) + 1)


def covering(selection, module: str, line: int | None, original: str, limit: int,
             skip: frozenset = frozenset()) -> list[str]:
    """At most ``limit`` scenarios of ``selection`` (``selection.Selection``:
    the coverage map, what passes on the reference there) that run ``line``
    of ``module`` (``original``: its source before the mutant), multinode
    first, then the shortest (``Selection.order``; no kills of this check to
    put first), none of ``skip``."""
    if line is None or limit <= 0:
        return []
    from conformance.mutation.distributor import statement_line

    statement = statement_line(original, (line, 0))
    found = selection.covering(module, line, line, statement, source=original) - skip
    return selection.order(module, line, found)[:limit]


def _judge(runner, scenario, runs: int) -> tuple[str, list]:
    outcomes = []
    for _ in range(runs):
        outcomes.append(runner.outcome(scenario, confirm=False))
        if outcomes[-1].passed:
            break
    return _verdict(outcomes), outcomes


def main(args, results, repo_root, relocated, check_pristine) -> int:
    """Exit 0 when every mutant named is killed by one of its scenarios, 1
    when one is not (or the reference fails a scenario named), 2 for a key
    the results do not hold. A mutant's scenarios: the ones named
    (``--scenario``), then with ``--covering N`` up to N that run its line
    now (``--coverage``: a map of today's impl/, ``mutate coverage --out``)."""
    import os
    from pathlib import Path

    from conformance import catalog
    from conformance.mutation.runner import ScenarioRunner

    check_pristine()
    rows = {r["key"]: r for r in json.loads((results / f"mutants-{args.profile}.json").read_text())}
    missing = [k for k in args.keys if k not in rows]
    if missing:
        print(f"mutate check: not in {results / f'mutants-{args.profile}.json'}: {', '.join(missing)}")
        return 2
    from conformance.mutation import coverage_map
    from conformance.mutation.distributor import passed_of
    from conformance.mutation.selection import Selection

    selection = Selection(coverage_map.load(args.coverage), None, root=repo_root) \
        if args.covering else None
    # --only-new: the scenarios the committed results' map already had are left out (their
    # survivors passed them when the results were measured)
    skip = frozenset(json.loads((results / f"coverage-{args.profile}.json").read_text())["scenarios"]) \
        if args.only_new else frozenset()
    named = [catalog.find(sid) for sid in args.scenario or []]
    os.chdir(repo_root)
    import sys
    from importlib.metadata import version

    release_suffix = release_environment(
        (Path(repo_root) / "ci" / "requirements.lock").read_text(), version("ray"), sys.prefix)
    if release_suffix:
        print(f"mutate check:{release_suffix}: a kill is recorded as open [release matrix]",
              flush=True)
    runner = ScenarioRunner()
    failures = 0
    try:
        for scenario in named:
            base = runner.outcome(scenario, confirm=False)
            print(f"reference {scenario.id}: {_runs_text([base])}", flush=True)
            if not base.passed:
                print(f"mutate check: the reference does not pass {scenario.id}: it kills nothing")
                return 1
        for key in args.keys:
            r = rows[key]
            started = time.strftime("%H:%M", time.gmtime())
            original = Path(r["module"]).read_text()
            with relocated(r) as occurrence:
                if occurrence is None:
                    print(f"STALE    {key}: the code it mutated changed since the results")
                    failures += 1
                    continue
                moved = "" if occurrence == r["occurrence"] else f" (now occurrence {occurrence})"
                scenarios = list(named)
                if selection is not None:
                    line = _changed_line(r["module"], original)
                    tried = passed_of(r.get("output")) if args.untried else set()
                    scenarios += [catalog.find(sid) for sid in
                                  covering(selection, r["module"], line, original, args.covering,
                                           skip | tried)
                                  if sid not in {s.id for s in named}]
                    if len(scenarios) == len(named):
                        which = "new since the committed map " if skip else ""
                        print(f"UNCOVERED {key}: no scenario {which}of the map runs line "
                              f"{line} now")
                best = None
                for scenario in scenarios:
                    verdict, outcomes = _judge(runner, scenario, args.runs)
                    print(f"{verdict:8} {key}{moved} by {scenario.id}: {_runs_text(outcomes)}",
                          flush=True)
                    if verdict == "killed":
                        best = (scenario.id, outcomes)
                        break
            if best is None:
                failures += 1
            elif args.answers:
                when = f"{time.strftime('%Y-%m-%d', time.gmtime())} {started}-" \
                       f"{time.strftime('%H:%M', time.gmtime())} UTC"
                reference = "the reference passes" if best[0] in {x.id for x in named} else \
                    "the reference passes it in the coverage run of today's impl/ (on the " \
                    "suite's own Ray)"
                print(answer_line(key, best[0], moved, best[1], when, reference, release_suffix),
                      flush=True)
    finally:
        runner.close()
    return 1 if failures else 0
