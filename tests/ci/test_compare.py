"""`python -m conformance compare`: verdict drift against a committed report, the
torchrl slice file (ci/torchrl-slice.txt) and `pytest conformance --scenarios-from`.

The reports are a frozen copy of the torchrl 0.14.1 matrix (its run of
2026-11-24, ``tests/ci/data``: the ids and verdicts below are its) and
copies of it with verdicts changed; the slice file is checked against the
committed matrix itself. Nothing here starts Ray.
"""
import collections
import copy
import json
import os
import re
import subprocess
import sys

from conformance.reports import known_failures

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMITTED = os.path.join(REPO, "tests", "ci", "data", "torchrl-0.14.1_ray-2.60.0_2026-11-24.json")
#: what ci/torchrl-slice.sh compares against
MATRIX = os.path.join(REPO, "ci", "results", "torchrl", "torchrl-0.14.1_ray-2.60.0.json")
#: the CI slice (its own test below), and a copy of it for compare's
#: mechanics (the slice as of 2026-11-26 03:00: the tests name its scenarios)
LIVE_SLICE = os.path.join(REPO, "ci", "torchrl-slice.txt")
SLICE = os.path.join(REPO, "tests", "ci", "data", "torchrl-slice-2026-11-26.txt")
N = len(known_failures.load(SLICE))  # scenarios in the slice
SEED = "early_break/local/user/buffer-mode-after-2"
FAILING = "order/multinode/user/collector>ray>buffer>evaluator"  # fail [no_ray_restart]
HANGING = "killed/multinode/user/evaluator-hang>teardown"
DROPPED = "named/multinode/user/peer-then-owner"


def cli(*args):
    """`python -m conformance ARGS`; returns (exit code, stdout + stderr)."""
    proc = subprocess.run([sys.executable, "-m", "conformance", *map(str, args)], cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=120)
    return proc.returncode, proc.stdout


def committed() -> dict:
    with open(COMMITTED) as f:
        return json.load(f)


def write(tmp_path, doc, name="now.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def entry(doc, sid):
    return next(s for s in doc["scenarios"] if s["id"] == sid)


def cells(line: str) -> list[str]:
    """The cells of a table row (columns are 2+ spaces apart)."""
    return re.split(r"\s{2,}", line.strip())


def slice_of(doc: dict) -> dict:
    """The committed report cut down to the slice, as a run of the slice writes it."""
    listed = set(known_failures.load(SLICE))
    out = copy.deepcopy(doc)
    out["scenarios"] = [s for s in out["scenarios"] if s["id"] in listed]
    return out


def test_identical_report_is_green(tmp_path):
    now = write(tmp_path, slice_of(committed()))
    code, text = cli("compare", now, "--against", COMMITTED, "--scenarios-from", SLICE)
    assert code == 0, text
    listed = slice_of(committed())["scenarios"]
    counts = collections.Counter(s["verdict"] for s in listed)
    assert text.strip() == (f"compare: passed: {len(listed)} scenarios of torchrl have the "
                            f"verdicts of {COMMITTED} ({counts['fail']} fail, {counts['hang']} "
                            f"hang, {counts['pass']} pass)"), text
    # without a list: every scenario of the run, here the whole committed matrix
    code, text = cli("compare", COMMITTED, "--against", COMMITTED)
    assert code == 0 and f"compare: passed: {len(committed()['scenarios'])} scenarios" in text, text


def test_drift_is_red_with_the_diff(tmp_path):
    doc = slice_of(committed())
    seed = entry(doc, SEED)
    seed.update(verdict="fail", oracles=["no_ray_restart"])
    seed["evidence"]["violations"] = {"no_ray_restart": [
        "op 6 (teardown buffer) started a Ray runtime (127.0.0.1:1/session_x)"]}
    entry(doc, FAILING)["oracles"] = ["no_ray_restart", "teardown_never_raises"]
    entry(doc, HANGING).update(verdict="pass", oracles=[])
    doc["scenarios"].remove(entry(doc, DROPPED))
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--scenarios-from", SLICE)
    assert code == 1, text
    assert f"compare: 4 of {N} scenarios of torchrl drifted from" in text, text
    lines = text.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.split() == [
        "scenario", "committed", "now", "repro"])
    rows = [ln.split(None, 1)[0] for ln in lines[head + 2:head + 6]]
    assert rows == [SEED, FAILING, HANGING, DROPPED], lines[head:head + 7]  # slice order
    row = {cells(ln)[0]: cells(ln) for ln in lines[head + 2:head + 6]}
    assert row[SEED] == [SEED, "pass", "fail [no_ray_restart]", seed["repro"]], row[SEED]
    assert row[FAILING] == [
        FAILING, "fail [no_ray_restart]", "fail [no_ray_restart, teardown_never_raises]",
        f"python -m conformance repro '{FAILING}' --impl torchrl"], row[FAILING]
    assert row[HANGING][1:3] == ["hang", "pass"], row[HANGING]
    assert row[DROPPED] == [DROPPED, "fail [name_freed]", "- (not in the report)",
                            f"python -m conformance repro {DROPPED} --impl torchrl"]
    # what happened to a scenario that fails now, and how to rerun it
    assert f"now fail: {SEED} (was pass):" in text, text
    assert "op 6 (teardown buffer) started a Ray runtime" in text
    assert f"reproduce: {seed['repro']}" in text
    assert f"commands in {os.path.join(os.path.dirname(COMMITTED), 'README.md')}" in text
    assert lines[-1] == f"compare: FAILED: 4 of {N} scenarios drifted ({tmp_path / 'now.json'} " \
                        f"against {COMMITTED})", lines[-1]
    unchanged = "use_after_close/local/user/evaluator"
    assert unchanged not in text  # only the drift is listed


def test_a_hang_is_compared_by_verdict_a_fail_by_its_oracles_too(tmp_path):
    doc = slice_of(committed())
    entry(doc, HANGING)["oracles"] = ["no_hang", "no_leftover_process"]  # varies run to run
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--scenarios-from", SLICE)
    assert code == 0, text
    entry(doc, FAILING)["oracles"] = []  # the same verdict, other oracles: drift
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--scenarios-from", SLICE)
    assert code == 1, text
    row = next(cells(ln) for ln in text.splitlines() if ln.strip().startswith(FAILING))
    assert row[1:3] == ["fail [no_ray_restart]", "fail []"], row


def test_declared_varying_oracles_are_left_out_and_nothing_else(tmp_path):
    """``varies:ORACLE`` on a slice line: that oracle failing or not is no
    drift for that scenario; any other change still is, and so is the same
    change in a scenario that declares nothing."""
    listing = tmp_path / "slice.txt"
    listing.write_text(f"{FAILING}  varies:clean_stderr  # a race decides a traceback\n"
                       f"{SEED}  # the seed\n")
    doc = slice_of(committed())
    entry(doc, FAILING)["oracles"] = ["clean_stderr", "no_ray_restart"]
    rerun = write(tmp_path, committed(), "rerun.json")  # a rerun without clean_stderr
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--scenarios-from", listing, "--reruns", rerun)
    assert code == 0 and "compare: passed: 2 scenarios" in text, text
    entry(doc, FAILING)["oracles"] = ["clean_stderr"]  # no_ray_restart gone: drift
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--scenarios-from", listing)
    assert code == 1 and "compare: FAILED: 1 of 2 scenarios drifted" in text, text
    entry(doc, FAILING)["oracles"] = ["clean_stderr", "no_ray_restart"]
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--scenarios-from", SLICE)  # the slice declares nothing for it
    assert code == 1 and FAILING in text, text
    listing.write_text(f"{FAILING}  varies:clean_stder  # a typo\n")
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--scenarios-from", listing)
    assert code == 2 and "varies:clean_stder names no oracle" in text, text
    listing.write_text(f"{FAILING}  clean_stderr  # no marker\n")
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--scenarios-from", listing)
    assert code == 2 and "between an id and its '#' stand its expected outcome" in text, text


def test_a_varying_oracle_that_fails_in_every_run_is_a_drift(tmp_path):
    """``varies:`` is bounded: the oracle must be seen not failing in a rerun.
    Failing in every one of varies.RUNS runs it no longer varies (a drift);
    with fewer runs, all failing, the scenario is undecided (red, and
    ``--pending`` lists it to rerun); a rerun that crashed does not count."""
    from conformance.reports.varies import RUNS

    listing = tmp_path / "slice.txt"
    listing.write_text(f"{FAILING}  varies:clean_stderr  # a race decides a traceback\n"
                       f"{SEED}  # the seed\n")
    doc = slice_of(committed())
    entry(doc, FAILING)["oracles"] = ["clean_stderr", "no_ray_restart"]
    now = write(tmp_path, doc)
    reruns = [write(tmp_path, doc, f"rerun-{k}.json") for k in range(RUNS - 1)]
    code, text = cli("compare", now, "--against", COMMITTED, "--scenarios-from", listing,
                     "--reruns", *reruns)
    assert code == 1 and "compare: FAILED: 1 of 2 scenarios drifted" in text, text
    row = next(cells(x) for x in text.splitlines() if x.strip().startswith(FAILING))
    assert row[1:3] == ["fail [no_ray_restart]", f"fail [clean_stderr, no_ray_restart] "
                                                  f"(clean_stderr failed in {RUNS} of {RUNS} runs, usually passing)"], row
    # fewer runs: undecided, listed to rerun
    code, text = cli("compare", now, "--against", COMMITTED, "--scenarios-from", listing,
                     "--reruns", *reruns[:1])
    assert code == 1 and "Undecided: a declared varying oracle missed its usual outcome in every run" in text
    code, text = cli("compare", now, "--against", COMMITTED, "--scenarios-from", listing,
                     "--reruns", *reruns[:1], "--pending")
    assert code == 0 and text.splitlines() == [
        f"{FAILING}  # rerun: clean_stderr failed in 2 of 2 runs, usually passing (varies:, "
        f"{RUNS} needed)"]
    assert list(known_failures.parse(text)) == [FAILING]  # a --scenarios-from file
    crashed = copy.deepcopy(doc)
    entry(crashed, FAILING).update(verdict="crash", oracles=["no_crash"])
    code, text = cli("compare", now, "--against", COMMITTED, "--scenarios-from", listing,
                     "--reruns", write(tmp_path, crashed, "crashed.json"), "--pending")
    assert "clean_stderr failed in 1 of 1 runs" in text, text
    # a rerun of another implementation is no rerun
    other = copy.deepcopy(doc)
    other["impl"] = "reference"
    code, text = cli("compare", now, "--against", COMMITTED, "--scenarios-from", listing,
                     "--reruns", write(tmp_path, other, "other.json"))
    assert code == 2 and "not of torchrl" in text, text


def test_a_varying_oracle_declared_usually_failing_is_bounded_by_failing(tmp_path):
    """``varies:ORACLE@K/N`` with K > N/2: the oracle usually fails (the
    rate measured). A run that fails it has the usual outcome, nothing to
    rerun; one that passes it must see it fail in a rerun, and passing in
    every one of varies.RUNS runs is a drift, whatever the committed run
    holds: the declaration names the usual outcome, not the committed report."""
    from conformance.reports.varies import RUNS

    listing = tmp_path / "slice.txt"
    listing.write_text(f"{FAILING}  varies:clean_stderr@4/5  # a race, mostly a traceback\n"
                       f"{SEED}  # the seed\n")
    failing = slice_of(committed())
    entry(failing, FAILING)["oracles"] = ["clean_stderr", "no_ray_restart"]
    passing = slice_of(committed())  # fail [no_ray_restart]: clean_stderr passed
    code, text = cli("compare", write(tmp_path, failing), "--against", COMMITTED,
                     "--scenarios-from", listing, "--pending")
    assert code == 0 and text == "", text  # the usual outcome: nothing to rerun
    code, text = cli("compare", write(tmp_path, failing), "--against", COMMITTED,
                     "--scenarios-from", listing)
    assert code == 0 and "compare: passed: 2 scenarios" in text, text
    now = write(tmp_path, passing)
    code, text = cli("compare", now, "--against", COMMITTED, "--scenarios-from", listing,
                     "--pending")
    assert code == 0 and text.splitlines() == [
        f"{FAILING}  # rerun: clean_stderr failed in 0 of 1 runs, usually failing (varies:, "
        f"{RUNS} needed)"], text
    code, text = cli("compare", now, "--against", COMMITTED, "--scenarios-from", listing,
                     "--reruns", write(tmp_path, failing, "rerun-failing.json"))
    assert code == 0 and "compare: passed: 2 scenarios" in text, text
    reruns = [write(tmp_path, passing, f"rerun-{k}.json") for k in range(RUNS - 1)]
    code, text = cli("compare", now, "--against", COMMITTED, "--scenarios-from", listing,
                     "--reruns", *reruns)
    assert code == 1 and "compare: FAILED: 1 of 2 scenarios drifted" in text, text
    assert f"clean_stderr failed in 0 of {RUNS} runs, usually failing" in text, text


def test_a_varying_rate_must_name_a_usual_outcome():
    """``@K/N``: 0 < K < N, and K = N/2 names no usual outcome."""
    for mark, rate in (("clean_stderr@1/5", (1, 5)), ("clean_stderr@4/5", (4, 5)),
                       ("clean_stderr@1/2", None), ("clean_stderr@0/3", None),
                       ("clean_stderr@3/3", None), ("clean_stderr@most", None)):
        text = f"{FAILING}  varies:{mark}  # a race\n"
        if rate:
            assert known_failures.varying(text)[FAILING] == {"clean_stderr": rate}
            continue
        try:
            known_failures.varying(text)
        except ValueError as exc:
            assert "write clean_stderr@K/N" in str(exc), exc
        else:
            raise AssertionError(f"varies:{mark} accepted")
    assert known_failures.varying(f"{FAILING}  varies:clean_stderr@1/5,no_hang  # r\n")[
        FAILING] == {"clean_stderr": (1, 5), "no_hang": None}
    for twice in ("varies:no_hang@4/5  varies:no_hang", "varies:no_hang@4/5,no_hang@1/5",
                  "varies:@4/5"):
        try:
            known_failures.varying(f"{FAILING}  {twice}  # r\n")
        except ValueError as exc:
            assert "declared twice" in str(exc) or "names an oracle" in str(exc), exc
        else:
            raise AssertionError(f"{twice} accepted")
    try:  # read where the line is read: a name that is no oracle is refused at once
        known_failures.varying(f"{FAILING}  varies:clean_stder  # a typo\n")
    except ValueError as exc:
        assert "varies:clean_stder names no oracle (valid: " in str(exc), exc
    else:
        raise AssertionError("varies:clean_stder accepted")


def test_races_declared_apart_apply_to_every_scenario_compared(tmp_path):
    """``--varies-from FILE``: declarations without narrowing the comparison
    (every scenario of the report is compared); one for a scenario not
    compared, or declared in the scenario list too, is refused."""
    races = tmp_path / "varies.txt"
    races.write_text(f"{FAILING}  varies:clean_stderr@1/8  # a race decides a traceback\n")
    doc = committed()
    entry(doc, FAILING)["oracles"] = ["clean_stderr", "no_ray_restart"]
    rerun = write(tmp_path, committed(), "rerun.json")  # clean_stderr passed there
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED)
    assert code == 1 and "compare: FAILED: 1 of" in text, text  # undeclared: a drift
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--varies-from", races, "--reruns", rerun)
    n = len(doc["scenarios"])
    assert code == 0 and f"compare: passed: {n} scenarios" in text, text
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--varies-from", races, "--pending")
    assert code == 0 and text.startswith(f"{FAILING}  # rerun: clean_stderr failed in 1 of 1"), text
    listing = tmp_path / "slice.txt"
    listing.write_text(f"{SEED}  # the seed\n")  # one races file for any narrowed list
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--scenarios-from", listing, "--varies-from", races)
    assert code == 0 and "compare: passed: 1 scenarios" in text, text
    stale = tmp_path / "stale.txt"
    stale.write_text("order/local/user/no-such-variant  varies:clean_stderr@1/8  # gone\n")
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--varies-from", stale)
    assert code == 2 and "races for scenarios the committed report does not have: " \
        "order/local/user/no-such-variant" in text, text
    listing.write_text(f"{FAILING}  varies:clean_stderr  # twice\n")
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--scenarios-from", listing, "--varies-from", races)
    assert code == 2 and "declared in the scenario list too" in text, text


def test_a_declared_verdict_race_is_bounded_by_its_usual_verdict(tmp_path):
    """``OUTCOME flaky:K/N`` in a race list: the scenario has OUTCOME in K of N
    runs and passes in the others; both sides' verdicts must be one of the
    two, and a run without the usual one (here: a pass, 3 of 7 crashing)
    must see it in a rerun, 5 runs without it being a drift."""
    from conformance.reports.varies import RUNS

    races = tmp_path / "varies.txt"
    races.write_text(f"{HANGING}  hang  flaky:3/7  # a race at the exit\n")
    base = committed()  # HANGING: hang in the committed run (the rarer outcome)
    passing = copy.deepcopy(base)
    entry(passing, HANGING).update(verdict="pass", oracles=[])
    code, text = cli("compare", write(tmp_path, passing), "--against", COMMITTED,
                     "--varies-from", races)
    assert code == 0 and "compare: passed" in text, text  # the usual outcome
    code, text = cli("compare", write(tmp_path, base, "hang.json"), "--against", COMMITTED,
                     "--varies-from", races, "--pending")
    assert text.splitlines() == [f"{HANGING}  # rerun: hang in 1 of 1 runs, usually pass "
                                 f"(varies:, {RUNS} needed)"], text
    code, text = cli("compare", write(tmp_path, base, "hang.json"), "--against", COMMITTED,
                     "--varies-from", races, "--reruns", write(tmp_path, passing, "r.json"))
    assert code == 0 and "compare: passed" in text, text
    reruns = [write(tmp_path, base, f"rerun-{k}.json") for k in range(RUNS - 1)]
    code, text = cli("compare", write(tmp_path, base, "hang.json"), "--against", COMMITTED,
                     "--varies-from", races, "--reruns", *reruns)
    assert code == 1 and f"hang in {RUNS} of {RUNS} runs, usually pass" in text, text
    crashed = copy.deepcopy(base)
    entry(crashed, HANGING).update(verdict="crash", oracles=["no_crash"])
    code, text = cli("compare", write(tmp_path, crashed, "crash.json"), "--against",
                     COMMITTED, "--varies-from", races)
    assert code == 1 and "compare: FAILED: 1 of" in text, text  # neither hang nor pass
    code, text = cli("compare", write(tmp_path, base, "hang.json"), "--against", COMMITTED,
                     "--varies-from", races, "--reruns", write(tmp_path, crashed, "c.json"),
                     write(tmp_path, passing, "p.json"))
    assert code == 1 and "compare: FAILED: 1 of" in text, text  # a rerun's crash too
    races.write_text(f"{HANGING}  hang  flaky:1/2  # half\n")
    code, text = cli("compare", write(tmp_path, passing), "--against", COMMITTED,
                     "--varies-from", races)
    assert code == 2 and "names no usual outcome" in text, text


def test_a_race_between_two_failures_allows_either_and_no_pass(tmp_path):
    """``crash  flaky:K/N  otherwise:fail[...]`` (torchrl's
    ray-shutdown-under-thread crashed in one CI run of 2026-11-27, failed in
    the others): FAILING (committed ``fail [no_ray_restart]``) may crash; a
    crash, the rarer outcome, waits for a rerun with the usual fail; a pass
    is neither outcome."""
    from conformance.reports.varies import RUNS

    races = tmp_path / "varies.txt"
    races.write_text(f"{FAILING}  crash  flaky:1/20  otherwise:fail[no_ray_restart]  # a race\n")
    base = committed()
    assert entry(base, FAILING)["verdict"] == "fail"
    code, text = cli("compare", write(tmp_path, base), "--against", COMMITTED,
                     "--varies-from", races)
    assert code == 0 and "compare: passed" in text, text  # the usual outcome
    crashed = copy.deepcopy(base)
    entry(crashed, FAILING).update(verdict="crash", oracles=["no_crash"])
    code, text = cli("compare", write(tmp_path, crashed, "crash.json"), "--against",
                     COMMITTED, "--varies-from", races, "--pending")
    assert text.splitlines() == [
        f"{FAILING}  # rerun: crash in 1 of 1 runs, usually fail [no_ray_restart] "
        f"(varies:, {RUNS} needed)"], text
    code, text = cli("compare", write(tmp_path, crashed, "crash.json"), "--against",
                     COMMITTED, "--varies-from", races, "--reruns", write(tmp_path, base, "r.json"))
    assert code == 0 and "compare: passed" in text, text
    reruns = [write(tmp_path, crashed, f"rerun-{k}.json") for k in range(RUNS - 1)]
    code, text = cli("compare", write(tmp_path, crashed, "crash.json"), "--against",
                     COMMITTED, "--varies-from", races, "--reruns", *reruns)
    assert code == 1 and f"crash in {RUNS} of {RUNS} runs, usually fail [no_ray_restart]" in text, text
    passing = copy.deepcopy(base)
    entry(passing, FAILING).update(verdict="pass", oracles=[])
    code, text = cli("compare", write(tmp_path, passing, "pass.json"), "--against", COMMITTED,
                     "--varies-from", races)
    assert code == 1 and "compare: FAILED: 1 of" in text, text  # neither crash nor the fail
    other = copy.deepcopy(base)
    entry(other, FAILING).update(oracles=["no_ray_restart", "no_leftover_actor"])
    code, text = cli("compare", write(tmp_path, other, "other.json"), "--against", COMMITTED,
                     "--varies-from", races)
    assert code == 1 and "compare: FAILED: 1 of" in text, text  # another fail
    races.write_text(f"{FAILING}  crash  flaky:1/20  otherwise:fail[no_ray_restrt]  # a typo\n")
    code, text = cli("compare", write(tmp_path, base), "--against", COMMITTED, "--varies-from", races)
    assert code == 2 and "no_ray_restrt: no such oracle" in text, text


def test_the_committed_races_file_reads_against_the_committed_matrix():
    """ci/results/torchrl/varies.txt: every line parses, names oracles that
    exist and scenarios of the committed matrix, with a rate. The matrix
    compared with itself under it drifts nowhere; where the committed run
    had a race's rarer outcome, the scenario is only undecided (to rerun)."""
    races = os.path.join(REPO, "ci", "results", "torchrl", "varies.txt")
    entries = list(known_failures.lines(open(races).read(), races))
    assert entries and all(e.flaky or (e.rates and None not in e.rates.values())
                           for e in entries), "a race without its measured rate"
    code, text = cli("compare", MATRIX, "--against", MATRIX, "--varies-from", races,
                     "--pending")
    assert code == 0, text
    undecided = set(known_failures.parse(text))
    # the committed run holds the rarer outcome of some races (measured: 7 of 10)
    assert undecided and undecided <= {e.id for e in entries}, text
    code, text = cli("compare", MATRIX, "--against", MATRIX, "--varies-from", races)
    drifted = [m.group(1) for m in re.finditer(r"^  (\S+/\S+/\S+/\S+)\s{2,}", text, re.M)]
    assert code == 1 and set(drifted) == undecided, text


def test_an_error_on_both_sides_is_a_drift(tmp_path):
    """A harness error in this run never matches, not even an error in the
    committed report: neither observed the scenario."""
    doc = committed()
    entry(doc, SEED).update(verdict="error", oracles=[])
    both = write(tmp_path, doc, "both.json")
    code, text = cli("compare", both, "--against", both)
    assert code == 1 and f"compare: FAILED: 1 of {len(doc['scenarios'])} scenarios drifted" \
        in text, text


def test_listed_scenario_missing_from_both_reports_is_red(tmp_path):
    listing = tmp_path / "slice.txt"
    listing.write_text(f"{SEED}  # the seed\nnamed/local/user/no-such-scenario  # a typo\n")
    code, text = cli("compare", write(tmp_path, slice_of(committed())), "--against", COMMITTED,
                     "--scenarios-from", listing)
    assert code == 1, text
    row = next(cells(ln) for ln in text.splitlines()
               if ln.strip().startswith("named/local/user/no-such-scenario"))
    assert row[1:3] == ["- (not in the report)", "- (not in the report)"], row
    assert "compare: FAILED: 1 of 2 scenarios drifted" in text, text


def test_other_versions_are_red(tmp_path):
    doc = slice_of(committed())
    doc["versions"]["ray"] = "2.61.0"
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED,
                     "--scenarios-from", SLICE)
    assert code == 1, text
    assert "compare: ray 2.61.0 in" in text and "2.60.0 in" in text, text
    assert f"compare: FAILED: 0 of {N} scenarios drifted, versions differ" in text, text
    doc["versions"]["python"] = "3.12.1"  # the interpreter may differ
    doc["versions"]["ray"] = "2.60.0"
    code, text = cli("compare", write(tmp_path, doc), "--against", COMMITTED)
    assert code == 0, text


def test_unusable_input_exits_2(tmp_path):
    code, text = cli("compare", tmp_path / "absent.json", "--against", COMMITTED)
    assert code == 2 and "compare: FAILED: no usable input" in text and "absent.json" in text
    bad = tmp_path / "slice.txt"
    bad.write_text(f"{SEED}\n")  # no '# why'
    code, text = cli("compare", COMMITTED, "--against", COMMITTED, "--scenarios-from", bad)
    assert code == 2 and "has no '# reason'" in text, text


def test_slice_file_covers_the_seed_and_every_verdict():
    listed = known_failures.load(LIVE_SLICE)
    assert 8 <= len(listed) <= 16 and SEED in listed
    with open(MATRIX) as f:
        verdicts = {s["id"]: s["verdict"] for s in json.load(f)["scenarios"]}
    assert set(listed) <= set(verdicts), sorted(set(listed) - set(verdicts))
    assert {verdicts[i] for i in listed} == {"pass", "fail", "hang"}
    assert {i.split("/")[1] for i in listed} == {"local", "multinode"}
    assert {i.split("/")[2] for i in listed} == {"user", "impl"}
    # a timing oracle would make the comparison flaky under load
    with open(MATRIX) as f:
        matrix = json.load(f)["scenarios"]
    assert not any("teardown_within_bound" in s["oracles"] for s in matrix if s["id"] in listed)


def collect(*args):
    """`pytest conformance --collect-only` (the reference: no torchrl needed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RLC_", "PYTEST_"))}
    proc = subprocess.run([sys.executable, "-m", "pytest", "conformance", "--collect-only",
                           "-q", "-p", "no:cacheprovider", *map(str, args)], cwd=REPO, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=120)
    return proc.returncode, proc.stdout


def test_pytest_runs_exactly_the_listed_scenarios(tmp_path):
    listing = tmp_path / "slice.txt"
    listing.write_text(f"# two of them\n{SEED}  # the seed\n{FAILING}  # cause 1\n")
    code, text = collect("--scenarios-from", listing)
    assert code == 0, text
    ids = sorted(ln.split("[", 1)[1].rsplit("]", 1)[0] for ln in text.splitlines()
                 if "test_scenario[" in ln)
    assert ids == sorted([SEED, FAILING]), text
    code, text = collect("--scenarios-from", listing, "--scenario", "exit/multinode/user/*")
    ids = {ln.split("[", 1)[1].rsplit("]", 1)[0] for ln in text.splitlines()
           if "test_scenario[" in ln}
    assert code == 0 and {SEED, FAILING} < ids and len(ids) > 2, text
    assert all(i in (SEED, FAILING) or i.startswith("exit/multinode/user/") for i in ids)


def test_pytest_rejects_a_listed_id_not_in_the_run(tmp_path):
    listing = tmp_path / "slice.txt"
    listing.write_text(f"{SEED}  # the seed\norder/local/user/no>such  # a typo\n")
    code, text = collect("--scenarios-from", listing)
    assert code == 4, text  # pytest's usage error
    assert (f"--scenarios-from {listing}: order/local/user/no>such: not in the quick profile "
            "on local,multinode for reference") in text, text
    code, text = collect("--scenarios-from", listing, "--ray-fixture", "multinode")
    assert code == 4 and f"{SEED}, order/local/user/no>such: not in the quick" in text, text


def test_a_fail_of_varying_oracles_only_compares_as_a_pass():
    from conformance.reports.known_failures import verdict_cell

    varies = {"resources_released_at_teardown"}
    assert verdict_cell("fail", ["resources_released_at_teardown"], varies) == "pass"
    assert verdict_cell("fail", ["resources_released_at_teardown", "no_ray_restart"],
                        varies) == "fail [no_ray_restart]"
    assert verdict_cell("fail", [], varies) == "fail []"  # a fail without oracles stays one
    assert verdict_cell("hang", ["no_hang"], {"no_hang"}) == "hang"
