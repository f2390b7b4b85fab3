"""``conformance.job`` without a cluster: the report's round trip through a
job's log, and the suite arguments the job runs with."""
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
