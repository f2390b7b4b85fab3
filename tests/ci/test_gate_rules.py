"""The gate's rules on reports (#29.4-9, 11): a known failure states its
outcome and nothing else passes for it, an error is never expected, a flaky
entry states its rate, the claim is part of the verdict, ``summary`` and
``gate`` decide alike, a report is decided again against a known-failures
file without running anything, and a command writes that file.

Synthetic reports of the real catalog, through the real command line."""
import json
import os
import subprocess
import sys

import pytest

from conformance import catalog
from conformance.reports import known_failures, report, ruling
from conformance.adapter import FEATURES
from conformance.reports.claims import Claim

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUICK = [s.id for s in catalog.scenarios(("local", "multinode"), "quick")]
BROKEN = "double_close/local/user/buffer-twice"
OTHER = "double_close/multinode/user/buffer-twice"
assert BROKEN in QUICK and OTHER in QUICK


def entry(sid, verdict="pass", oracles=()):
    family, fixture, owner, _ = sid.split("/", 3)
    return {"id": sid, "family": family, "fixture": fixture, "owner": owner, "components": [],
            "verdict": verdict, "oracles": list(oracles), "unknown": [], "findings": [],
            "evidence": {}, "repro": f"python -m conformance repro {sid}", "duration": 1.0}


def run_report(outcomes=None, ids=QUICK, claim=None, known=None):
    """A report of ``ids`` (each passing unless ``outcomes`` says: {id: (verdict,
    oracles)}), its entries marked against ``known`` as the run marks them."""
    outcomes = outcomes or {}
    entries = [entry(i, *outcomes.get(i, ("pass", ()))) for i in ids]
    ruling.mark(entries, known or {})
    return report.document("myfork", {"ray": "2.60.0"}, entries, "2026-11-25T10:00:00Z",
                           claim=(claim or Claim.full()).as_dict())


def write(tmp_path, doc, name="report.json"):
    path = tmp_path / name
    report.write(doc, str(path))
    return path


def cli(*args):
    proc = subprocess.run([sys.executable, "-m", "conformance", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def known(text):
    return known_failures.expected(text)


FAIL_LISTED = known(f"{BROKEN}  fail[teardown_never_raises]  # close() is not idempotent\n")


def test_a_complete_report_with_its_known_failure_is_green(tmp_path):
    doc = run_report({BROKEN: ("fail", ["teardown_never_raises"])}, known=FAIL_LISTED)
    code, text = cli("gate", write(tmp_path, doc))
    assert code == 0, text
    assert text.splitlines()[0] == (
        "claim: myfork: every component; every feature; fixtures local+multinode; quick "
        "profile; required: every component; every feature; fixtures local+multinode; quick "
        "profile")
    assert "gate: passed: myfork meets the claim" in text and "1 known failure(s)" in text


# -- #29.4: an error is never expected --------------------------------------------------

def test_an_error_cannot_be_listed_and_a_listed_scenario_that_errs_is_red(tmp_path):
    with pytest.raises(ValueError, match="'error' cannot be expected"):
        known(f"{BROKEN}  error  # the harness flakes here")
    doc = run_report({BROKEN: ("error", [])}, known=FAIL_LISTED)
    assert doc["scenarios"][QUICK.index(BROKEN)]["known_failure"] is None  # not "listed"
    code, text = cli("gate", write(tmp_path, doc))
    assert code == 1, text
    assert f"NEW HARNESS ERROR: {BROKEN}" in text
    assert ("listed as fail [teardown_never_raises], but an error is the harness's: it could "
            "not observe the scenario, never an expected failure") in text


# -- #29.5: an entry states the verdict and oracles; a flaky one its rate -------------------

@pytest.mark.parametrize("now, why", [
    (("crash", ["no_crash", "teardown_never_raises"]), "now crash"),
    (("hang", ["no_hang"]), "now hang"),
    (("fail", ["teardown_never_raises", "clean_stderr"]),
     "now fail [clean_stderr, teardown_never_raises]"),
    (("setup-error", ["setup"]), "now setup-error"),
])
def test_a_listed_failure_that_fails_otherwise_is_a_new_failure(tmp_path, now, why):
    """Seen: a listed fail [teardown_never_raises] became a crash, the gate quiet."""
    doc = run_report({BROKEN: now}, known=FAIL_LISTED)
    code, text = cli("gate", write(tmp_path, doc))
    assert code == 1, text
    assert f"NEW {now[0].upper()}: {BROKEN}" in text
    assert f"    listed as fail [teardown_never_raises], {why}" in text


def test_a_flaky_entry_allows_its_failure_or_a_pass_and_nothing_else(tmp_path):
    flaky = known(f"{BROKEN}  crash  flaky:2/3  # aborts in 2 of 3 runs (measured)\n")
    assert flaky[BROKEN].flaky == (2, 3)
    for outcome, code_wanted, said in (
            (("crash", ["no_crash"]), 0, "1 known failure(s) still failing"),
            (("pass", []), 0, f"flaky pass: {BROKEN} (listed: fails in 2 of 3 runs)"),
            (("hang", ["no_hang"]), 1, "listed as crash in 2 of 3 runs, now hang")):
        code, text = cli("gate", write(tmp_path, run_report({BROKEN: outcome}, known=flaky)))
        assert code == code_wanted and said in text, (outcome, text)
    for bad in ("flaky:3/3", "flaky:0/3", "flaky:2", "flaky:two/3"):
        with pytest.raises(ValueError, match="flaky:K/N"):
            known(f"{BROKEN}  crash  {bad}  # x")
    with pytest.raises(ValueError, match="no expected outcome"):
        known(f"{BROKEN}  # listed by id alone, as before")
    with pytest.raises(ValueError, match="no such oracle"):
        known(f"{BROKEN}  fail[teardown_never_raise]  # a typo")


def test_a_race_between_two_failures_allows_either_and_no_pass(tmp_path):
    line = f"{BROKEN}  crash  flaky:1/9  otherwise:fail[teardown_never_raises]  # a race (measured)\n"
    race = known(line)
    assert race[BROKEN].otherwise == ("fail", frozenset({"teardown_never_raises"}))
    assert race[BROKEN].line() == line.rstrip("\n")
    for outcome, code_wanted, said in (
            (("crash", ["no_crash"]), 0, "1 known failure(s) still failing"),
            (("fail", ["teardown_never_raises"]), 0, "1 known failure(s) still failing"),
            (("pass", []), 0, f"unexpected pass: {BROKEN}"),
            (("fail", ["no_leak"]), 1, "listed as crash in 1 of 9 runs, fail [teardown_never_raises] "
                                       "in the others, now fail [no_leak]")):
        code, text = cli("gate", write(tmp_path, run_report({BROKEN: outcome}, known=race)))
        assert code == code_wanted and said in text, (outcome, text)
    for bad, match in ((f"crash  otherwise:fail[teardown_never_raises]", "write flaky:K/N too"),
                       (f"crash  flaky:1/9  otherwise:crash", "repeats the entry's outcome"),
                       (f"crash  flaky:1/9  otherwise:pass", "not a failure"),
                       (f"crash  flaky:1/9  otherwise:fail[no_such]", "no such oracle"),
                       (f"crash  flaky:1/9  otherwise:hang  otherwise:fail[no_crash]", "declared twice"),
                       (f"crash  flaky:1/9  varies:clean_stderr  otherwise:fail[clean_stderr]",
                        "that is a pass")):
        with pytest.raises(ValueError, match=match):
            known(f"{BROKEN}  {bad}  # x")


# -- #29.6: the claim -----------------------------------------------------------------------

def test_a_report_that_covers_less_than_the_claim_fails_whatever_its_skip_count(tmp_path):
    """A collector-only adapter: fewer scenarios, no skip, every one passing."""
    features = ("async", "sync", "background", "liveness", "shutdown_ray")
    smaller = Claim(("collector",), features, ("local", "multinode"), "quick")
    ids = [s.id for s in catalog.scenarios(("local", "multinode"), "quick",
                                           components=("collector",))]
    doc = run_report(ids=ids, claim=smaller)
    assert doc["coverage"]["skipped"] == 0 and len(ids) < len(QUICK)
    path = write(tmp_path, doc)
    code, text = cli("gate", path)
    assert code == 1, text
    lacking = sorted(set(FEATURES) - set(features))
    assert "CLAIM NOT MET: components not in the implementation: buffer, evaluator" in text
    assert f"CLAIM NOT MET: features not declared by the adapter: {', '.join(lacking)}" in text
    assert text.splitlines()[0].startswith(
        f"claim: myfork: components collector; features {', '.join(features)} "
        f"(not {', '.join(lacking)})")
    # the fork may claim less, and says so: the gate then holds it to that
    code, text = cli("gate", path, "--components", "collector", "--features", ",".join(features))
    assert code == 0, text


def test_a_narrowed_or_smaller_run_does_not_meet_the_claim(tmp_path):
    narrowed = run_report(ids=QUICK[:-5])  # e.g. -k, --scenario, a shard not merged
    code, text = cli("gate", write(tmp_path, narrowed))
    assert code == 1 and "CLAIM NOT MET: 5 of the claim's" in text, text
    local = run_report(ids=[i for i in QUICK if "/local/" in i],
                       claim=Claim.parse(fixtures="local"))
    code, text = cli("gate", write(tmp_path, local, "local.json"))
    assert code == 1 and "CLAIM NOT MET: fixtures not run: multinode" in text, text
    code, text = cli("gate", write(tmp_path, local, "local.json"), "--fixtures", "local")
    assert code == 0, text
    code, text = cli("gate", write(tmp_path, run_report()), "--profile", "full")
    assert code == 1 and "CLAIM NOT MET: profile quick run, full required" in text, text


def test_operations_left_undone_for_a_claimed_feature_do_not_meet_the_claim(tmp_path):
    """An op recorded unsupported (an optional feature the adapter lacks) is
    outside a claim without that feature, and against one with it."""
    doc = run_report(claim=Claim(Claim.full().components,
                                 tuple(f for f in sorted(FEATURES) if f != "liveness"),
                                 ("local", "multinode"), "quick"))
    killed = next(s for s in doc["scenarios"] if s["id"].startswith("killed/"))
    killed["unsupported"] = ["op 6 check_alive buffer: unsupported: myfork does not support "
                             "liveness"]
    killed["unsupported_features"] = ["liveness"]
    killed["not_checked"] = ["liveness_reports_death"]
    doc["coverage"] = report.coverage(doc["scenarios"])
    path = write(tmp_path, doc)
    without = ",".join(f for f in sorted(FEATURES) if f != "liveness")
    code, text = cli("gate", path, "--features", without)
    assert code == 0, text
    assert ("operations never run: 1 unsupported, 0 on a component never built (a constructor "
            "the scenario lets fail, failed); oracles not checked: liveness_reports_death (1)"
            ) in text
    claim = Claim.from_dict(doc["claim"])
    doc["claim"] = Claim(claim.components, tuple(sorted(FEATURES)), claim.fixtures,
                         "quick").as_dict()  # an adapter that says it has liveness
    code, text = cli("gate", write(tmp_path, doc, "lying.json"))
    assert code == 1 and "CLAIM NOT MET: 1 operations not run for features the claim " \
                         "includes (liveness), in 1 scenarios" in text, text


# -- #29.8: summary and gate decide alike ---------------------------------------------------

def test_summary_and_gate_agree_on_a_skip_and_on_the_claim(tmp_path):
    """Seen: summary said "gate: green" while gate was red on a skip."""
    doc = run_report()
    skipped = doc["scenarios"][0]
    skipped.update(verdict="skip", evidence={"reason": "myfork does not support background",
                                             "missing_features": ["background"]})
    path = write(tmp_path, doc)
    code, text = cli("gate", path)
    assert code == 1 and "CLAIM NOT MET: 1 of the claim's scenarios skipped: myfork does not " \
                         "support background" in text, text
    _, md = cli("summary", path)
    assert "❌ **gate: red**: the report covers less than the claim" in md, md
    assert md.splitlines()[0] == ("# Lifecycle conformance: `myfork`: every component; every "
                                  "feature; fixtures local+multinode; quick profile")
    for args in ([], ["--known-failures", write_file(tmp_path, FAIL_LISTED)]):
        gate_red = cli("gate", path, *args)[0] == 1
        summary_red = "gate: red" in cli("summary", path, *args)[1]
        assert gate_red == summary_red


def write_file(tmp_path, entries, name="known-failures.txt"):
    path = tmp_path / name
    path.write_text("".join(e.line() + "\n" for e in entries.values()))
    return path


# -- #29.9: decide again against a file; write the file from reports ---------------------------

def test_gate_known_failures_decides_a_report_again_without_running_it(tmp_path):
    doc = run_report({BROKEN: ("fail", ["teardown_never_raises"]),
                      OTHER: ("fail", ["teardown_never_raises"])}, known=FAIL_LISTED)
    path = write(tmp_path, doc)
    code, text = cli("gate", path)
    assert code == 1 and f"NEW FAIL: {OTHER}" in text and f"NEW FAIL: {BROKEN}" not in text
    both = known(f"{BROKEN}  fail[teardown_never_raises]  # x\n"
                 f"{OTHER}  fail[teardown_never_raises]  # y\n")
    code, text = cli("gate", path, "--known-failures", write_file(tmp_path, both))
    assert code == 0 and "2 known failure(s)" in text, text
    assert json.loads(path.read_text()) == doc  # the report itself is not changed
    code, text = cli("gate", path, "--known-failures", tmp_path / "absent.txt")
    assert code == 2 and "absent.txt" in text, text


def test_the_known_failures_command_writes_what_the_reports_fail(tmp_path):
    failing = {BROKEN: ("fail", ["teardown_never_raises"]), OTHER: ("crash", ["no_crash"]),
               QUICK[0]: ("error", [])}
    path = write(tmp_path, run_report(failing))
    out = tmp_path / "written.txt"
    code, text = cli("known-failures", path, "-o", out)
    assert code == 0, text
    written = known_failures.load_expected(str(out))
    assert {i: e.cell() for i, e in written.items()} == {
        BROKEN: "fail [teardown_never_raises]", OTHER: "crash"}
    assert f"not written: {QUICK[0]}: error in 1 of 1 runs" in text  # never expected
    code, text = cli("gate", path, "--known-failures", out)
    assert code == 1 and f"NEW HARNESS ERROR: {QUICK[0]}" in text and "NEW FAIL" not in text
    # from three runs: a crash in 2 of 3 is flaky:2/3; oracles in some failing runs vary
    runs = [run_report({OTHER: ("crash", ["no_crash"]),
                        BROKEN: ("fail", ["teardown_never_raises", "clean_stderr"])}),
            run_report({OTHER: ("crash", ["no_crash"]),
                        BROKEN: ("fail", ["teardown_never_raises"])}),
            run_report({BROKEN: ("fail", ["teardown_never_raises"])})]
    paths = [write(tmp_path, d, f"run{k}.json") for k, d in enumerate(runs)]
    code, text = cli("known-failures", *paths)
    assert code == 0, text
    lines = {ln.split()[0]: ln for ln in text.splitlines() if ln and not ln.startswith("#")}
    assert lines[OTHER].startswith(f"{OTHER}  crash  flaky:2/3  # ")
    assert lines[BROKEN].startswith(
        f"{BROKEN}  fail[teardown_never_raises]  varies:clean_stderr  # ")
    for p in paths:
        assert cli("gate", p, "--known-failures", write_text(tmp_path, text))[0] == 0


def write_text(tmp_path, text):
    path = tmp_path / "from-runs.txt"
    path.write_text(text)
    return path
