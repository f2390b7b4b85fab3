"""Mutation analysis (``python -m conformance mutate``): the operators, the
annotation filter, the scenario selection, the kill confirmation, and the
committed results: every module of impl/ covered, every survivor answered
once, the score not below its recorded floor.

cosmic-ray lives in ``$VENV/mutation-site`` (``RLC_EXTRAS=mutation``), off
the venv's path: a test puts it on ``sys.path`` only while it runs. What it
imports stays imported (aiohttp among them); Ray's dashboard check is not
affected (measured: ``ray.dashboard.optional_deps`` also needs aiohttp_cors,
opencensus, prometheus_client, none of them there).
"""
import json
import os

import pytest

from conformance.mutation.selection import Selection
from fixtures.rayenv import REPO_ROOT

RESULTS = REPO_ROOT / "ci" / "results" / "mutation"


def test_lifecycle_operators_mutate_as_their_examples_say(cosmic_ray_path):
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator, operator_names

    from conformance.mutation import operators

    assert {f"rlc/{name}" for name in operators.OPERATORS} <= set(operator_names())
    for name in operators.OPERATORS:
        op = get_operator(f"rlc/{name}")
        for example in op.examples():
            got = mutate_code(example.pre_mutation_code, op(), example.occurrence)
            assert (example.pre_mutation_code if got is None else got) == example.post_mutation_code, name


def test_teardown_statement_deletion_hits_only_teardown_functions(cosmic_ray_path):
    from cosmic_ray.mutating import mutate_code

    from conformance.mutation.operators import DeleteTeardownStatement

    code = ('def shutdown(self):\n    """Doc."""\n    self.stop()\n    return x\n'
            'def sample(self):\n    self.stop()\n')
    mutants = [mutate_code(code, DeleteTeardownStatement(), k) for k in range(3)]
    assert mutants[0] == code.replace("    self.stop()\n    return", "    pass\n    return", 1)
    assert mutants[1] == code.replace("    return x\n", "    pass\n")
    assert mutants[2] is None  # sample() is no teardown; the docstring stays


def test_annotations_are_recognised_and_expressions_are_not(cosmic_ray_path):
    import parso

    from conformance.mutation.filters import in_annotation

    code = ("from __future__ import annotations\n"
            "def f(a: dict | None = x | y, *, b: int = 1) -> list | None:\n"
            "    c: int | None = d | e\n"
            "    return a | b\n")
    tree = parso.parse(code)
    leaf = tree.get_leaf_for_position
    assert in_annotation(leaf((2, 14)))  # a: dict | None
    assert not in_annotation(leaf((2, 25)))  # = x | y, a default
    assert in_annotation(leaf((2, 52)))  # -> list | None
    assert in_annotation(leaf((3, 11)))  # c: int | None
    assert not in_annotation(leaf((3, 20)))  # = d | e
    assert not in_annotation(leaf((4, 13)))  # return a | b


def test_selection_runs_nearby_killers_then_multinode_then_the_shortest(cosmic_ray_path):

    coverage = {"baseline": {
        "early_break/local/user/async-after-0": {"verdict": "pass", "duration": 5.0, "fixture": "local"},
        "order/multinode/user/collector>buffer>evaluator>ray": {"verdict": "pass", "duration": 3.0,
                                                                "fixture": "multinode"},
        "exhaustion/multinode/user/async": {"verdict": "pass", "duration": 2.0, "fixture": "multinode"},
        "double_close/multinode/user/buffer-twice": {"verdict": "fail", "duration": 1.0, "fixture": "multinode"},
    }, "lines": {"impl/x.py": {"10": ["early_break/local/user/async-after-0",
                                      "order/multinode/user/collector>buffer>evaluator>ray",
                                      "exhaustion/multinode/user/async",
                                      "double_close/multinode/user/buffer-twice"]}}}
    selection = Selection(coverage, "quick")
    found = selection.covering("impl/x.py", 9, 10)
    assert "double_close/multinode/user/buffer-twice" not in found  # fails on the reference: kills nothing
    assert selection.order("impl/x.py", 10, found) == [
        "exhaustion/multinode/user/async", "order/multinode/user/collector>buffer>evaluator>ray",
        "early_break/local/user/async-after-0"]
    selection.kills.append(("impl/x.py", 14, "early_break/local/user/async-after-0"))
    assert selection.order("impl/x.py", 10, found)[0] == "early_break/local/user/async-after-0"
    assert selection.order("impl/y.py", 10, found)[0] == "exhaustion/multinode/user/async"


def test_every_failure_is_run_again_before_it_counts_as_a_kill(monkeypatch):
    """A race (not only a clock) can decide a failure: a fail of a
    non-timing oracle that passes its second run is a flip, a pass; two
    failures are a kill; the CI sample (``confirm=False``) runs once."""
    from conformance.mutation import runner as runner_module

    runs = []

    class Scenario:
        id, ops = "env_error/multinode/user/under-thread-unraised-concurrent", ()

    def fake_run(self, scenario):
        verdict, oracles = runs.pop(0)
        return {"verdict": verdict, "oracles": oracles, "duration": 1.0}, None

    monkeypatch.setattr(runner_module.ScenarioRunner, "run", fake_run)
    fake = object.__new__(runner_module.ScenarioRunner)
    runs[:] = [("fail", ["unraised_error_logged"]), ("pass", [])]
    flip = fake.outcome(Scenario())
    assert (flip.verdict, flip.killed, len(flip.runs)) == ("pass", False, 2)
    runs[:] = [("crash", ["no_crash"]), ("crash", ["no_crash"])]
    crash = fake.outcome(Scenario())
    assert (crash.verdict, crash.oracles, crash.killed) == ("crash", ["no_crash"], True)
    runs[:] = [("fail", ["calls_succeed"])]
    once = fake.outcome(Scenario(), confirm=False)
    assert (once.verdict, once.killed, len(once.runs), runs) == ("fail", True, 1, [])


def test_the_sample_dealt_to_shards_judges_the_mutants_of_the_whole_sample():
    from conformance.mutation.cli import sample_draw

    killed = [f"m{i}" for i in range(40)]
    whole, count = sample_draw(killed, 27, 10)
    assert count == 10 and sorted(whole) == sorted(killed)  # every kill, in the seed's order
    shares = [sample_draw(killed, 27, 10, f"{i}/3") for i in (1, 2, 3)]
    assert [n for _, n in shares] == [4, 3, 3]
    assert sorted(m for order, n in shares for m in order[:n]) == sorted(whole[:10])
    # a stale mutant makes way for the next of its own shard's order
    assert shares[0][0][:5] == [whole[0], whole[3], whole[6], whole[9], whole[12]]
    assert sample_draw(killed, 28, 10)[0] != whole  # the seed decides


def test_a_shard_outside_its_count_is_a_usage_error(capsys, monkeypatch):
    from conformance.mutation.cli import main

    monkeypatch.setattr(os, "environ", dict(os.environ))  # main() sets Ray's variables

    for bad in ("3/2", "0/2", "a/2", "1"):
        with pytest.raises(SystemExit) as stop:
            main(["sample", "--shard", bad])
        assert stop.value.code == 2
        assert "want" in capsys.readouterr().err


def test_committed_results_cover_every_module_of_impl():
    rows = json.loads((RESULTS / "mutants-quick.json").read_text())
    modules = {r["module"] for r in rows}
    excluded = {"impl/bench.py"}  # ci/mutation.toml says why
    # no operator applies: three exception classes, a message built by an
    # f-string (cosmic-ray mutates no string), no condition, no teardown
    no_site = {"impl/errors.py"}
    assert modules | no_site == {f"impl/{p.name}" for p in (REPO_ROOT / "impl").glob("*.py")} - excluded


def test_every_survivor_has_exactly_one_answer():
    from conformance.mutation.report import load_answers

    answers = load_answers(RESULTS / "answers.txt")
    keys = [line.split("  ", 1)[0] for line in (RESULTS / "answers.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert len(keys) == len(set(keys)), "a mutant answered twice"
    survivors = set()
    for profile in ("quick", "full"):
        path = RESULTS / f"mutants-{profile}.json"
        if path.exists():
            survivors |= {r["key"] for r in json.loads(path.read_text()) if r["outcome"] == "survived"}
    assert survivors <= set(answers), f"unanswered survivors: {sorted(survivors - set(answers))[:5]}"
    assert set(answers) <= survivors, f"answers of no survivor: {sorted(set(answers) - survivors)[:5]}"


def test_a_kill_since_counts_only_in_the_profiles_that_hold_its_scenario(tmp_path):
    """A survivor killed since by a full-only scenario is killed in the full
    score and open in the quick one (the quick run would not kill it)."""
    from conformance.mutation import report

    rows = [{"key": k, "module": "impl/x.py", "outcome": "survived", "output": "", "diff": ""}
            for k in ("a", "b")]
    (tmp_path / "answers.txt").write_text(
        "a  killed since by scenario background/multinode/user/long-batch>teardown-within-1.0s: runs\n"
        "b  killed since by scenario order/multinode/user/collector: runs\n")
    scores = report.write(tmp_path, {"quick": rows, "full": rows}, tmp_path / "answers.txt", {},
                          {"quick": {"order/multinode/user/collector"},
                           "full": {"order/multinode/user/collector",
                                    "background/multinode/user/long-batch>teardown-within-1.0s"}})
    assert (scores["quick"]["all"]["killed"], scores["quick"]["all"]["survived"]) == (1, 1)
    assert (scores["full"]["all"]["killed"], scores["full"]["all"]["survived"]) == (2, 0)
    assert "- answer: open in this profile: killed since by scenario background/" in \
        (tmp_path / "report.md").read_text()


def test_every_kill_since_names_a_scenario_of_the_catalog():
    """A renamed or removed scenario would turn its kills back into open
    survivors in every profile (``report.answer_in``): each answer's killer
    must be a scenario of the full profile."""
    from conformance import catalog
    from conformance.mutation.report import answer_killer, load_answers

    full = {s.id for s in catalog.scenarios(profile="full")}
    killers = {k: answer_killer(a) for k, a in load_answers(RESULTS / "answers.txt").items()}
    named = {k: s for k, s in killers.items() if s is not None}
    assert len(named) > 150, len(named)  # the answers parsed, not skipped
    missing = {k: s for k, s in named.items() if s not in full}
    assert not missing, f"answers naming no scenario of the catalog: {missing}"


def test_the_committed_score_is_not_below_its_floor():
    """A floor only rises; lowering one needs its own reason in the results'
    README, under "Score drops" (``report.floor_problems``)."""
    from conformance.mutation.report import floor_problems

    scores = json.loads((RESULTS / "score.json").read_text())
    floors = json.loads((RESULTS / "floor.json").read_text())
    assert floor_problems(scores, floors, (RESULTS / "README.md").read_text()) == []


def test_a_floor_broken_or_lowered_without_its_own_entry_is_named():
    from conformance.mutation.report import floor_problems

    scores = {"quick": {"all": {"score": 0.75}}, "full": {"all": {"score": 0.80}}}
    since = "2026-11-29, 08:10 UTC: three kills were measured on another Ray"
    readme = ("## Where it stands\n\nfloor quick 0.75 (lowered, 2026-11-29 08:10 UTC\n\n"
              "## Score drops\n\n- floor quick 0.75 (lowered, 2026-11-28 12:40 UTC, from "
              "0.76): an\n  earlier lowering to the same score\n")
    floors = {"quick": {"score": 0.75, "lowered": True, "since": since},
              "full": {"score": 0.81}}
    assert floor_problems(scores, floors, readme) == [
        "quick: floor 0.75 is marked lowered (since '2026-11-29, 08:10 UTC: three kills were "
        "measured on another Ray') and README's Score drops has no line 'floor quick 0.75 "
        "(lowered, 2026-11-29 08:10 UTC...'",
        "full: score 0.8 is below its floor 0.81"]
    # a since without its date and time cannot name an entry
    undated = {"quick": {"score": 0.75, "lowered": True, "since": "after the review"}}
    assert floor_problems(scores, undated, readme) == [
        "quick: floor 0.75 is marked lowered (since 'after the review') and README's Score "
        "drops has no line 'floor PROFILE SCORE (lowered, DATE HH:MM UTC...'"]
    # its own entry, wrapped over two lines as the README's are, answers it
    readme += "\n- floor quick 0.75\n  (lowered, 2026-11-29 08:10 UTC, from 0.77): why\n"
    floors["full"]["score"] = 0.80
    assert floor_problems(scores, floors, readme) == []


def test_mutants_inside_a_logger_call_are_recognised(cosmic_ray_path):
    import parso

    from conformance.mutation.filters import in_log_call

    code = ("def f(x):\n"
            "    if x > 1:\n"
            "        logger.warning('%s: %d left', x, len(x) + 1)\n"
            "    return x + 1\n")
    leaf = parso.parse(code).get_leaf_for_position
    assert in_log_call(leaf((3, 8)))  # the whole call (a deleted statement)
    assert in_log_call(leaf((3, 47)))  # len(x) + 1 in its arguments
    assert not in_log_call(leaf((2, 9)))  # the condition around it
    assert not in_log_call(leaf((4, 13)))  # return x + 1


def test_the_full_profile_runs_only_what_quick_does_not_have(cosmic_ray_path):
    """Its pending mutants are the quick profile's survivors: they passed
    every quick scenario covering them already."""

    quick_id, full_id = "exhaustion/multinode/user/async", "exhaustion/multinode/user/sync"
    coverage = {"baseline": {sid: {"verdict": "pass", "duration": 1.0, "fixture": "multinode"}
                             for sid in (quick_id, full_id)},
                "lines": {"impl/x.py": {"3": [quick_id, full_id]}}}
    assert Selection(coverage, "quick").covering("impl/x.py", 3, 3) == {quick_id}
    assert Selection(coverage, "full").covering("impl/x.py", 3, 3) == {full_id}


def test_a_value_made_at_import_is_covered_by_the_lines_that_use_it(tmp_path):
    """A constant, a class attribute, a def's defaults and decorators run at
    import, in every scenario: what stands for their mutants is what reads
    them (``use_sites``), here and, for a module constant, in a sibling
    module; a line inside a function stands for itself."""
    from conformance.mutation.use_sites import use_lines

    pkg = tmp_path / "impl"
    pkg.mkdir()
    (pkg / "x.py").write_text(
        "WAIT = 0.5\n"                      # 1
        "\n"
        "class C:\n"                         # 3
        "    ping = 2.0\n"                   # 4
        "\n"
        "    @property\n"                    # 6
        "    def f(self, t=WAIT):\n"         # 7
        "        \"\"\"doc\"\"\"\n"    # 8
        "        return self.ping + t\n"     # 9
        "\n"
        "def g():\n"                          # 11
        "    limit = 3\n"                    # 12
        "    return WAIT * limit\n")         # 13
    (pkg / "y.py").write_text("from impl import x\n\ndef h():\n    return x.WAIT\n")
    # the default t=WAIT is read when f is called: f's body
    assert use_lines("impl/x.py", 1, tmp_path) == {"impl/x.py": {9, 13}, "impl/y.py": {4}}
    assert use_lines("impl/x.py", 4, tmp_path) == {"impl/x.py": {9}}  # self.ping
    assert use_lines("impl/x.py", 6, tmp_path) == {"impl/x.py": {9}}  # the decorator: the body
    assert use_lines("impl/x.py", 7, tmp_path) == {"impl/x.py": {9}}  # a default: the body
    assert use_lines("impl/x.py", 12, tmp_path) is None  # runs when g() is called
    assert use_lines("impl/nowhere.py", 1, tmp_path) is None

    every = [f"exhaustion/multinode/user/s{i}" for i in range(4)]  # s3 imports x, never reads
    coverage = {"baseline": {sid: {"verdict": "pass", "duration": 1.0, "fixture": "multinode"}
                             for sid in every},
                "lines": {"impl/x.py": {"1": every, "4": every, "9": every[:1], "13": every[1:2]},
                          "impl/y.py": {"4": every[2:3]}}}
    selection = Selection(coverage, None, root=tmp_path)
    assert selection.covering("impl/x.py", 1, 1) == set(every[:3])  # f's body, g's line, y's
    assert selection.covering("impl/x.py", 4, 4) == {every[0]}  # not every importer: who reads it
    assert selection.covering("impl/x.py", 13, 13) == {every[1]}


def test_use_sites_follow_imports_and_give_up_where_the_source_cannot_tell(tmp_path):
    """Plain reads in another module count only where it imports the name
    (an alias too) or reads it through the module; a class attribute is
    read as ``x.name`` anywhere (a base class reads its subclass's); a value
    read only at import, an attribute or item target and a nested def are
    left to their own line (None); ``source`` is the text the lines are of
    (a mutant on disk may have moved them)."""
    from conformance.mutation.use_sites import use_lines

    pkg = tmp_path / "impl"
    pkg.mkdir()
    (pkg / "a.py").write_text(
        "import os\n"                            # 1
        "GROUPS = {'control': 1}\n"               # 2
        "WAIT = 2.0\n"                            # 3
        "os.environ['X'] = '1'\n"                 # 4
        "\n"
        "@deco(GROUPS)\n"                          # 6
        "class Child(Base):\n"                    # 7
        "    _close = 'close'\n"                   # 8
        "\n"
        "def outer():\n"                           # 10
        "    def inner(t=WAIT):\n"                 # 11
        "        return t\n"                       # 12
        "    return inner\n")                      # 13
    (pkg / "b.py").write_text(
        "from impl.a import WAIT as W\n"          # 1
        "from impl import a\n"                     # 2
        "def f():\n"                                # 3
        "    return W + a.WAIT\n"                   # 4
        "def g(self):\n"                            # 5
        "    return self._close\n")                 # 6
    (pkg / "c.py").write_text("WAIT = 9\ndef h():\n    return WAIT\n")  # its own WAIT
    assert use_lines("impl/a.py", 3, tmp_path) == {"impl/a.py": {12}, "impl/b.py": {4}}
    assert use_lines("impl/a.py", 8, tmp_path) == {"impl/b.py": {6}}  # the base's self._close
    assert use_lines("impl/a.py", 2, tmp_path) is None  # read by a class decorator only
    assert use_lines("impl/a.py", 4, tmp_path) is None  # an item of os.environ
    assert use_lines("impl/a.py", 11, tmp_path) is None  # a nested def: made when outer() runs
    moved = "\n\n" + (pkg / "a.py").read_text()  # the same module two lines lower
    assert use_lines("impl/a.py", 5, tmp_path, source=moved) == {"impl/a.py": {14}, "impl/b.py": {4}}
    every = [f"exhaustion/multinode/user/s{i}" for i in range(2)]
    coverage = {"baseline": {sid: {"verdict": "pass", "duration": 1.0, "fixture": "multinode"}
                             for sid in every}, "lines": {"impl/a.py": {"3": every}}}
    # no scenario runs a line using it: the line stands for itself again
    assert Selection(coverage, None, root=tmp_path).covering("impl/a.py", 3, 3) == set(every)


def test_a_mutant_inside_a_multiline_statement_is_covered_by_its_first_line(cosmic_ray_path):
    from conformance.mutation.distributor import statement_line

    code = ("def f(\n"
            "    a,\n"
            "    *,\n"
            "    b=1,\n"
            "):\n"
            "    return g(a,\n"
            "             b * 2)\n")
    assert statement_line(code, (3, 4)) == 1  # the * of the signature: the def line runs
    assert statement_line(code, (7, 15)) == 6  # inside a continued call: its statement's line


class _FakeRunner:
    """Outcomes by scenario id, recording what ran (no Ray)."""

    def __init__(self, failing=(), erroring=()):
        self.failing, self.erroring, self.ran = set(failing), set(erroring), []

    def outcome(self, scenario):
        from conformance.mutation.runner import Outcome

        self.ran.append(scenario.id)
        verdict = ("fail" if scenario.id in self.failing else
                   "error" if scenario.id in self.erroring else "pass")
        oracles = ["calls_succeed"] if verdict == "fail" else []
        return Outcome(scenario.id, verdict, oracles, 1.0, True, [(verdict, oracles)])


def _one_line_mutant(tmp_path, monkeypatch):
    """A mutant of m.py's one line, which three scenarios cover (two
    multinode, the shortest first): (work item, coverage map, their ids)."""
    from cosmic_ray.work_item import MutationSpec, WorkItem

    (tmp_path / "m.py").write_text("def f(x):\n    return x < 1\n")
    monkeypatch.chdir(tmp_path)
    ids = ["exhaustion/multinode/user/async", "order/multinode/user/collector>buffer>evaluator>ray",
           "early_break/local/user/async-after-0"]
    coverage = {"baseline": {sid: {"verdict": "pass", "duration": float(k), "fixture": sid.split("/")[1]}
                             for k, sid in enumerate(ids)}, "lines": {"m.py": {"2": ids}}}
    item = WorkItem.single("job", MutationSpec("m.py", "core/ReplaceComparisonOperator_Lt_LtE", 0,
                                               (2, 13), (2, 14)))
    return item, coverage, ids


def test_a_mutant_stops_at_its_first_kill_and_a_budget_makes_shallow_survivors(
        cosmic_ray_path, tmp_path, monkeypatch):
    from conformance.mutation import distributor

    item, coverage, ids = _one_line_mutant(tmp_path, monkeypatch)
    run = distributor.ScenarioDistributor().one
    runner = _FakeRunner(failing={ids[1]})
    killed = run(item, Selection(coverage, "quick"), runner, float("inf"))
    assert killed.test_outcome.value == "killed" and runner.ran == ids[:2]
    assert distributor.killer_of(killed.output) == ids[1] and "-    return x < 1" in killed.diff
    assert (tmp_path / "m.py").read_text() == "def f(x):\n    return x < 1\n"  # put back
    monkeypatch.setenv("RLC_MUTATION_BUDGET", "2")
    runner = _FakeRunner()
    shallow = run(item, Selection(coverage, "quick"), runner, float("inf"))
    assert shallow.test_outcome.value == "survived" and shallow.output.startswith(distributor.SHALLOW)
    assert runner.ran == ids[:2]
    with pytest.raises(distributor.TimeUp):  # time up inside a mutant: nothing recorded
        run(item, Selection(coverage, "quick"), _FakeRunner(), 0.0)
    # run --deep --scenario: only the matching scenarios it has not run; the rest stays for --deep
    monkeypatch.delenv("RLC_MUTATION_BUDGET")
    monkeypatch.setenv("RLC_MUTATION_SCENARIOS", "early_break/*")
    monkeypatch.setitem(distributor._SHALLOW_PASSED, "job", {ids[0]})
    runner = _FakeRunner()
    shallow = run(item, Selection(coverage, "quick"), runner, float("inf"))
    assert runner.ran == [ids[2]] and shallow.output.splitlines() == [
        f"{distributor.SHALLOW}2 of 3 covering scenario(s) passed", f"passed: {ids[2]} {ids[0]}"]
    monkeypatch.setenv("RLC_MUTATION_SCENARIOS", "early_break/* order/*")  # every one left matches
    runner = _FakeRunner()
    done = run(item, Selection(coverage, "quick"), runner, float("inf"))
    assert sorted(runner.ran) == sorted(ids[1:]) and done.output == "survived: 3 covering scenario(s) passed"


def test_a_harness_error_is_no_kill_and_the_mutant_goes_on_to_its_next_scenario(
        cosmic_ray_path, tmp_path, monkeypatch):
    """Verdict ``error`` (the harness could not judge) is unknown: the mutant
    is neither killed by it nor said to have passed it; the next scenario
    runs, and a survivor names the unknown one (a shallow survivor leaves it
    out of what it passed, so ``--deep`` runs it again)."""
    from conformance.mutation import distributor, resume

    item, coverage, ids = _one_line_mutant(tmp_path, monkeypatch)
    run = distributor.ScenarioDistributor().one
    runner = _FakeRunner(failing={ids[1]}, erroring={ids[0]})
    killed = run(item, Selection(coverage, "quick"), runner, float("inf"))
    assert runner.ran == ids[:2] and distributor.killer_of(killed.output) == ids[1]
    runner = _FakeRunner(erroring={ids[0]})
    survived = run(item, Selection(coverage, "quick"), runner, float("inf"))
    assert survived.test_outcome.value == "survived" and runner.ran == ids
    assert survived.output.splitlines()[0] == "survived: 2 of 3 covering scenario(s) passed"
    assert survived.output.splitlines()[-1] == f"unknown (harness error, not a kill): {ids[0]}"
    assert resume.unknown_of(survived.output) == {ids[0]}  # not passed, on a grown map either
    monkeypatch.setenv("RLC_MUTATION_BUDGET", "2")
    shallow = run(item, Selection(coverage, "quick"), _FakeRunner(erroring={ids[0]}),
                  float("inf"))
    assert shallow.output.splitlines()[:2] == [
        f"{distributor.SHALLOW}1 of 3 covering scenario(s) passed", f"passed: {ids[1]}"]


def test_a_new_session_takes_the_committed_results_of_the_same_mutants(cosmic_ray_path, tmp_path):
    """A fresh clone's ``mutate init`` goes on where the committed analysis
    stopped: each committed result lands on the pending mutant of its key;
    none does once impl/, the operators or the coverage map changed."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import MutationSpec, WorkItem

    from conformance.mutation import report
    from conformance.mutation.resume import take_committed

    def new_session(path):
        with use_db(str(path)) as db:
            for job, (line, op) in {"a": (2, "core/NumberReplacer"), "b": (2, "core/AddNot"),
                                    "c": (5, "core/AddNot")}.items():
                db.add_work_item(WorkItem.single(job, MutationSpec("impl/m.py", op, 0, (line, 4),
                                                                   (line, 9))))
        return path

    then = {"impl_tree": "t1", "mutant_sources_sha256": "o1", "coverage_sha256": "c1",
            "suite_commit": "0123456789abcdef"}
    committed = [{"key": "impl/m.py:2:4:core/AddNot:0", "outcome": "killed", "diff": "-x\n+not x",
                  "output": "killed by order/multinode/user/a (fail no_leak; scenario 1 of 3)"},
                 {"key": "impl/m.py:5:4:core/AddNot:0", "outcome": "survived", "diff": "-y\n+not y",
                  "output": "survived 3 scenarios"},
                 {"key": "impl/m.py:2:4:core/NumberReplacer:0", "outcome": "pending", "diff": "",
                  "output": ""}]
    db = new_session(tmp_path / "same.sqlite")
    taken, message = take_committed(db, committed, then, dict(then, suite_commit="fedcba"))
    assert taken == 2 and "measured at 0123456789ab" in message
    rows = {r["key"]: r for r in report.load_session(db)}
    assert rows["impl/m.py:2:4:core/AddNot:0"]["outcome"] == "killed"
    assert rows["impl/m.py:2:4:core/AddNot:0"]["killer"] == "order/multinode/user/a"
    assert rows["impl/m.py:5:4:core/AddNot:0"]["outcome"] == "survived"
    assert rows["impl/m.py:5:4:core/AddNot:0"]["diff"] == "-y\n+not y"
    assert rows["impl/m.py:2:4:core/NumberReplacer:0"]["outcome"] == "pending"
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        assert len(work_db.pending_work_items) == 1  # cosmic-ray's exec runs only that one

    db = new_session(tmp_path / "changed.sqlite")
    taken, message = take_committed(db, committed, then, dict(then, impl_tree="t2", coverage_sha256="c2"))
    assert taken == 0 and "impl/, the coverage map changed" in message
    assert {r["outcome"] for r in report.load_session(db)} == {"pending"}


def test_answers_follow_their_mutant_and_only_the_runs_state_is_drafted(cosmic_ray_path, tmp_path):
    """After a rerun on changed code: an answer moves with its diff to the
    survivor's new key; a shallow or uncovered survivor gets the run's state;
    one that passed every covering scenario is left to be read; an answer
    whose mutant is now killed is dropped."""
    from conformance.mutation.answers import answer_all

    (tmp_path / "impl").mkdir()
    (tmp_path / "impl" / "m.py").write_text(
        "class C:\n    def shutdown(self):\n        x = 1\n        return x\n")

    def row(key, line, outcome, diff, output):
        return {"key": key, "module": "impl/m.py", "line": line, "outcome": outcome,
                "diff": diff, "output": output}

    moved = "--- a/impl/m.py\n+++ b/impl/m.py\n@@ -{n},1 +{n},1 @@\n-        x = 1\n+        x = 2"
    previous = [row("impl/m.py:3:12:core/NumberReplacer:0", 3, "survived", moved.format(n=3),
                    "survived: 5 covering scenario(s) passed"),
                row("impl/m.py:9:1:core/AddNot:0", 9, "survived", "-a\n+not a", "survived: 2 ...")]
    answers = {"impl/m.py:3:12:core/NumberReplacer:0": "open [own]: x's value is never read",
               "impl/m.py:9:1:core/AddNot:0": "open [mut]: now killed"}
    rows = [row("impl/m.py:4:12:core/NumberReplacer:0", 4, "survived", moved.format(n=4),
                "survived: 5 covering scenario(s) passed"),
            row("impl/m.py:9:1:core/AddNot:0", 9, "killed", "-a\n+not a", "killed by x"),
            row("impl/m.py:4:15:core/AddNot:0", 4, "survived", "-x\n+not x",
                "survived-shallow: 12 of 40 covering scenario(s) passed"),
            row("impl/m.py:3:8:core/NumberReplacer:1", 3, "survived", "-1\n+2",
                "survived: no scenario of the profile executes these lines"),
            row("impl/m.py:4:8:core/ReplaceX:0", 4, "survived", "-r\n+s", "survived: 7 covering ...")]
    out, unread, how = answer_all(rows, answers, previous, tmp_path)
    assert out["impl/m.py:4:12:core/NumberReplacer:0"] == "open [own]: x's value is never read"
    assert "12 of 40 covering scenarios" in out["impl/m.py:4:15:core/AddNot:0"]
    assert "of C.shutdown (impl/m.py:3)" in out["impl/m.py:3:8:core/NumberReplacer:1"]
    assert unread == ["impl/m.py:4:8:core/ReplaceX:0"]
    assert "impl/m.py:9:1:core/AddNot:0" not in out  # killed now
    assert how == {"same key": 0, "carried by its diff": 1, "drafted": 2}

    # an uncovered survivor's answer once a scenario covers it: the run's state again
    answers = {"impl/m.py:3:8:core/NumberReplacer:1": out["impl/m.py:3:8:core/NumberReplacer:1"]}
    covered = [dict(rows[3], output="survived-shallow: 6 of 9 covering scenario(s) passed\npassed: a")]
    again, _, _ = answer_all(covered, answers, None, tmp_path)
    assert "a shallow survivor (6 of 9" in again["impl/m.py:3:8:core/NumberReplacer:1"]
    # a reading appended to the run's state is kept while the state holds, dropped when not
    read = again["impl/m.py:3:8:core/NumberReplacer:1"] + "; read 2026-11-27: [log-only: ...]"
    kept, _, _ = answer_all(covered, {"impl/m.py:3:8:core/NumberReplacer:1": read}, None,
                            tmp_path)
    assert kept["impl/m.py:3:8:core/NumberReplacer:1"] == read
    deeper = [dict(rows[3], output="survived-shallow: 7 of 9 covering scenario(s) passed")]
    moved_on, _, _ = answer_all(deeper, {"impl/m.py:3:8:core/NumberReplacer:1": read}, None,
                                tmp_path)
    assert moved_on["impl/m.py:3:8:core/NumberReplacer:1"].endswith(
        "a shallow survivor (7 of 9 covering scenarios passed in the first pass); "
        "`mutate run --deep` runs the rest")
    # a change two survivors share is carried to neither
    twin = dict(rows[0], key="impl/m.py:9:12:core/NumberReplacer:0", line=9)
    shared, unread, _ = answer_all([rows[0], twin], {"impl/m.py:3:12:core/NumberReplacer:0":
                                                     "open [own]: x's value is never read"}, previous, tmp_path)
    assert shared == {} and sorted(unread) == sorted([rows[0]["key"], twin["key"]])


def test_a_run_refuses_a_session_started_on_another_tree_and_report_copies_inits_record(
        cosmic_ray_path, tmp_path, monkeypatch):
    """The provenance is init's (what the session's mutants and scenarios
    come from), never the checkout's at report time: ``run`` refuses once
    impl/ or the map moved on; a session without the record is refused."""
    from conformance.mutation import cli, resume

    db = tmp_path / "session-quick.sqlite"
    monkeypatch.setattr(resume, "provenance", lambda coverage: {
        "impl_tree": "t1", "mutant_sources_sha256": "o1", "coverage_sha256": "c1",
        "suite_commit": "0123456789abcdef"})
    with pytest.raises(SystemExit, match="provenance.json is missing"):
        cli.refuse_another_tree(db, tmp_path / "coverage-quick.json")
    assert resume.record(db, tmp_path / "coverage-quick.json")["impl_tree"] == "t1"
    assert resume.recorded(db)["suite_commit"] == "0123456789abcdef"
    cli.refuse_another_tree(db, tmp_path / "coverage-quick.json")  # the same tree: runs
    monkeypatch.setattr(resume, "provenance", lambda coverage: {
        "impl_tree": "t2", "mutant_sources_sha256": "o1", "coverage_sha256": "c1",
        "suite_commit": "fedcba9876543210"})
    with pytest.raises(SystemExit, match=r"impl/ changed since the session .* \(at 0123456789ab\)"):
        cli.refuse_another_tree(db, tmp_path / "coverage-quick.json")


def test_a_committed_result_of_another_occurrence_is_not_taken(cosmic_ray_path, tmp_path):
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import MutationSpec, WorkItem

    from conformance.mutation.resume import take_committed

    with use_db(str(tmp_path / "s.sqlite")) as db:
        db.add_work_item(WorkItem.single("a", MutationSpec("impl/m.py", "core/AddNot", 1, (2, 4), (2, 9))))
    same = {"impl_tree": "t", "mutant_sources_sha256": "o", "coverage_sha256": "c", "suite_commit": "x" * 12}
    row = {"key": "impl/m.py:2:4:core/AddNot:0", "outcome": "killed", "diff": "", "output": "killed by a",
           "occurrence": 0, "end_line": 2}
    assert take_committed(tmp_path / "s.sqlite", [row], same, same)[0] == 0
    assert take_committed(tmp_path / "s.sqlite", [dict(row, occurrence=1)], same, same)[0] == 1


def test_a_map_that_only_gained_scenarios_keeps_kills_and_sends_survivors_deeper(
        cosmic_ray_path, tmp_path, monkeypatch):
    """A scenario added to the catalog (coverage --merge) changes the map
    but not what the old scenarios did: kills whose killer is still there
    are taken, a survivor covered by a new scenario becomes a first-pass
    survivor that passed the old ones (``--deep`` runs the new one), one no
    new scenario covers stays a survivor. Anything else changed: none."""
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import MutationSpec, WorkItem

    from conformance.mutation import distributor, report
    from conformance.mutation.resume import take_committed

    old_a, old_b, new = ("exhaustion/multinode/user/async", "early_break/local/user/async-after-0",
                         "order/multinode/user/collector>buffer>evaluator>ray")
    coverage = {"baseline": {sid: {"verdict": "pass", "duration": 1.0, "fixture": sid.split("/")[1]}
                             for sid in (old_a, old_b, new)},
                "lines": {"impl/m.py": {"2": [old_a, new], "5": [old_a, old_b], "7": [old_b]}}}
    monkeypatch.setattr(distributor, "statement_line", lambda source, position: position[0])
    db = tmp_path / "s.sqlite"
    with use_db(str(db)) as work_db:
        for job, line in (("a", 2), ("b", 5), ("c", 7)):
            work_db.add_work_item(WorkItem.single(job, MutationSpec("impl/m.py", "core/AddNot", 0,
                                                                    (line, 4), (line, 9))))
    (tmp_path / "impl").mkdir()
    monkeypatch.setattr("conformance.mutation.resume.REPO_ROOT", tmp_path)
    (tmp_path / "impl" / "m.py").write_text("x\n" * 9)

    def committed(line, outcome, output):
        return {"key": f"impl/m.py:{line}:4:core/AddNot:0", "outcome": outcome, "diff": "-x\n+not x",
                "output": output, "occurrence": 0, "end_line": line}
    rows = [committed(2, "survived", "survived: 1 covering scenario(s) passed"),
            committed(5, "survived", "survived: 2 covering scenario(s) passed"),
            committed(7, "killed", f"killed by {old_b} (fail no_leak; scenario 1 of 1)")]
    then = {"impl_tree": "t", "mutant_sources_sha256": "o", "coverage_sha256": "c1",
            "coverage_scenarios": {old_a: "pa", old_b: "pb"}, "suite_commit": "0123456789abcdef"}
    now = dict(then, coverage_sha256="c2", coverage_scenarios={old_a: "pa", old_b: "pb", new: "pn"})
    taken, message = take_committed(db, rows, then, now, Selection(coverage, "quick"))
    assert taken == 3 and "gained 1 scenario(s): 1 survivor(s)" in message
    out = {r["line"]: r for r in report.load_session(db)}
    assert out[2]["output"].startswith("survived-shallow: 1 of 2 covering scenario(s) passed")
    assert out[2]["output"].splitlines()[1] == f"passed: {old_a}"
    assert out[5]["output"] == "survived: 2 covering scenario(s) passed"
    assert out[7]["outcome"] == "killed"

    selection = Selection(coverage, "quick")
    for other in ({old_a: "pa", new: "pn"},                # old_b left the map
                  {old_a: "pa", old_b: "pb2", new: "pn"},  # old_b measured again: other lines
                  {old_a: "pa", old_b: "pb2"}):            # the same ids, old_b's lines changed
        taken, message = take_committed(new_db(tmp_path), rows, then,
                                        dict(now, coverage_scenarios=other), selection)
        assert taken == 0 and "other than by added scenarios" in message, other
        (tmp_path / "other.sqlite").unlink()


def new_db(tmp_path):
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import MutationSpec, WorkItem

    path = tmp_path / "other.sqlite"
    with use_db(str(path)) as work_db:
        work_db.add_work_item(WorkItem.single("a", MutationSpec("impl/m.py", "core/AddNot", 0, (2, 4), (2, 9))))
    return path


def test_deep_keeps_what_shallow_survivors_passed_until_their_deeper_result_is_in(
        cosmic_ray_path, tmp_path):
    """``--deep`` makes this shard's shallow survivors pending again; what
    they passed is kept beside the session, so a stopped run or another
    shard goes on without their first scenarios; a kill is kept for the order."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import MutationSpec, WorkItem, WorkResult

    from conformance.mutation import report
    from conformance.mutation.cli import kills_and_passed
    from conformance.mutation.shards import in_shard

    db = tmp_path / "session-quick.sqlite"
    jobs = [f"job{k}" for k in range(8)]
    with use_db(str(db)) as work_db:
        for k, job in enumerate(jobs):
            work_db.add_work_item(WorkItem.single(job, MutationSpec("impl/m.py", "core/AddNot", 0,
                                                                    (k + 1, 0), (k + 1, 3))))
            output = (f"killed by s{k} (fail x; scenario 1 of 3)" if k == 0 else
                      f"survived-shallow: 2 of 9 covering scenario(s) passed\npassed: a{k} b{k}")
            work_db.set_result(job, WorkResult(worker_outcome="normal", output=output, diff=f"diff {k}",
                                               test_outcome="killed" if k == 0 else "survived"))
    mine = [j for j in jobs[1:] if in_shard(j, "1/2")]
    assert mine and len(mine) < 7
    before = {r["line"]: r for r in report.load_session(db)}
    kills, passed = kills_and_passed(db, "1/2", deep=True)
    assert kills == [("impl/m.py", 1, "s0")]
    assert set(passed) == set(mine) and passed[mine[0]] == [f"a{jobs.index(mine[0])}", f"b{jobs.index(mine[0])}"]
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        assert {i.job_id for i in work_db.pending_work_items} == set(mine)  # only this shard's
    # pending for cosmic-ray, still the shallow survivors they are for the report (a
    # stopped --deep leaves a score): their first-pass output and diff kept
    assert report.load_session(db) == list(before.values())
    # stopped before any ran: the next run still knows what they passed
    assert kills_and_passed(db, "1/2", deep=True)[1] == passed
    with use_db(str(db), WorkDB.Mode.open) as work_db:  # one's deeper result comes in
        work_db.set_result(mine[0], WorkResult(worker_outcome="normal", output="survived: 9 ...",
                                               test_outcome="survived"))
    assert set(kills_and_passed(db, "1/2", deep=True)[1]) == set(mine[1:])
    assert {r["line"]: r["outcome"] for r in report.load_session(db)} == {
        k + 1: "killed" if k == 0 else "survived" for k in range(8)}


def test_a_survivor_sent_deeper_without_a_record_is_pending(cosmic_ray_path, tmp_path):
    """Only its record (what it passed, its first-pass output and diff) keeps
    a deepened survivor in the score; without one it is pending, not judged."""
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import MutationSpec, WorkItem

    from conformance.mutation import deepening, report

    db = tmp_path / "session-quick.sqlite"
    with use_db(str(db)) as work_db:
        work_db.add_work_item(WorkItem.single("j", MutationSpec("impl/m.py", "core/AddNot", 0, (3, 0), (3, 3))))
    output = "survived-shallow: 2 of 9 covering scenario(s) passed\npassed: a b"
    deepening.save(db, {"j": {"passed": ["a", "b"], "output": output, "diff": "-x\n+not x"}})
    (row,) = report.load_session(db)
    assert (row["outcome"], row["output"], row["diff"]) == ("survived", output, "-x\n+not x")
    assert deepening.passed_of(deepening.load(db)) == {"j": ["a", "b"]}
    deepening.path_of(db).unlink()
    assert report.load_session(db)[0]["outcome"] == "pending"


def test_deep_with_a_scenario_pattern_sends_deeper_only_the_survivors_it_has_new_scenarios_for(
        cosmic_ray_path, tmp_path, monkeypatch):
    """``run --deep --scenario GLOB`` (say the family the catalog just
    gained): a shallow survivor goes deeper only when every covering
    scenario it has not run matches; the others keep their first-pass
    result, not pending."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import MutationSpec, WorkItem, WorkResult

    from conformance.mutation import cli, distributor

    old, new = "exhaustion/multinode/user/async", "weights/multinode/user/forms-and-workers"
    coverage = tmp_path / "coverage-quick.json"
    coverage.write_text(json.dumps({
        "baseline": {sid: {"verdict": "pass", "duration": 1.0, "fixture": "multinode"} for sid in (old, new)},
        "lines": {"impl/m.py": {"2": [old, new], "5": [old], "7": [old, new]}}}))
    monkeypatch.setattr(distributor, "statement_line", lambda source, position: position[0])
    monkeypatch.setattr(distributor.catalog, "scenarios", lambda fixtures, profile: [
        type("S", (), {"id": sid}) for sid in (old, new)])
    (tmp_path / "impl").mkdir()
    (tmp_path / "impl" / "m.py").write_text("x\n" * 9)
    monkeypatch.setattr(cli, "REPO_ROOT", tmp_path)
    db = tmp_path / "session-quick.sqlite"
    with use_db(str(db)) as work_db:
        for job, line, passed in (("on-new", 2, old), ("old-only", 5, ""), ("both-left", 7, "")):
            work_db.add_work_item(WorkItem.single(job, MutationSpec("impl/m.py", "core/AddNot", 0,
                                                                    (line, 0), (line, 3))))
            work_db.set_result(job, WorkResult(
                worker_outcome="normal", test_outcome="survived",
                output=f"survived-shallow: 1 of 2 covering scenario(s) passed\npassed: {passed}"))
    wanted = cli._deeper_only(["weights/*"], None, coverage, "quick")
    _, passed = cli.kills_and_passed(db, None, deep=True, deeper_only=wanted)
    assert passed == {"on-new": [old]}
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        assert [i.job_id for i in work_db.pending_work_items] == ["on-new"]
        left = {job: r.output for job, r in work_db.results}
    assert left["old-only"].startswith("survived-shallow: ")  # as it was
    assert left["both-left"].startswith("survived-shallow: ")  # an old scenario left: for --deep
    assert cli._deeper_only(["order/*"], None, coverage, "quick")(
        type("I", (), {"mutations": [MutationSpec("impl/m.py", "core/AddNot", 0, (2, 0), (2, 3))]}),
        [old]) is False
    # --max-left 1: only a survivor with at most one covering scenario left
    at_most_one = cli._deeper_only(None, 1, coverage, "quick")
    item = lambda line: type("I", (), {"mutations": [MutationSpec("impl/m.py", "core/AddNot", 0,  # noqa: E731
                                                                   (line, 0), (line, 3))]})
    assert [at_most_one(item(2), [old]), at_most_one(item(5), []), at_most_one(item(7), [])] == \
        [True, True, False]
    assert at_most_one(item(2), [old, new]) is False  # nothing left to run
    assert cli._deeper_only(["weights/*"], 1, coverage, "quick")(item(5), []) is False
    assert cli._deeper_only(None, None, coverage, "quick") is None


def test_an_unanswered_git_status_is_never_taken_for_a_pristine_impl(tmp_path, monkeypatch):
    """Outside a checkout `git status` fails: that is no proof impl/ is as
    committed. Only a copy whose script checked its source says so
    (RLC_MUTATION_COPY=1)."""
    from conformance.mutation import cli

    (tmp_path / "impl").mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # no enclosing repo
    monkeypatch.setattr(cli, "REPO_ROOT", tmp_path)
    monkeypatch.delenv("RLC_MUTATION_COPY", raising=False)
    with pytest.raises(SystemExit, match="cannot tell whether impl/ is as committed"):
        cli.check_pristine()
    monkeypatch.setenv("RLC_MUTATION_COPY", "1")
    cli.check_pristine()  # the copy's word is taken


@pytest.mark.parametrize("argv, says", [
    (["run", "--deep", "--scenario", "weights/*", "--budget", "3"], "--budget would not cut it"),
    (["run", "--deep", "--scenario", "Weights/*"], "--scenario Weights/*: no scenario of the quick"),
    (["run", "--scenario", "weights/*"], "use it with --deep"),
    (["run", "--deep", "--scenario", "weights/*"], "error: no session"),  # accepted: goes on
], ids=["with-budget", "matches-nothing", "without-deep", "accepted"])
def test_run_refuses_a_scenario_glob_that_would_do_other_than_it_says(argv, says, monkeypatch,
                                                                     cosmic_ray_path):
    from conformance.mutation.cli import main

    monkeypatch.setattr(os, "environ", dict(os.environ))  # main() sets Ray's variables
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--session", "/nonexistent/session.sqlite"])
    assert says in str(stop.value.code)


def test_the_first_stop_of_a_sample_interrupts_it_and_a_second_is_ignored():
    """mutate sample's handler: the first SIGINT or SIGTERM raises as Ctrl-C
    does; after it both are ignored, so a stop passed on twice cannot cut the
    cleanup (the mutant restored, the clusters stopped) short."""
    import signal

    from conformance.mutation import cli

    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a script's background job gets it
        cli.install_stop_handlers()
        assert signal.getsignal(signal.SIGINT) is cli._stop_once
        assert signal.getsignal(signal.SIGTERM) is cli._stop_once
        with pytest.raises(KeyboardInterrupt, match="signal 2"):
            cli._stop_once(signal.SIGINT, None)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def test_a_result_run_twice_is_a_kill_only_when_both_runs_were_judged():
    """An error in either run (error then fail, fail then error) is unknown;
    two failures give the second's verdict and oracles; a second pass is a pass."""
    from conformance.mutation.runner import Outcome, confirmed_outcome

    def twice(first, second):
        runs = [(first, ["teardown_within_bound"] if first == "fail" else []),
                (second, ["no_hang"] if second in ("fail", "hang") else [])]
        out = confirmed_outcome(Outcome("s", first, runs[0][1], 1.0, runs=runs))
        return out.verdict, out.oracles, out.killed

    assert twice("error", "fail") == ("error", [], False)
    assert twice("fail", "error") == ("error", [], False)
    assert twice("error", "error") == ("error", [], False)
    assert twice("fail", "hang") == ("hang", ["no_hang"], True)
    assert twice("hang", "pass") == ("pass", [], False)


def test_a_harness_error_never_keeps_a_sampled_kill():
    from conformance.mutation.cli import sample_verdict
    from conformance.mutation.runner import Outcome

    def judged(verdict):
        return sample_verdict(Outcome("s", verdict, [], 1.0))

    assert judged("pass") == "SURVIVED"
    assert judged("error") == "UNKNOWN"  # the harness could not observe: no kill
    assert [judged(v) for v in ("fail", "hang", "crash", "setup-error")] == ["killed"] * 4


def test_an_uncovered_survivor_is_placed_in_the_code_the_results_measured(tmp_path):
    """A survivor's line is of the impl/ tree its results name (score.json's
    provenance), not of today's impl/, where another function may sit there."""
    import json
    import subprocess

    from conformance.mutation.answers import function_at, measured_source

    def git(*args):
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True,
                              text=True).stdout.strip()

    (tmp_path / "impl").mkdir()
    module = tmp_path / "impl" / "m.py"
    module.write_text("def close():\n    return 1\n")
    git("init", "-q")
    git("add", "impl")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "then")
    tree = git("rev-parse", "HEAD:impl")
    module.write_text("def __repr__():\n    return 'x'\n")  # today's line 2 is another function's
    measured_source.cache_clear()
    assert function_at("impl/m.py", 2, tmp_path) == "__repr__"  # no provenance: today's file
    results = tmp_path / "ci" / "results" / "mutation"
    results.mkdir(parents=True)
    (results / "score.json").write_text(json.dumps({"quick": {"provenance": {"impl_tree": tree}}}))
    measured_source.cache_clear()
    assert function_at("impl/m.py", 2, tmp_path) == "close"
    measured_source.cache_clear()


def test_a_checked_mutant_is_killed_only_when_every_run_failed_it():
    """``mutate check``: a pass in any run is a survival, a harness error in
    one (none passing) is unknown, and the answer line quotes every run."""
    from conformance.mutation.check import _verdict, answer_line
    from conformance.mutation.runner import Outcome

    def runs(*verdicts):
        return [Outcome("s", v, ["data_kept"] if v == "fail" else [], 1.0) for v in verdicts]

    assert _verdict(runs("fail", "hang")) == "killed"
    assert _verdict(runs("fail", "pass")) == "SURVIVED"
    assert _verdict(runs("fail", "error")) == "UNKNOWN"
    assert answer_line("impl/x.py:1:2:core/AddNot:0", "family/local/user/v", " (now occurrence 3)",
                       runs("fail", "fail"), "2026-11-28 02:40-02:41 UTC") == (
        "impl/x.py:1:2:core/AddNot:0  killed since by scenario family/local/user/v: the mutant "
        "applied to today's impl/ (now occurrence 3) and the scenario run 2 times with `mutate "
        "check` (2026-11-28 02:40-02:41 UTC): fail [data_kept], fail [data_kept]; the reference "
        "passes")


def test_a_kill_measured_in_another_release_is_recorded_open_naming_that_ray():
    """``mutate check`` run by a release environment's python (``conformance
    venv``): the answer line names that Ray and environment and stays open (the
    profile's score counts only kills on the suite's own Ray); on the Ray the
    main lock pins, nothing is added."""
    from conformance.mutation.check import answer_line, release_environment
    from conformance.mutation.report import answer_killer
    from conformance.mutation.runner import Outcome

    lock = "pytest==9.0.1\nray==2.60.0\n"
    assert release_environment(lock, "2.60.0", "/work/main/.venv") == ""
    assert release_environment("ray[default]==2.60.0\n", "2.60.0", "/x/.venv") == ""
    suffix = release_environment(lock, "2.50.1", "/root/.cache/rlc-venvs/torchrl-0.10.1_ray-2.50.1")
    assert suffix == " on Ray 2.50.1 (the release environment torchrl-0.10.1_ray-2.50.1)"
    crash = [Outcome("s", "crash", ["no_crash"], 1.0)] * 2
    line = answer_line("impl/x.py:1:2:core/AddNot:0", "restart/multinode/user/v", "", crash,
                       "2026-11-29 06:43-06:43 UTC", release_suffix=suffix)
    assert line == (
        "impl/x.py:1:2:core/AddNot:0  open [release matrix]: killed by scenario "
        "restart/multinode/user/v on Ray 2.50.1 (the release environment "
        "torchrl-0.10.1_ray-2.50.1): the mutant applied to today's impl/ and the scenario run 2 "
        "times with `mutate check` (2026-11-29 06:43-06:43 UTC): crash [no_crash], crash "
        "[no_crash]; the reference passes; not counted: the profile's score is the suite's on "
        "its own Ray")
    assert answer_killer(line.split("  ", 1)[1]) is None  # counted open


def test_a_checked_mutants_covering_scenarios_are_the_ones_mutate_run_would_take(
        cosmic_ray_path, tmp_path):
    """``mutate check --covering``: the map's scenarios that pass on the
    reference, multinode first, then the shortest (``Selection.order``),
    none it was told to skip (``--untried``: what the survivor passed)."""
    from conformance.mutation.check import _changed_line, covering
    from conformance.mutation.distributor import passed_of

    a, b, c, d = (f"exhaustion/{f}/user/{n}" for f, n in
                  (("multinode", "a"), ("multinode", "b"), ("multinode", "c"), ("local", "d")))
    cov = {"baseline": {a: {"verdict": "pass", "duration": 9.0, "fixture": "multinode"},
                        b: {"verdict": "fail", "duration": 1.0, "fixture": "multinode"},
                        c: {"verdict": "pass", "duration": 2.0, "fixture": "multinode"},
                        d: {"verdict": "pass", "duration": 0.5, "fixture": "local"}},
           "lines": {"impl/x.py": {"3": [a, b, c, d]}}}
    selection = Selection(cov, None, root=tmp_path)
    source = "x = 1\ny = 2\nz = 3\n"  # no impl/x.py under tmp_path: the line stands for itself
    assert covering(selection, "impl/x.py", 3, source, 5) == [c, a, d]  # b fails on the reference
    assert covering(selection, "impl/x.py", 3, source, 1) == [c]
    assert covering(selection, "impl/x.py", 3, source, 5, frozenset({c})) == [a, d]
    assert covering(selection, "impl/x.py", 2, source, 5) == []
    assert covering(selection, "impl/x.py", None, source, 5) == []
    assert passed_of(f"survived-shallow: 2 of 9 covering scenario(s) passed\npassed: {a} {c}") \
        == {a, c}
    assert passed_of("survived: 9 covering scenario(s) passed") == set()
    assert passed_of("survived-shallow: 0 of 24 covering scenario(s) passed; a race") == set()
    module = tmp_path / "x.py"
    module.write_text("a\nb\nc-mutated\n")
    assert _changed_line(str(module), "a\nb\nc\n") == 3


def test_a_coverage_file_a_killed_process_left_unreadable_is_left_out_and_said(cosmic_ray_path,
                                                                               tmp_path):
    """One process's unreadable data file must not cost the whole map."""
    import sqlite3

    from coverage import CoverageData

    from conformance.mutation.coverage_map import attribute

    path = tmp_path / ".coverage.worker.7"  # coverage.py's tables, no schema row: as seen
    data = CoverageData(str(path))
    data.add_lines({str(REPO_ROOT / "impl" / "calls.py"): [1]})
    data.write()
    with sqlite3.connect(path) as db:
        db.execute("delete from coverage_schema")
    said = []
    assert attribute(str(tmp_path), {}, said.append) == {}
    assert len(said) == 1 and said[0].startswith("left out: .coverage.worker.7, unreadable")


def test_a_changed_impl_carries_each_committed_result_that_still_holds(
        cosmic_ray_path, tmp_path, monkeypatch):
    """``mutate init --carry``: a mutant of today's tree that makes the change
    a committed one made (moved two lines down by an edit above it) gets its
    result while it holds: a kill whose killer still runs its lines; a
    survivor no more scenarios reach than it passed. A kill whose killer no
    longer runs the lines, a survivor a new scenario reaches, a harness
    failure and a change no committed mutant made are pending."""
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import MutationSpec, WorkItem

    from conformance.mutation import carry, distributor, report

    kept, gone, new = ("exhaustion/multinode/user/async", "early_break/local/user/async-after-0",
                       "order/multinode/user/collector>buffer>evaluator>ray")
    base = {sid: {"verdict": "pass", "duration": 1.0, "fixture": "multinode"}
            for sid in (kept, gone, new)}
    # today: kept runs lines 3-4; gone runs no line any more; new reaches line 5
    coverage = {"baseline": base, "lines": {"impl/m.py": {"3": [kept], "4": [kept],
                                                          "5": [kept, new], "6": [kept]}}}
    monkeypatch.setattr(distributor, "statement_line", lambda source, position: position[0])
    (tmp_path / "impl").mkdir()
    (tmp_path / "impl" / "m.py").write_text("x\n" * 9)
    monkeypatch.chdir(tmp_path)
    changes = {n: f"-    v{n} = 1\n+    v{n} = 2" for n in range(5)}

    def diff(n, line):
        return f"--- a/impl/m.py\n+++ b/impl/m.py\n@@ -{line},1 +{line},1 @@\n{changes[n]}"
    monkeypatch.setattr(carry, "mutant_diff",
                        lambda module, op, occurrence, args=None: diff(occurrence, occurrence + 3))
    db = tmp_path / "s.sqlite"
    with use_db(str(db)) as work_db:
        for n in range(5):
            work_db.add_work_item(WorkItem.single(f"j{n}", MutationSpec(
                "impl/m.py", "core/NumberReplacer", n, (n + 3, 8), (n + 3, 9))))

    def committed(n, outcome, output):  # the same change, two lines up, in the old tree
        return {"key": f"impl/m.py:{n + 1}:8:core/NumberReplacer:0", "module": "impl/m.py",
                "operator": "core/NumberReplacer", "occurrence": n, "outcome": outcome,
                "output": output, "diff": diff(n, n + 1)}
    rows = [committed(0, "killed", f"killed by {kept} (fail no_leak; scenario 1 of 2)"),
            committed(1, "killed", f"killed by {gone} (fail no_leak; scenario 1 of 1)"),
            committed(2, "survived", "survived: 1 covering scenario(s) passed"),
            committed(3, "survived", "survived: 1 covering scenario(s) passed"),
            committed(4, "exception", "a harness failure")]
    rows[3]["diff"] = diff(3, 4)  # line 6 today: one scenario, as before
    counts = carry.carry(db, rows, Selection(coverage, "quick"))
    assert counts == {"carried": 2, "rerun": 2, "new": 1}
    out = {r["line"]: r for r in report.load_session(db)}
    assert out[3]["outcome"] == "killed" and out[3]["killer"] == kept
    assert out[3]["diff"] == diff(0, 3)  # today's diff, at today's line
    assert out[4]["outcome"] == "pending"  # its killer no longer runs line 4... nor any
    assert out[5]["outcome"] == "pending"  # a survivor two scenarios reach now
    assert out[6]["outcome"] == "survived"
    assert out[7]["outcome"] == "pending"  # the harness failure is not carried


def test_a_mutants_diff_is_computed_without_writing_the_module(cosmic_ray_path, tmp_path):
    from conformance.mutation.carry import mutant_diff

    module = tmp_path / "m.py"
    module.write_text("def f():\n    return 1\n")
    diff = mutant_diff(str(module), "core/NumberReplacer", 0)
    assert "-    return 1\n+    return 2" in diff
    assert module.read_text() == "def f():\n    return 1\n"
    assert mutant_diff(str(module), "core/NumberReplacer", 5) is None


def test_the_full_session_runs_again_only_the_open_survivors_of_quick(
        cosmic_ray_path, tmp_path, monkeypatch):
    """``mutate init --profile full``: quick's kills stay killed, and so do
    its survivors answered "killed since by scenario X" (a quick scenario is
    a full one) or "equivalent because ..." (in any profile); only the open
    ones, and the unanswered, are pending for the full-only scenarios."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import MutationSpec, WorkItem, WorkResult

    from conformance.mutation import cli

    quick, results = tmp_path / "session-quick.sqlite", tmp_path / "results"
    results.mkdir()
    outcomes = {1: "killed", 2: "survived", 3: "survived", 4: "survived", 5: "survived"}
    with use_db(str(quick)) as work_db:
        for line, outcome in outcomes.items():
            work_db.add_work_item(WorkItem.single(f"job{line}", MutationSpec(
                "impl/m.py", "core/AddNot", 0, (line, 0), (line, 3))))
            work_db.set_result(f"job{line}", WorkResult(worker_outcome="normal", output="x",
                                                        diff="d", test_outcome=outcome))
    (results / "answers.txt").write_text(
        "impl/m.py:2:0:core/AddNot:0  killed since by scenario order/multinode/user/a: ...\n"
        "impl/m.py:3:0:core/AddNot:0  equivalent because a list of one handle\n"
        "impl/m.py:4:0:core/AddNot:0  open [mut]: a race\n")
    monkeypatch.setattr(cli, "RESULTS", results)
    monkeypatch.setattr(cli, "session_path", lambda profile: tmp_path / f"session-{profile}.sqlite")
    assert cli.init_full(tmp_path / "session-full.sqlite") == 0
    with use_db(str(tmp_path / "session-full.sqlite"), WorkDB.Mode.open) as work_db:
        assert {i.job_id for i in work_db.pending_work_items} == {"job4", "job5"}
    with use_db(str(quick), WorkDB.Mode.open) as work_db:  # quick's own session untouched
        assert not list(work_db.pending_work_items)


def test_a_session_that_took_committed_results_says_where_they_come_from(tmp_path, monkeypatch):
    """A fresh clone's ``mutate init`` records the suite commit the results
    it took were measured at, and how they were carried, beside its own."""
    from conformance.mutation import cli, resume

    db = tmp_path / "session-quick.sqlite"
    monkeypatch.setattr(resume, "provenance", lambda coverage: {"impl_tree": "t1", "suite_commit": "now"})
    resume.record(db, tmp_path / "coverage-quick.json")
    then = {"impl_tree": "t1", "suite_commit": "then", "carried": {"carried": 590, "new": 60}}
    cli.note_taken(db, 757, then)
    assert resume.recorded(db) == {"impl_tree": "t1", "suite_commit": "now", "taken": {
        "results": 757, "measured_at": "then", "carried": {"carried": 590, "new": 60}}}


def test_a_map_moved_to_changed_code_keeps_the_unchanged_lines_and_drops_the_changed():
    from conformance.mutation.coverage_map import moved

    old = "a = 1\nb = 2\nc = 3\nd = 4\n"
    new = "a = 1\nx = 0\ny = 0\nb = 2\nC = 3\nd = 4\n"  # two lines inserted, one changed
    lines = {"impl/m.py": {"1": ["s1"], "2": ["s2"], "3": ["s3"], "4": ["s1", "s4"]},
             "impl/gone.py": {"1": ["s1"]}}
    assert moved(lines, {"impl/m.py": old, "impl/gone.py": "z\n"}, {"impl/m.py": new}) == \
        {"impl/m.py": {"1": ["s1"], "4": ["s2"], "6": ["s1", "s4"]}}
    # the same text in another function is not the line that ran (a reviewer's case)
    f = "def f():\n    try:\n        x()\n    finally:\n        y()\n"
    g = "def g():\n    try:\n        z()\n    finally:\n        y()\n"
    assert moved({"impl/m.py": {"2": ["ran_f"], "4": ["ran_f"]}}, {"impl/m.py": f}, {"impl/m.py": g}) == {}
