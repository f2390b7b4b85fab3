"""A failure a busy machine may have made is rerun once alone, after every
other scenario, and the rerun decides (``conformance.run.rerun``); the report
keeps both runs. The machine's CPU pressure is a fake PSI file here, made
to read as fully busy (or idle)."""
import os
import threading

import pytest

from conformance.run.rerun import merged, needs_rerun
from tests.conformance.suite_run import suite, verdicts

SCENARIO = "use_after_close/local/user/buffer"
SLOW = "tests.conformance.slow_first_teardown:SlowFirstTeardown"


def fail_entry(oracles, pressure, violations=None):
    return {"id": SCENARIO, "verdict": "fail", "oracles": oracles, "duration": 3.0,
            "evidence": {"cpu_pressure": pressure, "violations": violations or {
                o: ["op 1 (teardown buffer) took 12.00s (bound 10.0s)"] for o in oracles}}}


def test_which_failures_are_rerun():
    assert needs_rerun(fail_entry(["teardown_within_bound"], 0.96)) == \
        "teardown_within_bound failed at CPU pressure 0.96"
    assert needs_rerun(fail_entry(["teardown_within_bound"], 0.3)) is None  # an idle machine
    # no PSI: a committed report's failure stands as it is (repro.upstream); the
    # suite's own run reruns it, as it cannot tell a busy runner from an idle one
    assert needs_rerun(fail_entry(["teardown_within_bound"], None)) is None
    assert needs_rerun(fail_entry(["teardown_within_bound"], None), unmeasured=True) == \
        "teardown_within_bound failed, CPU pressure unmeasured (no PSI)"
    assert needs_rerun(fail_entry(["teardown_within_bound"], 0.3), unmeasured=True) is None
    unclear = {"use_after_close_clear_error": [
        "op 2 (use buffer) sample() after teardown raised an unclear builtins.KeyError: x"]}
    assert needs_rerun(fail_entry(["use_after_close_clear_error"], 0.96, unclear)) is None
    zombie = {"no_leftover_process": ["buffer actor 1a2b3c4d: Ray reports it DEAD, its worker "
                                      "process (pid 42) is still running"]}
    assert needs_rerun(fail_entry(["no_leftover_process"], 0.96, zombie)) == \
        "no_leftover_process failed at CPU pressure 0.96"
    once = merged(fail_entry(["teardown_within_bound"], 0.96),
                  {**fail_entry([], 0.4), "verdict": "pass"}, "why")
    assert needs_rerun(once) is None  # never twice
    assert once["verdict"] == "pass" and once["evidence"]["rerun"]["agreed"] is False
    assert [r["verdict"] for r in once["evidence"]["rerun"]["runs"]] == ["fail", "pass"]


@pytest.fixture
def busy_machine(tmp_path):
    """A PSI file whose stall time grows faster than the clock: CPU pressure 1.0."""
    path = tmp_path / "cpu"
    stop = threading.Event()

    def write(total_us):
        tmp = tmp_path / "cpu.tmp"
        tmp.write_text(f"some avg10=99.00 avg60=99.00 avg300=99.00 total={total_us}\n"
                       "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
        os.replace(tmp, path)  # a reader never sees half a file

    def grow():
        total = 0
        while not stop.wait(0.05):
            total += 100_000  # 0.1 s of stall every 0.05 s
            write(total)
    write(0)
    thread = threading.Thread(target=grow, daemon=True)
    thread.start()
    yield path
    stop.set()
    thread.join()


def run_slow(tmp_path, psi, every_run=False):
    env = {**os.environ, "RLC_PSI_CPU": str(psi), "RLC_TEST_SLOW_MARK": str(tmp_path / "mark")}
    if every_run:
        env["SLOW_EVERY_RUN"] = "1"
    proc, report = suite(tmp_path, "-n", "0", "--impl", SLOW, "--profile", "full",
                         "--scenario", SCENARIO, env=env)
    out, _ = proc.communicate(timeout=600)
    return proc.returncode, out, verdicts(report)[SCENARIO]


def test_a_false_alarm_of_a_busy_machine_passes_when_rerun_alone(tmp_path, busy_machine):
    code, out, entry = run_slow(tmp_path, busy_machine)
    assert code == 0, out
    assert entry["verdict"] == "pass" and entry["oracles"] == []
    first, second = entry["evidence"]["rerun"]["runs"]
    assert (first["verdict"], first["oracles"], first["cpu_pressure"]) == \
        ("fail", ["teardown_within_bound"], 1.0)
    assert second["verdict"] == "pass"
    assert (f"{SCENARIO}: rerun alone (teardown_within_bound failed at CPU pressure 1.00): "
            "fail [teardown_within_bound] (CPU pressure 1.00), then pass (CPU pressure 1.00): "
            "the rerun's verdict stands") in out
    assert "exit status 0: the 1 failure(s) above passed when rerun alone" in out


def test_a_failure_the_rerun_repeats_stands(tmp_path, busy_machine):
    code, out, entry = run_slow(tmp_path, busy_machine, every_run=True)
    assert code == 1, out
    assert entry["verdict"] == "fail" and entry["oracles"] == ["teardown_within_bound"]
    assert entry["evidence"]["rerun"]["agreed"] is True
    assert [r["verdict"] for r in entry["evidence"]["rerun"]["runs"]] == ["fail", "fail"]


def test_on_an_idle_machine_a_timing_failure_is_not_rerun(tmp_path):
    idle = tmp_path / "idle"
    idle.write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                    "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    code, out, entry = run_slow(tmp_path, idle)
    assert code == 1 and entry["verdict"] == "fail", out
    assert "rerun" not in entry["evidence"] and entry["evidence"]["cpu_pressure"] == 0.0


def test_without_a_pressure_reading_a_timing_failure_is_rerun_alone(tmp_path):
    """A runner without PSI cannot tell a busy machine from an idle one: the
    suite reruns the timing failure alone rather than let it stand."""
    code, out, entry = run_slow(tmp_path, tmp_path / "no-psi-here")
    assert code == 0, out
    assert entry["verdict"] == "pass" and entry["oracles"] == []
    first, second = entry["evidence"]["rerun"]["runs"]
    assert (first["verdict"], first["oracles"], first["cpu_pressure"]) == \
        ("fail", ["teardown_within_bound"], None)
    assert second["verdict"] == "pass"
    assert (f"{SCENARIO}: rerun alone (teardown_within_bound failed, CPU pressure unmeasured "
            "(no PSI)): fail [teardown_within_bound], then pass: the rerun's verdict stands") in out
