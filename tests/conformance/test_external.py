"""The suite against a cluster a user started (``user_cluster``: ``ray start``
head and worker node on 127.0.0.1, token authentication as Ray 2.60 sets it
up), as a user runs it: ``pytest conformance --ray-fixture external
--ray-address ADDR`` with the token in the environment or a file.

- the external scenarios give the verdicts the ``multinode`` fixture gives;
- without the token: one usage error, before any scenario;
- nothing the suite did not create is touched (the user's detached actors
  and their long-running job), and everything it created is gone after a
  run, a run of a buggy implementation that leaks detached workers, named
  and unnamed, and a run interrupted with Ctrl-C.
"""
import json
import re
import select
import signal
import subprocess
import sys
import uuid

import pytest

from fixtures import procs
from fixtures.wait import wait_for_condition
from tests.conformance.suite_run import REPO, suite, verdicts
from tests.conformance.user_cluster import UserCluster

#: variants run on both fixtures: owners, a peer and a named worker in the
#: run's namespace, a kill, the implementation's own ray.init, a thread
SLICE = ["order/{}/user/collector>buffer>evaluator>ray", "named/{}/user/peer-then-owner",
         "killed/{}/user/buffer-sigkill>teardown", "exit/{}/impl/all-open",
         "background/{}/user/stop-from-main"]
#: leaking implementations: (impl, scenario, what it leaves alive on the cluster)
LEAKS = [("regression:named-worker-outlives-owner", "named/external/user/peer-then-owner",
          "a named detached eval worker"),
         ("regression:eval-worker-always-detached", "exit/external/user/all-open",
          "an unnamed detached eval worker")]


@pytest.fixture(scope="module")
def cluster():
    """The user's cluster; at the end it is stopped and none of its processes is left."""
    cluster = UserCluster(workers=1)
    try:
        yield cluster.start()
    finally:
        cluster.stop()
        assert cluster.processes() == []


@pytest.fixture(scope="module")
def user_work(cluster, tmp_path_factory):
    """The user's own work on it: detached actors (named, unnamed) and a
    long-running job (``user_workload.py``), as it was when it started."""
    log = tmp_path_factory.mktemp("user") / "stderr.txt"
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "tests/conformance/user_workload.py", cluster.user_address],
            cwd=REPO, env=cluster.user_env(RAY_AUTH_MODE="token"), stdout=subprocess.PIPE,
            stderr=err, text=True)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 120)
        line = proc.stdout.readline() if ready else ""
        assert line, f"the user's workload did not start: {log.read_text()[-3000:]}"
        yield {"proc": proc, **json.loads(line)}
    finally:
        proc.kill()
        proc.wait()


def user_env_for_the_suite(cluster, **token):
    """The user's shell running the suite: their HOME has no token of this
    cluster here (the token is passed as ``token`` says)."""
    return cluster.user_env(HOME=cluster.root, **token)


def check_untouched_and_clean(cluster, user_work, run_ids):
    """The user's actors ALIVE in the same processes and their job running;
    every other job finished with every actor DEAD and no worker process
    left; no process of the suite's runs left on this machine."""
    assert user_work["proc"].poll() is None, "the user's long-running job was ended"
    state = cluster.state()
    for what, actor in user_work["actors"].items():
        rec = state["actors"][actor["id"]]
        assert (rec["state"], rec["pid"]) == ("ALIVE", actor["pid"]), (what, rec)
    jobs = {j["job_id"]: j for j in state["jobs"]}
    assert not jobs[user_work["job_id"]]["is_dead"]
    others = set(jobs) - {user_work["job_id"]}
    assert others, "the suite ran no job on the cluster"
    assert [j for j in others if not jobs[j]["is_dead"]] == []
    live = {aid: (rec["class_name"], rec["name"], rec["namespace"], rec["state"])
            for aid, rec in state["actors"].items()
            if rec["job_id"] in others and rec["state"] != "DEAD"}
    assert live == {}
    workers = {pid: w for pid, w in cluster.job_processes().items() if w[0] in others}
    assert workers == {}
    for run_id in run_ids:
        assert [procs.describe(p) for p in procs.find_marked(run_id)] == []


def test_the_cluster_is_the_users(cluster, user_work):
    """Two nodes on 127.0.0.1 only, token authentication on."""
    assert cluster.not_on_loopback() == []
    state = cluster.state()
    assert state["jobs"] and user_work["job_id"] in {j["job_id"] for j in state["jobs"]}
    rejected = subprocess.run(
        [sys.executable, "tests/conformance/user_cluster.py", "state", cluster.address],
        cwd=REPO, env=cluster.user_env(HOME=cluster.root, RAY_AUTH_MODE="disabled"),
        capture_output=True, text=True, timeout=120)
    assert rejected.returncode != 0 and "Authentication token is missing" in rejected.stderr


@pytest.mark.parametrize("token", ["none", "wrong"])
def test_without_the_token_one_usage_error_before_any_scenario(cluster, token, tmp_path):
    env = user_env_for_the_suite(
        cluster, **({"RAY_AUTH_TOKEN": "0123456789abcdef" * 4} if token == "wrong" else {}))
    proc, report = suite(tmp_path, "-n", "2", "--ray-fixture", "external", "--ray-address",
                         cluster.address, env=env)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 4, out  # pytest's usage error
    assert f"--ray-address {cluster.address}: " in out
    assert ("rejected the token from RAY_AUTH_TOKEN" if token == "wrong"
            else "requires token authentication") in out
    assert "RAY_AUTH_TOKEN=<token> or RAY_AUTH_TOKEN_PATH=<file>" in out
    assert out.count("ERROR: ") == 1 and "passed" not in out, out
    assert not report.exists()


def test_external_verdicts_match_multinode(cluster, user_work, tmp_path):
    """The token from the environment; multinode (auth disabled) and external
    (token) in one run."""
    args = ["-n", "2", "--ray-fixture", "multinode,external", "--ray-address", cluster.address]
    for pattern in SLICE:
        args += ["--scenario", pattern.format("*")]
    run_id = f"rlc-x{uuid.uuid4().hex[:8]}"
    env = user_env_for_the_suite(cluster, RAY_AUTH_TOKEN=open(cluster.token_path).read().strip())
    proc, report = suite(tmp_path, *args, run_id=run_id, env=env)
    out, _ = proc.communicate(timeout=900)
    found = {sid: entry["verdict"] for sid, entry in verdicts(report).items()}
    on = {fx: {p: found.get(p.format(fx)) for p in SLICE} for fx in ("multinode", "external")}
    assert on["external"] == on["multinode"], out
    assert set(on["external"].values()) == {"pass"}, out
    check_untouched_and_clean(cluster, user_work, [run_id])


def test_never_touches_what_the_suite_did_not_create(cluster, user_work, tmp_path):
    """The token from a file. Leaking implementations: what they leave is
    removed after each driver, by id, name and namespace. A run interrupted
    (Ctrl-C) while its named worker is alive (``stalling_adapter``): the
    session's end removes it."""
    env = user_env_for_the_suite(cluster, RAY_AUTH_TOKEN_PATH=cluster.token_path)
    run_ids = []
    for impl, scenario, leak in LEAKS:
        run_ids.append(f"rlc-l{uuid.uuid4().hex[:8]}")
        proc, report = suite(tmp_path, "-n", "0", "--impl", impl, "--ray-fixture", "external",
                             "--ray-address", cluster.address, "--scenario", scenario,
                             run_id=run_ids[-1], env=env)
        out, _ = proc.communicate(timeout=600)
        entry = verdicts(report)[scenario]
        assert "no_actor_outlives_driver" in entry["oracles"], (leak, out)
        after = entry["evidence"]["after_exit"]
        assert after["removed"] and not after["left"], (leak, after)
        assert set(after["removed"]) == set(after["actors"]), (leak, after)

    run_ids.append(f"rlc-i{uuid.uuid4().hex[:8]}")
    proc, _ = suite(tmp_path, "-n", "2", "--impl", "tests.conformance.stalling_adapter:"
                    "StallingAdapter", "--ray-fixture", "external", "--ray-address",
                    cluster.address, "--scenario", "named/external/user/peer-then-owner",
                    run_id=run_ids[-1], env=env, start_new_session=True)
    try:
        alive = wait_for_condition(lambda: cluster.named_actors_alive(run_ids[-1]), 120,
                                   interval=0.5, message="the run's named eval worker ALIVE")
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C (to pytest alone: as a CI timeout's SIGTERM)
    out, _ = proc.communicate(timeout=300)
    assert re.search(r"session end, cluster \S+: removed [1-9]\d* actor", out), out
    assert cluster.state()["actors"][alive[0]]["state"] == "DEAD"
    check_untouched_and_clean(cluster, user_work, run_ids)
