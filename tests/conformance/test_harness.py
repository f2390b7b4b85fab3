"""The harness end to end: `pytest conformance` in a subprocess, as a user runs it.

A crash or a hang becomes a verdict and the session goes on; an interrupted
run leaves no process behind; -n 0 and -n 2 agree.
"""
import signal
import subprocess
import sys
import time
import uuid

import pytest

from conformance.run.execute import interpreter
from fixtures import procs
from tests.conformance.suite_run import REPO, suite, verdicts

CRASH = "order/local/user/ray>collector>buffer>evaluator"
AFTER = "order/local/user/collector>buffer>evaluator>ray"
HANG = "killed/local/user/evaluator-hang>teardown"


def test_crash_is_a_verdict_and_the_session_goes_on(tmp_path):
    proc, report = suite(tmp_path, "-n", "0", "--impl", "regression:abort-on-close",
                         "--profile", "full", "--scenario", CRASH, "--scenario", AFTER)
    out, _ = proc.communicate(timeout=600)
    found = verdicts(report)
    assert found[CRASH]["verdict"] == "crash", out
    assert found[CRASH]["evidence"]["signal"] == signal.SIGABRT
    assert found[AFTER]["verdict"] == "pass", out  # the next scenario ran
    assert f"repro: {interpreter()} -m conformance repro" in out


@pytest.mark.waits_for_deadline
def test_hang_is_a_verdict_with_a_stack_dump(tmp_path):
    proc, report = suite(tmp_path, "-n", "0", "--impl", "regression:eval-shutdown-unbounded",
                         "--profile", "full", "--scenario", HANG)
    out, _ = proc.communicate(timeout=600)
    entry = verdicts(report)[HANG]
    assert entry["verdict"] == "hang", out
    dump = entry["evidence"]["stack_dump"]  # the driver's watchdog's, whole: its own field
    assert dump.startswith("Timeout ("), dump
    assert "shutdown" in dump and "teardown" in dump, dump  # the hung frames
    assert entry["duration"] < 120


def test_interrupted_run_leaves_no_process(tmp_path):
    run_id = f"rlc-int{uuid.uuid4().hex[:6]}"
    proc, _ = suite(tmp_path, "-n", "2", "--ray-fixture", "local,multinode",
                    "--scenario", "order/*/user/*", run_id=run_id)
    deadline = time.monotonic() + 240
    while not procs.find_marked(run_id) and time.monotonic() < deadline:
        time.sleep(0.5)
    # let clusters and drivers come up, then interrupt as a user would (Ctrl-C)
    while len(procs.find_marked(run_id)) < 8 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert procs.find_marked(run_id), "the run never started Ray processes"
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    left = [procs.describe(p) for p in procs.find_marked(run_id)]
    assert left == []


@pytest.mark.parametrize("impl", ["regression:seed000-collector-shuts-down-ray"])
def test_serial_and_parallel_runs_agree(tmp_path, impl):
    picks = ["order/local/user/collector>buffer>evaluator>ray",
             "exhaustion/local/user/buffer-mode", "double_close/local/user/buffer-twice",
             "use_after_close/multinode/user/buffer"]
    args = ["--impl", impl, "--ray-fixture", "local,multinode", "--profile", "full"]
    for p in picks:
        args += ["--scenario", p]
    serial, r0 = suite(tmp_path, "-n", "0", *args)
    out0, _ = serial.communicate(timeout=900)
    parallel, r2 = suite(tmp_path, "-n", "2", *args)
    out2, _ = parallel.communicate(timeout=900)
    v0 = {k: v["verdict"] for k, v in verdicts(r0).items()}
    v2 = {k: v["verdict"] for k, v in verdicts(r2).items()}
    assert sorted(v0) == sorted(picks), out0
    assert v0 == v2
    assert set(v0.values()) >= {"pass", "fail"}  # a comparison that could differ


def test_a_scenario_that_fails_before_its_verdict_is_an_error_in_the_report(tmp_path):
    """No scenario leaves the report silently: here the fixture cannot be
    prepared (``prepare_fault``), the test fails in the harness, and the gate
    goes red. (A cluster that does not answer at all is a usage error before
    any scenario: ``test_external.py``.)"""
    scenario = "double_close/local/user/buffer-twice"
    proc, report = suite(tmp_path, "-n", "0", "-p", "tests.conformance.prepare_fault",
                         "--ray-fixture", "local", "--scenario", scenario)
    out, _ = proc.communicate(timeout=300)
    entry = verdicts(report)[scenario]
    assert entry["verdict"] == "error", out
    assert "before the scenario had a verdict" in entry["evidence"]["unknown"]["harness"][0]
    assert "injected: the local fixture could not be prepared" in entry["evidence"]["stderr_tail"]
    gate = subprocess.run([sys.executable, "-m", "conformance", "gate", str(report)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert gate.returncode == 1 and "NEW HARNESS ERROR" in gate.stdout, gate.stdout


def test_a_listed_scenario_that_fails_before_its_verdict_is_still_an_error(tmp_path):
    """#29.4: a known-failures entry made its scenario an xfail up front, so a
    fixture failure, a timeout or a harness exception before the verdict was
    "xfailed": no entry in the report, exit 0. Only the outcome an entry
    states becomes an xfail; an error is never one."""
    scenario = "double_close/local/user/buffer-twice"
    listed = tmp_path / "known-failures.txt"
    listed.write_text(f"{scenario}  fail[teardown_never_raises]  # a known bug\n")
    proc, report = suite(tmp_path, "-n", "0", "-p", "tests.conformance.prepare_fault",
                         "--ray-fixture", "local", "--scenario", scenario,
                         "--known-failures", str(listed))
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 1, out  # pytest itself fails: not an xfail
    entry = verdicts(report)[scenario]
    assert entry["verdict"] == "error" and entry["known_failure"] is None, entry
    assert entry["expected"]["verdict"] == "fail"
    gate = subprocess.run([sys.executable, "-m", "conformance", "gate", str(report)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert gate.returncode == 1 and f"NEW HARNESS ERROR: {scenario}" in gate.stdout, gate.stdout
