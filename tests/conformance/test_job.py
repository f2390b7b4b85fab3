"""The suite as a Ray job (``python -m conformance job``) on a cluster a user
started (``user_cluster``): ``ray start --head`` with its dashboard on
127.0.0.1, token authentication as Ray 2.60 sets it up, and ray[default]'s
pieces (the jobs extra, ``ci/jobs.lock``) so that the dashboard serves jobs.

The head runs with this venv's Python but NOT this clone on its PYTHONPATH:
the job's working_dir is what brings the suite and the reference to it.

- the reference on a 2-scenario slice: both pass, the report comes back, exit 0;
- a regression: the job fails, exit non-zero, the report shows the fail with
  the oracles its catch names;
- no token: one usage error, nothing submitted;
- Ctrl-C while the suite's named, detached worker is alive: the job is
  stopped, the suite's session end removes the worker, exit 130;
- afterwards no actor, job or process of the suite's is left.
"""
import fnmatch
import json
import os
import signal
import subprocess
import sys
import uuid

import psutil
import pytest

from conformance.adapters import regressions
from conformance.job import JOBS_SITE
from fixtures import procs
from fixtures.wait import wait_for_condition
from tests.conformance.suite_run import REPO, WITH_SIGINT
from tests.conformance.user_cluster import UserCluster

if "jobs" in os.environ.get("RLC_EXTRAS", "").split(","):  # as in .ci/run: must not skip
    assert os.path.isdir(JOBS_SITE), f"RLC_EXTRAS names jobs but {JOBS_SITE} is missing"
elif not os.path.isdir(JOBS_SITE):
    pytest.skip(f"the jobs extra is not installed ({JOBS_SITE}; RLC_EXTRAS=jobs bash "
                "ci/setup.sh)", allow_module_level=True)

SLICE = "tests/conformance/job_slice.txt"
REGRESSION = ("seed000-collector-shuts-down-ray", "order/external/user/collector>buffer>evaluator>ray")


@pytest.fixture(scope="module")
def cluster():
    """The user's cluster (head only), its Python this venv's, with the jobs
    extra; what lived on it before the suite's jobs; stopped at the end."""
    venv_bin = os.path.dirname(sys.executable)
    cluster = UserCluster(workers=0, node_env={
        "PYTHONPATH": JOBS_SITE, "PATH": venv_bin + os.pathsep + os.environ.get("PATH", "")})
    try:
        cluster.start()
        state = cluster.state()
        cluster.before = {"jobs": {j["job_id"] for j in state["jobs"] if not j["is_dead"]},
                          "actors": {a for a, r in state["actors"].items()
                                     if r["state"] != "DEAD"}}
        yield cluster
    finally:
        cluster.stop()
        assert cluster.processes() == []


def start(cluster, tmp_path, *suite_args, token=True):
    """``python -m conformance job`` from the user's shell (the token in the
    environment, Ctrl-C working as in a terminal); (process, report path, run id)."""
    report = tmp_path / "report.json"
    run_id = f"rlc-j{uuid.uuid4().hex[:8]}"
    env = cluster.user_env(HOME=cluster.root, PYTHONPATH=REPO, RLC_RUN_ID=run_id,
                           **({"RAY_AUTH_TOKEN": open(cluster.token_path).read().strip()}
                              if token else {}))
    proc = subprocess.Popen(
        [sys.executable, "-c", WITH_SIGINT, sys.executable, "-m", "conformance", "job",
         "--address", cluster.dashboard_address, "--report", str(report), "--", "-n", "0",
         *suite_args], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    return proc, report, run_id


def submit(cluster, tmp_path, *suite_args, token=True):
    """As ``start``, to the end: (completed process, report path, run id)."""
    proc, report, run_id = start(cluster, tmp_path, *suite_args, token=token)
    out, err = proc.communicate(timeout=600)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), report, run_id


def _command(pid: int) -> str:
    try:
        return " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return ""


def check_nothing_left(cluster, run_id):
    """Every job and actor alive now was alive before the suite's job, but
    the job server's own (measured: Ray's dashboard registers a driver job,
    01000000, when the first job is submitted); no worker of the suite's
    jobs and no process of the run left."""
    state = cluster.state()
    new = {j["job_id"]: _command(j["driver_pid"]) for j in state["jobs"]
           if not j["is_dead"] and j["job_id"] not in cluster.before["jobs"]}
    assert {jid: cmd for jid, cmd in new.items() if "dashboard" not in cmd.lower()} == {}
    cluster.before["jobs"] |= set(new)
    live = {aid: (rec["class_name"], rec["name"], rec["state"])
            for aid, rec in state["actors"].items()
            if rec["state"] != "DEAD" and aid not in cluster.before["actors"]}
    assert live == {}
    # the suite's jobs: every job the GCS knows but those alive before (an
    # idle worker of the raylet's pool, job ffffffff, is no job's)
    suite_jobs = {j["job_id"] for j in state["jobs"]} - cluster.before["jobs"]
    workers = {pid: w for pid, w in cluster.job_processes().items() if w[0] in suite_jobs}
    assert workers == {}
    assert [procs.describe(p) for p in procs.find_marked(run_id)] == []


def test_reference_slice_passes_as_a_job(cluster, tmp_path):
    done, report, run_id = submit(cluster, tmp_path, "--scenarios-from", SLICE)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    doc = json.loads(report.read_text())
    listed = [line.split("#")[0].strip() for line in open(os.path.join(REPO, SLICE))]
    assert {s["id"]: s["verdict"] for s in doc["scenarios"]} == {
        sid: "pass" for sid in listed if sid}, out
    assert f"{run_id} SUCCEEDED, the suite exited 0" in done.stderr, out
    assert "=== rlc-job: report begin ===" not in done.stdout  # the report block is not echoed
    check_nothing_left(cluster, run_id)


def test_regression_fails_the_job(cluster, tmp_path):
    rid, scenario = REGRESSION
    done, report, run_id = submit(cluster, tmp_path, "--impl", f"regression:{rid}",
                                  "--scenario", scenario)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out  # pytest's "tests failed"
    assert f"{run_id} FAILED, the suite exited 1" in done.stderr, out
    [entry] = json.loads(report.read_text())["scenarios"]
    [catch] = [c for c in regressions.REGRESSIONS[rid].catches
               if fnmatch.fnmatchcase(scenario, c.scenario)]
    assert (entry["id"], entry["verdict"]) == (scenario, "fail"), out
    assert set(catch.oracles) <= set(entry["oracles"]), entry["oracles"]
    check_nothing_left(cluster, run_id)


def test_without_the_token_one_usage_error_before_submitting(cluster, tmp_path):
    done, report, _ = submit(cluster, tmp_path, "--scenarios-from", SLICE, token=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("ERROR: ") == 1, done.stderr
    assert f"--address {cluster.dashboard_address}: it requires token authentication" \
        in done.stderr
    assert "RAY_AUTH_TOKEN=<token> or RAY_AUTH_TOKEN_PATH=<file>" in done.stderr
    assert "submitted" not in done.stderr and not report.exists()


def test_ctrl_c_stops_the_job_and_leaves_nothing(cluster, tmp_path):
    proc, report, run_id = start(
        cluster, tmp_path, "--impl", "tests.conformance.stalling_adapter:StallingAdapter",
        "--scenario", "named/external/user/peer-then-owner")
    try:
        alive = wait_for_condition(lambda: cluster.named_actors_alive(run_id), 180,
                                   interval=0.5, message="the job's named eval worker ALIVE")
    finally:
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, out + err
    assert f"Ctrl-C: stopping {run_id}" in err and f"{run_id} STOPPED" in err, out + err
    assert cluster.state()["actors"][alive[0]]["state"] == "DEAD"
    check_nothing_left(cluster, run_id)
