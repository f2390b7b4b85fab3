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
  answers [--previous OLD.json] [--write]
                                answers.txt for the committed survivors: carried
                                by key or diff, the run's state drafted, the
                                rest listed to be read
  sample [--count N] [--seed S] [--shard I/N]
                                the CI ratchet: N mutants the committed results
                                say are killed must still be killed
  check KEY... [--scenario ID] [--covering N [--coverage MAP] [--only-new] [--untried]]
        [--runs R] [--profile P] [--answers]
                                whether a scenario kills a committed mutant on
                                today's impl/ (every one of R runs fails it)

The mutation extra (``RLC_EXTRAS=mutation bash ci/setup.sh``) lives in
``$VENV/mutation-site``, off the venv's path: this command puts it on its own
``sys.path`` only (see ci/mutation.lock). No pytest on this path.
"""
from __future__ import annotations

import argparse
import contextlib
import json
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
        # a release's environment (``conformance venv``: another Ray, for `mutate check`)
        # has no extra of its own: the suite's, when its Python is this one (the extra
        # is pure Python but for its wheels' ABI)
        suite = REPO_ROOT / os.environ.get("RLC_VENV", ".venv")
        if (suite / "mutation-site" / "cosmic_ray").is_dir() and (
                suite / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}").is_dir():
            site = suite / "mutation-site"
        else:
            raise SystemExit(f"error: cosmic-ray is not installed in {site}: run "
                             f"RLC_EXTRAS=mutation RLC_VENV={sys.prefix} bash ci/setup.sh "
                             f"(a release's environment uses the suite's {suite}/mutation-site "
                             "when that venv's Python is this one)")
    for path in (str(PLUGINS), str(site)):
        if path not in sys.path:
            sys.path.insert(0, path)


def session_path(profile: str) -> Path:
    return SESSIONS / f"session-{profile}.sqlite"


def cmd_coverage(args) -> int:
    from conformance import catalog
    from conformance.mutation.coverage_map import load, matches_any, measure

    RESULTS.mkdir(parents=True, exist_ok=True)
    out = args.out or str(RESULTS / f"coverage-{args.profile}.json")

    if args.moved_from and (args.merge or args.profile != "full"):
        raise SystemExit("error: --moved-from is for `coverage --profile full` alone (not --merge)")
    reuse = None
    if args.merge:  # new scenarios (or --scenario: these again): measure them alone, keep the rest
        reuse = load(out)
        if args.scenario:
            again = {sid for sid in reuse["baseline"]
                     if matches_any(sid, args.scenario)}
            reuse["baseline"] = {k: v for k, v in reuse["baseline"].items() if k not in again}
            reuse["lines"] = {m: {ln: [s for s in ids if s not in again] for ln, ids in per.items()}
                              for m, per in reuse["lines"].items()}
    elif args.profile == "full" and (RESULTS / "coverage-quick.json").exists():
        reuse = load(RESULTS / "coverage-quick.json")  # run only the full-only ones
        if args.moved_from:  # and only those the map committed at that revision lacks
            from conformance.mutation.coverage_map import merge_lines, moved_from

            quick_ids = set(reuse["baseline"])
            full_ids = {s.id for s in catalog.scenarios(("local", "multinode"), "full")}
            old = moved_from(args.moved_from, "full", lambda sid: sid in full_ids and sid not in quick_ids)
            reuse["baseline"].update(old["baseline"])
            merge_lines(reuse["lines"], old["lines"])
            print(f"taken from the full map of {args.moved_from}, moved to today's impl/: "
                  f"{len(old['baseline'])} full-only scenarios")
    result = measure(args.profile, out, scenario_filter=args.scenario, reuse=reuse)
    print(f"coverage of {len(result['baseline'])} scenarios in {result['seconds']} s: {out}")
    return 0


def cmd_init(args) -> int:
    """cosmic-ray init, its operators filter (ci/mutation.toml), our equivalence filter."""
    from cosmic_ray.cli import main as cosmic_ray
    from cosmic_ray.tools.filters.operators_filter import OperatorsFilter

    from conformance.mutation.filters import EquivalentFilter

    from conformance.mutation.resume import record

    db = Path(args.session or session_path(args.profile))
    db.parent.mkdir(parents=True, exist_ok=True)
    if db.exists():
        raise SystemExit(f"error: {db} exists: `mutate run` resumes it; remove it to start again")
    coverage = RESULTS / f"coverage-{args.profile}.json"
    if not coverage.exists():  # checked before a database exists: a failed init leaves none
        raise SystemExit(f"error: no coverage map {coverage}: run `python -m conformance mutate "
                         f"coverage --profile {args.profile}` first")
    check_pristine()
    if args.carry and (args.fresh or args.profile == "full"):
        raise SystemExit("error: --carry takes the committed quick results to a changed impl/: "
                         "not with --fresh, nor for the full profile (its session is the quick one's)")
    if args.profile == "full":  # the finished quick session's kills: of this very tree and map
        refuse_another_tree(session_path("quick"), RESULTS / "coverage-quick.json")
        code = init_full(db)
        record(db, coverage)
        return code
    os.chdir(REPO_ROOT)  # cosmic-ray's module paths are relative
    for step in (lambda: cosmic_ray(["init", str(CONFIG), str(db)]),
                 lambda: OperatorsFilter().main([str(db), str(CONFIG)]),
                 lambda: EquivalentFilter().main([str(db)])):
        code = step()
        if code:
            return int(code)
    record(db, coverage)
    if args.carry:
        print(carry_committed_results(db, args.profile))
    elif not args.fresh:
        print(take_committed_results(db, args.profile))
    print(counts(db))
    return 0


def committed_scores() -> dict:
    path = RESULTS / "score.json"
    return json.loads(path.read_text()) if path.exists() else {}


def carry_committed_results(db: Path, profile: str) -> str:
    """The committed results of the same changes into the new session, on a
    changed impl/ (``conformance.mutation.carry``)."""
    from conformance.mutation.carry import carry
    from conformance.mutation.coverage_map import load
    from conformance.mutation.selection import Selection

    rows_path = RESULTS / f"mutants-{profile}.json"
    if not rows_path.exists():
        return f"no committed results ({rows_path}): every mutant is pending"
    coverage = RESULTS / f"coverage-{profile}.json"
    n = carry(db, json.loads(rows_path.read_text()), Selection(load(coverage), profile, root=REPO_ROOT))
    then = committed_scores().get(profile, {}).get("provenance", {})
    from conformance.mutation.resume import provenance_path

    record = json.loads(provenance_path(db).read_text())
    record["carried"] = {"from_impl_tree": then.get("impl_tree"),
                         "from_suite_commit": then.get("suite_commit"), **n}
    provenance_path(db).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return (f"carried {n['carried']} committed results of the same changes (measured on impl/ "
            f"tree {str(then.get('impl_tree', 'unrecorded'))[:7]}); pending: {n['new']} new "
            f"change(s), {n['rerun']} result(s) that no longer hold. Then `mutate answers "
            f"--previous OLD.json --write` carries the survivors' answers to their new keys (OLD: "
            f"the committed mutants-{profile}.json, saved before `mutate report` overwrites it, "
            f"e.g. `git show HEAD:ci/results/mutation/mutants-{profile}.json`)")


def take_committed_results(db: Path, profile: str) -> str:
    """The committed results of the same mutants into the new session (a
    fresh clone goes on where the committed analysis stopped)."""
    from conformance.mutation.resume import provenance, take_committed

    rows_path = RESULTS / f"mutants-{profile}.json"
    then = committed_scores().get(profile, {}).get("provenance")
    if not rows_path.exists():
        return f"no committed results ({rows_path}): every mutant is pending"
    if then is None:
        return (f"committed results not taken: {RESULTS / 'score.json'} does not say what they were "
                "measured on (written before provenance was recorded); every mutant is pending")
    from conformance.mutation.coverage_map import load
    from conformance.mutation.selection import Selection

    coverage = RESULTS / f"coverage-{profile}.json"
    taken, message = take_committed(db, json.loads(rows_path.read_text()), then, provenance(coverage),
                                    Selection(load(coverage), profile, root=REPO_ROOT))
    if taken:  # what they were measured at (and carried from) stays in the record
        note_taken(db, taken, then)
    return message


def note_taken(db: Path, taken: int, then: dict) -> dict:
    """Add to session ``db``'s record which committed results it took:
    ``taken`` = {results, measured_at (their suite commit), carried (the
    committed record's, if they were carried)}; ``mutate report`` copies it
    into ``score.json``, so a report from a fresh clone still says where its
    results come from."""
    from conformance.mutation.resume import provenance_path, recorded

    record = recorded(db) or {}
    record["taken"] = {"results": taken, "measured_at": then.get("suite_commit"),
                       **({"carried": then["carried"]} if "carried" in then else {}),
                       **({"taken": then["taken"]} if "taken" in then else {})}
    provenance_path(db).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record


def init_full(db: Path) -> int:
    """The full profile's session: the quick one's mutants, those it killed
    kept killed (quick is part of full), and so are the survivors
    ``answers.txt`` answers "killed since by scenario X" or "equivalent
    because ..." (a quick scenario is a full one; an equivalence holds in
    any profile); the open survivors are pending again: ``run --profile
    full`` gives them only the scenarios quick does not have."""
    import shutil
    import sqlite3

    from cosmic_ray.work_db import WorkDB, use_db

    from conformance.mutation.report import load_answers, session_rows

    quick = session_path("quick")
    with use_db(str(quick), WorkDB.Mode.open) as work_db:
        if work_db.num_work_items != work_db.num_results:
            raise SystemExit(f"error: {quick} has pending mutants: finish the quick profile first")
        answers = load_answers(RESULTS / "answers.txt")
        settled = ("killed since", "equivalent")
        again = [r["job_id"] for r in session_rows(work_db) if r["outcome"] == "survived"
                 and not answers.get(r["key"], "").startswith(settled)]
    shutil.copyfile(quick, db)
    with sqlite3.connect(db) as conn:  # cosmic-ray's WorkDB has no call to forget a result
        conn.executemany("delete from work_results where job_id = ?", [(j,) for j in again])
    print(f"{len(again)} open survivors of the quick profile pending again")
    print(counts(db))
    return 0


def counts(db) -> str:
    from cosmic_ray.work_db import WorkDB, use_db

    with use_db(str(db), WorkDB.Mode.open) as work_db:
        total = work_db.num_work_items
        skipped = sum(1 for _, r in work_db.results if r.worker_outcome.value == "skipped")
        done = work_db.num_results
    return f"{db}: {total} mutants, {skipped} filtered out, {total - done} pending"


CANARIES = {
    # where: the driver (every constructor acquires a lease first)
    "driver": ("impl/runtime.py", '    """Join the running Ray runtime, or start one (and own it) if none runs."""\n',
               '    """Join the running Ray runtime, or start one (and own it) if none runs."""\n'
               '    raise RuntimeError("rlc mutation canary in the driver")\n'),
    # where: the Ray workers (every actor answers ready() before a constructor returns)
    "actor": ("impl/control.py", "    def ready(self) -> bool:\n        return True\n",
              "    def ready(self) -> bool:\n        raise RuntimeError(\"rlc mutation canary in an actor\")\n"),
}
CANARY_SCENARIOS = ("order/multinode/user/collector>buffer>evaluator>ray",
                    "order/local/user/collector>buffer>evaluator>ray")


def cmd_canary(args) -> int:
    """Each canary mutant on disk must fail both scenarios, with its own
    message in the evidence; the unmutated reference must pass them before
    and after (the ``multinode`` cluster's workers keep no mutant)."""
    from cosmic_ray.util import restore_contents

    from conformance import catalog
    from conformance.mutation.runner import ScenarioRunner

    check_pristine()
    runner = ScenarioRunner()
    failures = []

    def expect(sid, passes, marker=None):
        entry, _ = runner.run(catalog.find(sid))
        text = json.dumps(entry["evidence"])
        ok = (entry["verdict"] == "pass") == passes and (marker is None or marker in text)
        print(f"{'ok  ' if ok else 'FAIL'} {entry['verdict']:11} {sid}"
              f"{'' if marker is None else f' (expects {marker!r})'}", flush=True)
        if not ok:
            failures.append(sid)

    try:
        for sid in CANARY_SCENARIOS:
            expect(sid, True)
        for where, (module, before, after) in CANARIES.items():
            path = REPO_ROOT / module
            with restore_contents(path):
                source = path.read_text()
                assert source.count(before) == 1, f"canary {where}: {module} changed; update CANARIES"
                path.write_text(source.replace(before, after))
                for sid in CANARY_SCENARIOS:
                    expect(sid, False, f"rlc mutation canary in {'the driver' if where == 'driver' else 'an actor'}")
        for sid in CANARY_SCENARIOS:
            expect(sid, True)
    finally:
        runner.close()
    print("canary: the mutant on disk is what drivers and Ray workers run" if not failures
          else f"canary: FAILED for {failures}")
    return 1 if failures else 0


def check_pristine() -> None:
    """impl/ as committed: a mutant left by a killed run would be measured as the reference."""
    import subprocess

    if os.environ.get("RLC_MUTATION_COPY") == "1":  # ci/mutation-*.sh checked the checkout it came from
        status = None
    else:
        status = subprocess.run(["git", "status", "--porcelain", "--", "impl"], cwd=REPO_ROOT,
                                capture_output=True, text=True)
        if status.returncode != 0:  # no answer is no proof: never taken as clean
            raise SystemExit(f"error: cannot tell whether impl/ is as committed (git status in "
                             f"{REPO_ROOT}: {status.stderr.strip()}); a copy of a checked tree sets "
                             "RLC_MUTATION_COPY=1")
    dirty = status.stdout.strip() if status else ""
    if dirty:
        raise SystemExit(f"error: impl/ differs from the commit (a mutant left by a killed run? "
                         f"`git checkout impl/` restores it):\n{dirty}")
    links = [str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "impl").rglob("*") if p.is_symlink()]
    if links:  # cosmic-ray's module glob follows them: mutants of another tree, or the same many times
        raise SystemExit(f"error: symbolic links under impl/: {', '.join(links)}")


def refuse_another_tree(db: Path, coverage: Path) -> None:
    """A session's results are of the impl/ tree, the mutants' sources and
    the coverage map it was started on (``init``'s record): adding results
    measured on others would give its committed results a false provenance."""
    from conformance.mutation.resume import changed_since, provenance, provenance_path, recorded

    then = recorded(db)
    if then is None:
        raise SystemExit(f"error: {provenance_path(db)} is missing: the session's impl/ tree and "
                         "coverage map are unknown; start it again (`mutate init`)")
    changed = changed_since(then, provenance(coverage))
    if changed:
        raise SystemExit(f"error: {', '.join(changed)} changed since the session {db} was started "
                         f"(at {then['suite_commit'][:12]}): its results would mix two; finish it on "
                         "that commit, or start a new session (`mutate init`)")


def kills_and_passed(db: Path, shard: str | None, deep: bool,
                     deeper_only=None) -> tuple[list, dict]:
    """The session's kills ``(module, line, killer)`` (their scenarios run
    first near them), and ``{job id: scenarios it passed}`` of the shallow
    survivors sent deeper: with ``deep``, this shard's are made pending
    again (only those ``deeper_only(item, passed)`` accepts, when given).
    The passed lists, with the first-pass output and diff, are kept beside
    the session (``conformance.mutation.deepening``) until a mutant's deeper
    result is in, so a stopped ``--deep`` run, or another shard's, goes on
    without running those scenarios again, and ``mutate report`` still
    counts the mutant a shallow survivor."""
    import fcntl
    import sqlite3

    from cosmic_ray.work_db import WorkDB, use_db

    from conformance.mutation import deepening
    from conformance.mutation.distributor import SHALLOW, killer_of, passed_of
    from conformance.mutation.shards import in_shard

    with open(db.with_suffix(".shallow.lock"), "w") as shards_lock:  # shards start side by side
        fcntl.flock(shards_lock, fcntl.LOCK_EX)
        shallow = deepening.load(db)
        kills, deeper = [], {}
        with use_db(str(db), WorkDB.Mode.open) as work_db:
            for item, result in work_db.completed_work_items:
                shallow.pop(item.job_id, None)  # its result is in
                killer = killer_of(result.output)
                if killer:
                    m = item.mutations[0]
                    kills.append((str(m.module_path), m.start_pos[0], killer))
                elif deep and (result.output or "").startswith(SHALLOW) and in_shard(item.job_id, shard):
                    passed = sorted(passed_of(result.output))
                    if deeper_only is None or deeper_only(item, passed):
                        deeper[item.job_id] = deepening.record(passed, result)
        shallow.update(deeper)
        deepening.save(db, shallow)
        if deeper:  # pending again, with what they passed already
            with sqlite3.connect(db) as conn:
                conn.executemany("delete from work_results where job_id = ?", [(j,) for j in deeper])
    return kills, deepening.passed_of(shallow)


def _deeper_only(patterns: list | None, max_left: int | None, coverage: Path, profile: str):
    """``deeper_only`` for ``run --deep`` (None: every shallow survivor): the
    survivors whose covering scenarios not yet run all match ``patterns``
    (``--scenario``: the scenarios of a family the catalog just gained, on
    the survivors that passed all the others; measured 2026-11-27, the
    weights family's two scenarios cover lines of 254 shallow survivors, 23
    of which had run everything else), and are at most ``max_left``
    (``--max-left``), both when both are given."""
    if not patterns and max_left is None:
        return None
    from conformance.mutation import coverage_map
    from conformance.mutation.distributor import covering_of
    from conformance.mutation.selection import Selection

    selection = Selection(coverage_map.load(str(coverage)), profile, root=REPO_ROOT)

    def wanted(item, passed) -> bool:
        unrun = covering_of(item.mutations[0], selection, REPO_ROOT) - set(passed)
        return bool(unrun) and (max_left is None or len(unrun) <= max_left) and (
            not patterns or all(coverage_map.matches_any(sid, patterns) for sid in unrun))
    return wanted


def cmd_run(args) -> int:
    """cosmic-ray exec with the rlc-scenarios distributor, for at most
    ``--minutes`` (then it stops between two mutants; rerun to resume)."""
    import fcntl
    import tempfile
    import time

    from cosmic_ray.cli import main as cosmic_ray

    if args.scenario and not args.deep:
        raise SystemExit("error: --scenario chooses which shallow survivors go deeper: use it with --deep")
    if args.max_left is not None and (not args.deep or args.max_left < 1):
        raise SystemExit("error: --max-left N (N >= 1) chooses which shallow survivors go deeper: "
                         "use it with --deep")
    if args.scenario and args.budget:
        raise SystemExit("error: --scenario runs every matching scenario a survivor has left: "
                         "--budget would not cut it; leave one of them out")
    if args.scenario:
        from conformance import catalog
        from conformance.mutation import coverage_map

        ids = [s.id for s in catalog.scenarios(("local", "multinode"), args.profile)]
        idle = [g for g in args.scenario if not any(coverage_map.matches_any(i, [g]) for i in ids)]
        if idle:
            raise SystemExit(f"error: --scenario {' '.join(idle)}: no scenario of the {args.profile} "
                             "profile matches (ids are family/fixture/owner/variant, "
                             "case-sensitive): `python -m conformance catalog --profile "
                             f"{args.profile}` shows them")
    db = Path(args.session or session_path(args.profile))
    if not db.exists():
        raise SystemExit(f"error: no session {db}: run `python -m conformance mutate init` first")
    coverage = Path(args.coverage or RESULTS / f"coverage-{args.profile}.json")
    if not coverage.exists():
        raise SystemExit(f"error: no coverage map {coverage}: run `python -m conformance mutate "
                         f"coverage --profile {args.profile}` first")
    check_pristine()
    refuse_another_tree(db, coverage)
    # the mutants are written into this tree: one mutation run per tree
    (REPO_ROOT / "reports").mkdir(exist_ok=True)
    lock = open(REPO_ROOT / "reports" / ".mutation-tree.lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SystemExit("error: another mutation run writes mutants into this tree; run "
                         "another shard from another copy (git worktree add) with --session")
    kills, shallow = kills_and_passed(db, args.shard, args.deep,
                                      _deeper_only(args.scenario, args.max_left, coverage, args.profile))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"kills": kills, "shallow": shallow}, f)
    os.environ.update({
        "RLC_MUTATION_PROFILE": args.profile, "RLC_MUTATION_COVERAGE": str(coverage),
        "RLC_MUTATION_KILLS": f.name, "RLC_MUTATION_SHARD": args.shard or "",
        "RLC_MUTATION_STOP_AT": str(time.time() + 60 * args.minutes) if args.minutes else "",
        "RLC_MUTATION_BUDGET": str(args.budget or 0),
        "RLC_MUTATION_SCENARIOS": " ".join(args.scenario or ()),
    })
    os.chdir(REPO_ROOT)
    started = time.monotonic()
    try:
        code = cosmic_ray(["exec", str(CONFIG), str(db)])
    finally:
        os.unlink(f.name)
    print(f"mutate run: {time.monotonic() - started:.0f} s; {counts(db)}")
    return int(code or 0)


def cmd_report(args) -> int:
    """mutants-P.json, score.json and report.md from the sessions there are."""
    from conformance import catalog
    from conformance.mutation import report

    from conformance.mutation.resume import provenance_path, recorded

    profiles, notes = {}, {}
    committed = committed_scores()
    for profile in ("quick", "full"):
        db = Path(getattr(args, f"{profile}_session") or session_path(profile))
        committed_rows = RESULTS / f"mutants-{profile}.json"
        if db.exists():
            profiles[profile] = report.load_session(db)
            then = recorded(db)  # init's record: what these results were measured on
            if then is None:
                print(f"warning: {provenance_path(db)} is missing: the {profile} results get no "
                      "provenance, and a fresh clone's `mutate init` will not take them")
            else:
                notes[profile] = {"provenance": then}
        elif committed_rows.exists():  # committed, no local session
            profiles[profile] = json.loads(committed_rows.read_text())
            if "provenance" in committed.get(profile, {}):
                notes[profile] = {"provenance": committed[profile]["provenance"]}
    if not profiles:
        raise SystemExit("error: no session and no committed results: run `mutate init` and `mutate run`")
    scenarios = {p: {sc.id for sc in catalog.scenarios(profile=p)} for p in profiles}
    scores = report.write(RESULTS, profiles, RESULTS / "answers.txt", notes, scenarios)
    for profile, s in scores.items():
        a = s["all"]
        print(f"{profile}: {a['killed']} killed, {a['survived']} survived (open), {a['equivalent']} equivalent, "
              f"{a['skipped']} filtered, {a['pending']} pending: score {a['score']}")
    print(f"written: {RESULTS / 'report.md'}")
    return 0


def cmd_answers(args) -> int:
    from conformance.mutation import answers

    return answers.main(args, RESULTS, REPO_ROOT)


#: how far from its recorded occurrence a mutant is looked for in a changed module
RELOCATE_SPAN = 40


@contextlib.contextmanager
def _relocated(r: dict):
    """The committed mutant ``r`` applied to impl/ as it is now: the
    occurrence of its operator whose diff is its diff (line numbers aside),
    nearest the recorded one; ``None`` when the code it mutated changed (a
    stale mutant: the results do not say whether the suite kills what is
    there now)."""
    from cosmic_ray.mutating import use_mutation
    from cosmic_ray.plugins import get_operator

    from conformance.mutation.distributor import _diff
    from conformance.mutation.report import change_of

    want = change_of(r["diff"])
    order = [r["occurrence"]] + [r["occurrence"] + d * s for d in range(1, RELOCATE_SPAN + 1)
                                 for s in (-1, 1) if r["occurrence"] + d * s >= 0]
    for occurrence in order:
        operator = get_operator(r["operator"])()
        with use_mutation(Path(r["module"]), operator, occurrence) as (original, mutated):
            if mutated is not None and change_of(_diff(original, mutated, r["module"])) == want:
                yield occurrence
                return
    yield None


#: runs more of a sampled mutant's killer when it passes: it survives only if all pass
SURVIVOR_RERUNS = 2


def sample_draw(killed: list, seed: int, count: int, shard: str | None = None) -> tuple[list, int]:
    """The order in which the sample takes ``killed`` mutants (fixed by
    ``seed``; a stale one makes way for the next) and how many it judges.
    With ``shard`` I/N the draw is dealt out in turn (``shards.deal``): the
    N shards together judge the mutants the whole sample would."""
    import random

    from conformance.mutation import shards

    return shards.deal(random.Random(seed).sample(killed, len(killed)), count, shard)


def sample_verdict(outcome) -> str:
    """A sampled mutant's verdict: ``killed`` when its killer failed it,
    ``SURVIVED`` when it passed, ``UNKNOWN`` when the harness could not
    judge (verdict ``error``: never a pass, never the implementation's
    failure, conformance.judge.verdict); an unknown never keeps a kill."""
    if outcome.passed:
        return "SURVIVED"
    return "killed" if outcome.killed else "UNKNOWN"


def _stop_once(signum, frame):
    """The first SIGINT or SIGTERM stops ``mutate sample`` as Ctrl-C does
    (the mutant restored, the session's clusters stopped); any later one is
    ignored, so it cannot cut that cleanup short: a shard gets a stop twice
    when ci/mutation-sample.sh passes on one its process group already had."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt(f"signal {signum}")


def install_stop_handlers() -> None:
    """SIGINT and SIGTERM both take ``_stop_once``, also where SIGINT came in
    ignored (a background job of a script: .ci/run started with ``&``).
    SIGTERM only until the session starts its multinode cluster in this
    process: Ray's node then takes SIGTERM over (it drains the node for up
    to 30 s, kills its processes and exits 1; measured on Ray 2.60.0,
    2026-11-27), so a stop is sent as SIGINT (ci/mutation-sample.sh)."""
    import signal

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _stop_once)


def cmd_sample(args) -> int:
    """The CI ratchet: ``--count`` mutants the committed results say are
    killed (drawn in an order fixed by ``--seed``), each against the scenario
    that killed it; exit 1 if one now survives.

    impl/ may have changed since the results: a committed mutant is found
    again by its diff (its line numbers aside) and run where it now is; one
    whose code changed is stale, reported, and the next one drawn instead.
    Exit 2 when fewer than half of ``--count`` (with ``--shard``, of the
    shard's share) could be judged (the results are too old to say anything:
    rerun the analysis)."""
    install_stop_handlers()  # first: a stop while it imports counts too
    import time

    from conformance import catalog
    from conformance.mutation.runner import ScenarioRunner

    check_pristine()
    rows = json.loads((RESULTS / f"mutants-{args.profile}.json").read_text())
    killed = sorted((r for r in rows if r["outcome"] == "killed" and r["killer"]), key=lambda r: r["key"])
    order, count = sample_draw(killed, args.seed, args.count, args.shard)
    started = time.monotonic()
    runner = ScenarioRunner()
    judged, survived, stale = [], [], []
    os.chdir(REPO_ROOT)
    try:
        for r in order:
            if len(judged) >= count:
                break
            mutant_started = time.monotonic()
            with _relocated(r) as occurrence:
                if occurrence is None:
                    stale.append(r["key"])
                    print(f"STALE    {r['key']}: the code it mutated changed since the results",
                          flush=True)
                    continue
                # a failure is not confirmed by a second run (as mutate run does): here it only
                # keeps a committed kill, and a hang confirmed twice cost two deadlines (366 s of
                # the sample's 419 s in the CI run of cbbf1fd, collector.py:142)
                outcome = runner.outcome(catalog.find(r["killer"]), confirm=False)
                # a pass is asked again: a kill may rest on a race (resources.py:32, killed by
                # resources_released_at_teardown under CI's load, passed alone, 2026-11-27)
                for _ in range(SURVIVOR_RERUNS):
                    if not outcome.passed:
                        break
                    outcome = runner.outcome(catalog.find(r["killer"]), confirm=False)
            judged.append(r["key"])
            moved = "" if occurrence == r["occurrence"] else f" (now occurrence {occurrence})"
            verdict = sample_verdict(outcome)
            print(f"{verdict:8} {r['key']}{moved} by {outcome.line()} "
                  f"({time.monotonic() - mutant_started:.0f} s)", flush=True)
            if verdict != "killed":
                survived.append(r["key"])
    finally:
        runner.close()
    shard = f", shard {args.shard}" if args.shard else ""
    print(f"mutate sample: {len(judged)} mutants judged (seed {args.seed}{shard}) in "
          f"{time.monotonic() - started:.0f} s: {len(judged) - len(survived)} still killed, "
          f"{len(survived)} survived or unknown; {len(stale)} stale skipped")
    if survived:
        print("a mutant the committed results say is killed now survives its killer (or the harness "
              "could not judge it: UNKNOWN): the suite lost "
              "detection power (repro: python -m conformance mutate sample --seed "
              f"{args.seed} --count {args.count}{' --shard ' + args.shard if args.shard else ''})")
        return 1
    if len(judged) * 2 < count:
        print(f"impl/ changed since ci/results/mutation/ was generated: only {len(judged)} of "
              f"{count} sampled mutants are still there; rerun the analysis "
              "(docs/mutation.md) and commit the results")
        return 2
    return 0


def cmd_check(args) -> int:
    """Whether the scenarios named kill the mutants named, on today's impl/
    (``conformance.mutation.check``)."""
    if not args.scenario and not args.covering:
        raise SystemExit("error: mutate check needs --scenario ID or --covering N")
    if (args.only_new or args.untried) and not args.covering:
        raise SystemExit("error: --only-new and --untried choose among --covering N's scenarios")
    if args.only_new and not args.coverage:
        raise SystemExit("error: --only-new leaves out the committed map's scenarios: give "
                         "--coverage MAP, a map of today's impl/ (`mutate coverage --out MAP`)")
    args.coverage = args.coverage or str(RESULTS / f"coverage-{args.profile}.json")
    install_stop_handlers()
    from conformance.mutation import check

    return check.main(args, RESULTS, REPO_ROOT, _relocated, check_pristine)


def shard_arg(text: str) -> str:
    """``I/N`` with 1 <= I <= N, else argparse's usage error."""
    from conformance.mutation import shards

    try:
        shards.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def main(argv=None) -> int:
    os.environ.update(RAY_ENV)
    parser = argparse.ArgumentParser(prog="python -m conformance mutate",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("coverage", help="measure which scenarios run which line")
    p.add_argument("--profile", default="quick", choices=("quick", "full"))
    p.add_argument("--scenario", action="append", help="only ids matching this glob")
    p.add_argument("--merge", action="store_true", help="measure only the scenarios the map lacks "
                   "(e.g. new ones; with --scenario: those again) and merge them into it")
    p.add_argument("--moved-from", metavar="REV",
                   help="full profile: take the full-only scenarios of the map committed at git "
                        "revision REV, its lines moved to today's impl/ (unchanged blocks only: "
                        "coverage_map.moved), and measure only the scenarios it lacks")
    p.add_argument("--out")
    p.set_defaults(func=cmd_coverage)
    p = sub.add_parser("canary", help="prove the mutant on disk is what drivers and actors run")
    p.set_defaults(func=cmd_canary)
    p = sub.add_parser("init", help="a new cosmic-ray session of every mutant of impl/")
    p.add_argument("--profile", default="quick", choices=("quick", "full"),
                   help="full: from the finished quick session, its survivors pending again")
    p.add_argument("--session", help=f"the session database (default {session_path('quick')})")
    p.add_argument("--fresh", action="store_true", help="every mutant pending: do not take the committed "
                   "results of the same mutants (taken by default when impl/, the operators and the "
                   "coverage map are those they were measured on; the full profile's session is "
                   "the finished quick one's, and takes none)")
    p.add_argument("--carry", action="store_true", help="impl/ changed since the committed results: "
                   "take each committed result whose mutant makes the same change (module, operator, "
                   "diff with its context line) in today's tree; the rest is "
                   "pending (an incremental analysis: conformance.mutation.carry)")
    p.set_defaults(func=cmd_init)
    p = sub.add_parser("run", help="run (or resume) the session's pending mutants")
    p.add_argument("--profile", default="quick", choices=("quick", "full"))
    p.add_argument("--session", help="the session database (default reports/mutation/session-PROFILE.sqlite)")
    p.add_argument("--coverage", help="the coverage map (default ci/results/mutation/coverage-PROFILE.json)")
    p.add_argument("--shard", metavar="I/N", type=shard_arg, help="only the mutants of shard I of N (run each shard "
                   "in its own copy of the tree, all on one --session)")
    p.add_argument("--minutes", type=float, help="start no mutant after this many minutes")
    p.add_argument("--budget", type=int, help="a first pass: at most this many scenarios per mutant "
                   "(its survivors are shallow: the score a lower bound)")
    p.add_argument("--scenario", action="append", metavar="GLOB", help="with --deep: only the shallow "
                   "survivors whose covering scenarios left to run all match GLOB (say the family "
                   "the catalog gained, on survivors that passed every other); the rest stay as "
                   "they are")
    p.add_argument("--max-left", type=int, metavar="N", help="with --deep: only the shallow "
                   "survivors with at most N covering scenarios left to run (the cheap part of "
                   "the deep pass first: its survivors run every one)")
    p.add_argument("--deep", action="store_true", help="the shallow survivors again, with the "
                   "covering scenarios they did not run")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="write ci/results/mutation/ from the sessions")
    p.add_argument("--quick-session")
    p.add_argument("--full-session")
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("answers", help="answers.txt for the survivors of the committed results: "
                       "answers carried by key or diff, the run's state drafted, the rest listed")
    p.add_argument("--profile", default="quick", choices=("quick", "full"))
    p.add_argument("--previous", metavar="OLD.json", help="the mutants file the answers were written "
                   "against (e.g. `git show REV:ci/results/mutation/mutants-quick.json`)")
    p.add_argument("--write", action="store_true", help="rewrite answers.txt (default: print it)")
    p.set_defaults(func=cmd_answers)
    p = sub.add_parser("sample", help="CI ratchet: a seeded sample of killed mutants must stay killed")
    p.add_argument("--profile", default="quick", choices=("quick", "full"))
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--seed", type=int, default=27)
    p.add_argument("--shard", metavar="I/N", type=shard_arg, help="judge only shard I of N of the "
                   "sample (each in its own copy of the tree: ci/mutation-sample.sh runs them side "
                   "by side); the N shards together judge the --count mutants of the whole sample")
    p.set_defaults(func=cmd_sample)
    p = sub.add_parser("check", help="whether a scenario kills a committed mutant on today's impl/: "
                       "each run RUNS times, killed only if every run fails it")
    p.add_argument("keys", nargs="+", metavar="KEY", help="a mutant's key in mutants-PROFILE.json")
    p.add_argument("--scenario", action="append", metavar="ID",
                   help="a scenario id (repeat: the first that kills it counts)")
    p.add_argument("--covering", type=int, default=0, metavar="N",
                   help="then up to N scenarios that run the mutant's line now, by --coverage")
    p.add_argument("--coverage", metavar="MAP", help="a coverage map of today's impl/ "
                   "(`mutate coverage --out MAP`; default the committed one)")
    p.add_argument("--only-new", action="store_true", help="with --covering: only scenarios "
                   "the committed results' coverage map lacks (new since they were measured)")
    p.add_argument("--untried", action="store_true", help="with --covering: not the scenarios "
                   "a shallow survivor's committed result says it passed")
    p.add_argument("--profile", default="quick", choices=("quick", "full"))
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--answers", action="store_true", help="print each kill's answers.txt line")
    p.set_defaults(func=cmd_check)
    args = parser.parse_args(argv)
    use_mutation_extra()
    return args.func(args)
