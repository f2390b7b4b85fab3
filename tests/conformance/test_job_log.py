"""``conformance.job`` without a cluster: the report's round trip through a
job's log, and the suite arguments the job runs with."""
import io
import json

import pytest

from conformance import job
from fixtures.rayenv import REPO_ROOT


def test_report_round_trip_through_the_log(tmp_path):
    doc = {"schema": 2, "scenarios": [{"id": "a/b/c/d", "verdict": "pass", "x": "é" * 5000}]}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    log = ("setup\n" + job.report_block(str(path)) + f"{job.EXIT}1 ===\n").replace("\n", "\r\n")
    assert job.read_report_block(log) == doc
    assert job.exit_status(log) == 1
    assert max(len(line) for line in log.splitlines()) <= 76


def test_no_report_no_exit_line():
    assert job.report_block("/nonexistent/report.json") == ""
    assert job.read_report_block("python: not found\n") is None
    assert job.exit_status("python: not found\n") is None


def test_suite_args(tmp_path):
    inside = f"{REPO_ROOT}/tests/conformance/job_slice.txt"
    assert job.job_suite_args(["-n", "2", "--scenarios-from", inside, "-k", "order"]) == [
        "-n", "2", "--scenarios-from", "tests/conformance/job_slice.txt", "-k", "order"]
    assert job.job_suite_args([f"--known-failures={inside}"]) == [
        "--known-failures", "tests/conformance/job_slice.txt"]
    outside = tmp_path / "slice.txt"
    outside.write_text("order/external/user/collector>buffer>evaluator>ray\n")
    for bad, why in ((["--scenarios-from", str(outside)], "outside the clone"),
                     (["--ray-fixture", "local"], "the job sets it"),
                     (["--conformance-report=x.json"], "the job sets it"),
                     (["--scenarios-from"], "needs a file")):
        with pytest.raises(job.JobUsageError, match=why):
            job.job_suite_args(bad)


class FinishedJob:
    """A job client whose one job has ended with ``log`` (no cluster)."""

    def __init__(self, log, status):
        self.log, self.status = log, status

    def submit_job(self, **kwargs):
        return kwargs["submission_id"]

    async def tail_job_logs(self, job_id):
        yield self.log

    def get_job_status(self, job_id):
        return self.status

    def get_job_logs(self, job_id):
        return self.log


@pytest.mark.parametrize("suite_exit", [0, 1])
def test_a_job_whose_report_never_came_back_is_never_a_success(
        monkeypatch, tmp_path, capsys, suite_exit):
    from ray.job_submission import JobStatus

    status = JobStatus.SUCCEEDED if suite_exit == 0 else JobStatus.FAILED
    client = FinishedJob(f"pytest ran\n{job.EXIT}{suite_exit} ===\n", status)
    monkeypatch.setattr(job, "connect", lambda address: client)
    report = tmp_path / "r.json"
    code = job.submit_and_follow("http://127.0.0.1:8265", [], str(report), out=io.StringIO())
    assert code == 1 and not report.exists()
    assert f"the suite exited {suite_exit} but its log holds no report" in capsys.readouterr().err


def test_a_job_with_its_report_exits_with_the_suite_s_status(monkeypatch, tmp_path):
    from ray.job_submission import JobStatus

    doc = {"schema": 2, "scenarios": [{"id": "a/b/c/d", "verdict": "pass"}]}
    written = tmp_path / "in-job.json"
    written.write_text(json.dumps(doc))
    client = FinishedJob(job.report_block(str(written)) + f"{job.EXIT}0 ===\n",
                         JobStatus.SUCCEEDED)
    monkeypatch.setattr(job, "connect", lambda address: client)
    report = tmp_path / "r.json"
    assert job.submit_and_follow("http://127.0.0.1:8265", [], str(report),
                                 out=io.StringIO()) == 0
    assert json.loads(report.read_text())["scenarios"] == doc["scenarios"]


class InterruptedTwice(FinishedJob):
    """A job client the user interrupts while following the log, then again
    while the job stops."""

    stopped = False

    async def tail_job_logs(self, job_id):
        raise KeyboardInterrupt
        yield  # an async generator

    def stop_job(self, job_id):
        self.stopped = True

    def get_job_status(self, job_id):
        raise KeyboardInterrupt


def test_a_second_ctrl_c_while_the_job_stops_exits_130_without_a_traceback(
        monkeypatch, tmp_path, capsys):
    from ray.job_submission import JobStatus

    client = InterruptedTwice("", JobStatus.RUNNING)
    monkeypatch.setattr(job, "connect", lambda address: client)
    try:
        code = job.submit_and_follow("http://127.0.0.1:8265", [], str(tmp_path / "r.json"),
                                     out=io.StringIO())
    except KeyboardInterrupt:
        pytest.fail("the second Ctrl-C escaped as a KeyboardInterrupt traceback")
    err = capsys.readouterr().err
    assert code == 130 and client.stopped
    assert "Ctrl-C again: not waiting for rlc-" in err and "it was asked to stop" in err


class NoSuite:
    """``subprocess.Popen`` of a suite that exits 4 (a usage error) writing no report."""

    def __init__(self, cmd):
        self.cmd = cmd

    def wait(self):
        return 4


def test_a_report_left_by_an_earlier_job_never_comes_back_as_this_one(
        monkeypatch, tmp_path, capsys):
    """Ray reuses an unchanged working_dir's directory: the earlier job's
    report is there when this job's suite writes none."""
    stale = tmp_path / job.REPORT_IN_JOB
    stale.parent.mkdir()
    stale.write_text(json.dumps({"schema": 2, "scenarios": [{"id": "old", "verdict": "pass"}]}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:6379")
    monkeypatch.setattr(job.subprocess, "Popen", NoSuite)
    assert job.run_in_job(["--profile", "quick"]) == 4
    out = capsys.readouterr().out
    assert job.read_report_block(out) is None and job.exit_status(out) == 4
