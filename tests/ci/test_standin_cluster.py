"""``fixtures.raystart``: the stand-in for the multinode fixture that
``upstream --check`` starts for a multinode scenario's script. No Ray here:
``ray start`` is a fake (``popen``), or a plain Python that leaves a process
running in its session, as ``ray start`` leaves its node's."""
import json
import subprocess
import sys

import psutil
import pytest

from fixtures import procs, raystart
from fixtures.clusters import MultinodeCluster
from fixtures.raystart import AGENT_PORTS, ClusterStartFailed, RayStartCluster
from fixtures.rayenv import REPO_ROOT

PY = "/release/venv/bin/python"


class FakeProc:
    def __init__(self, pid, code):
        self.pid, self.code = pid, code

    def wait(self, timeout=None):
        return self.code


class FakePopen:
    """Records each start; the node named in ``fail`` exits 1; the wait for
    the nodes prints ``nodes`` (default: every node on 127.0.0.1)."""

    def __init__(self, fail=None, nodes=None):
        self.calls, self.fail, self.nodes = [], fail, nodes
        self.pids = iter(range(4_000_001, 4_000_100))

    def __call__(self, argv, env, cwd, stdin, stdout, stderr, start_new_session):
        self.calls.append({"argv": argv, "env": env, "cwd": cwd, "new_session": start_new_session})
        if argv[2] == "fixtures.gcs":
            count = int(argv[4])
            nodes = self.nodes or [{"address": f"127.0.0.1:{5000 + k}", "alive": True}
                                   for k in range(count)]
            stdout.write(json.dumps(nodes) + "\n")
            return FakeProc(next(self.pids), 0)
        failing = self.fail is not None and f'{{"{self.fail}": 100}}' in argv
        stdout.write("Ray runtime started.\n" if not failing else "boom: no such flag\n")
        return FakeProc(next(self.pids), 1 if failing else 0)


@pytest.fixture
def stopped(monkeypatch):
    """The sessions ``procs.kill_session`` was asked to stop, in order."""
    asked = []
    monkeypatch.setattr(procs, "kill_session", lambda sid, grace=1.0: asked.append(sid) or [])
    monkeypatch.setattr(raystart, "loopback_name", lambda: "rlc-loopback")
    return asked


def _flag(argv, flag):
    return argv[argv.index(flag) + 1]


def test_the_stand_in_is_the_multinode_fixture_s_nodes_on_127_0_0_1(tmp_path, stopped,
                                                                     monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.9:6379")
    popen = FakePopen()
    cluster = RayStartCluster(PY, str(tmp_path), popen=popen).start()
    head, node_a, node_b, wait = popen.calls
    port = str(cluster.port)
    assert cluster.address == f"127.0.0.1:{port}"
    # the release's own Ray, each node's `ray start` in a session of its own
    assert all(c["argv"][:4] == [PY, "-m", "ray.scripts.scripts", "start"]
               for c in (head, node_a, node_b))
    assert all(c["new_session"] for c in popen.calls)
    # the head: on 127.0.0.1 at a free port, no dashboard
    assert head["argv"][4] == "--head" and _flag(head["argv"], "--node-ip-address") == "127.0.0.1"
    assert _flag(head["argv"], "--port") == port and "--include-dashboard=false" in head["argv"]
    assert head["env"]["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"
    # node_a / node_b join through the loopback host name (ray start refuses to
    # join with clusters disabled and rewrites 127.0.0.1 when they are enabled)
    for call, name in ((node_a, "node_a"), (node_b, "node_b")):
        assert _flag(call["argv"], "--address") == f"rlc-loopback:{port}"
        assert "--node-ip-address" not in call["argv"] and "--head" not in call["argv"]
        assert json.loads(_flag(call["argv"], "--resources")) == \
            MultinodeCluster.NODE_ARGS[name]["resources"]
        assert call["env"]["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "1"
    # the fixture's layout: CPUs per node; the object store cluster_utils gives
    for call, name in ((head, "head"), (node_a, "node_a"), (node_b, "node_b")):
        layout = MultinodeCluster.NODE_ARGS[name]
        assert _flag(call["argv"], "--num-cpus") == str(layout["num_cpus"])
        assert _flag(call["argv"], "--object-store-memory") == str(150 * 1024 * 1024)
        assert _flag(call["argv"], "--num-gpus") == "0"  # as cluster_utils' nodes
        assert call["cwd"] == str(tmp_path)  # not the clone: ray start's sys.path
        env = call["env"]
        assert env["RAY_TMPDIR"] == str(tmp_path) and env["RAY_AUTH_MODE"] == "disabled"
        assert "PYTHONPATH" not in env and "RAY_ADDRESS" not in env  # not the project's, a user's
    # every agent of every node on a port of its own
    ports = [int(_flag(c["argv"], f)) for c in (head, node_a, node_b) for f in AGENT_PORTS]
    ports += [int(port), int(_flag(head["argv"], "--dashboard-port"))]
    assert len(set(ports)) == len(ports) == 3 * len(AGENT_PORTS) + 2
    assert "--ray-client-server-port" not in head["argv"]  # refused without ray[client]
    # then a wait until the GCS has the three alive, with the release's Ray
    assert wait["argv"] == [PY, "-m", "fixtures.gcs", cluster.address, "3"]
    assert wait["env"]["PYTHONPATH"] == str(REPO_ROOT)
    assert stopped == []  # nothing stopped while it runs
    assert "node_a num_cpus=2 resources={\"node_a\": 100}" in cluster.describe()


def test_stop_targets_only_the_sessions_it_started(tmp_path, stopped):
    popen = FakePopen()
    with RayStartCluster(PY, str(tmp_path), popen=popen):
        assert stopped == []
    started = [4_000_001, 4_000_002, 4_000_003, 4_000_004]  # head, node_a, node_b, the wait
    assert stopped == started[::-1]  # the last first
    cluster = RayStartCluster(PY, str(tmp_path), popen=popen)
    assert cluster.stop() == [] and stopped == started[::-1]  # never started: nothing to stop


def test_a_node_that_does_not_start_fails_the_start_and_what_started_is_stopped(tmp_path,
                                                                                 stopped):
    popen = FakePopen(fail="node_a")
    with pytest.raises(ClusterStartFailed) as failed:
        RayStartCluster(PY, str(tmp_path), popen=popen).start()
    assert "node_a" in str(failed.value) and "exited 1" in str(failed.value)
    assert "boom: no such flag" in str(failed.value) and "\n" not in str(failed.value)
    assert len(popen.calls) == 2  # node_b never started, nor the wait
    assert stopped == [4_000_002, 4_000_001]  # node_a's session, then the head's


def test_a_node_away_from_127_0_0_1_fails_the_start(tmp_path, stopped):
    away = [{"address": "127.0.0.1:5000", "alive": True}, {"address": "10.0.0.5:5001",
                                                            "alive": True}]
    with pytest.raises(ClusterStartFailed, match="not on 127.0.0.1: 10.0.0.5:5001"):
        RayStartCluster(PY, str(tmp_path), popen=FakePopen(nodes=away)).start()
    assert len(stopped) == 4


def test_a_host_name_not_only_on_loopback_starts_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(raystart.socket, "gethostbyname_ex",
                        lambda name: (name, [], ["127.0.1.1"]))
    popen = FakePopen()
    with pytest.raises(ClusterStartFailed, match="resolves to"):
        RayStartCluster(PY, str(tmp_path), popen=popen).start()
    assert popen.calls == []


# A `ray start` stand-in: it leaves a process running in its session and exits 0.
NODE = ("import subprocess, sys; subprocess.Popen([sys.executable, '-c', "
        "'import time; time.sleep(600)']); print('Ray runtime started.')")


def test_stop_ends_what_the_nodes_left_running_and_nothing_else(tmp_path, monkeypatch):
    """Real processes: each "node" leaves one running in its session (as
    `ray start` leaves its node's); stop() ends exactly those, not a
    process of another session."""
    monkeypatch.setattr(raystart, "loopback_name", lambda: "rlc-loopback")

    def popen(argv, **kwargs):
        if argv[2] == "fixtures.gcs":
            nodes = [{"address": "127.0.0.1:1", "alive": True}] * int(argv[4])
            return subprocess.Popen([sys.executable, "-c", f"print({json.dumps(nodes)!r})"],
                                    **kwargs)
        return subprocess.Popen([sys.executable, "-c", NODE], **kwargs)

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                             start_new_session=True)
    cluster = RayStartCluster(sys.executable, str(tmp_path), popen=popen)
    try:
        cluster.start()
        sessions = list(cluster.sessions)
        left = [p.pid for sid in sessions for p in procs.find_session(sid)]
        assert len(left) == 3  # one per node; the wait left nothing
        stopped = cluster.stop()
        assert sorted(p["pid"] for p in stopped) == sorted(left)
        assert not [p for sid in sessions for p in procs.find_session(sid)]
        assert procs.is_alive(psutil.Process(other.pid))  # not the cluster's: untouched
    finally:
        cluster.stop()  # whatever an assertion above left running
        other.kill()
        other.wait()


def test_a_start_that_fails_in_an_unforeseen_way_is_a_failed_start(tmp_path, monkeypatch):
    """The wait's output not the node table (a warning after it), for one:
    a failed start ("not checked"), never another error, and what started
    is stopped."""
    monkeypatch.setattr(raystart, "loopback_name", lambda: "rlc-loopback")

    def popen(argv, **kwargs):
        text = "[]\nWARNING: something" if argv[2] == "fixtures.gcs" else ""
        return subprocess.Popen([sys.executable, "-c", f"print({text!r})"], **kwargs)

    cluster = RayStartCluster(sys.executable, str(tmp_path), popen=popen)
    with pytest.raises(ClusterStartFailed, match="JSONDecodeError"):
        cluster.start()
    assert cluster.sessions == []


def test_no_such_python_is_a_failed_start(tmp_path, stopped):
    with pytest.raises(ClusterStartFailed, match="head: .*No such file"):
        RayStartCluster("/no/such/python", str(tmp_path)).start()
    assert stopped == []


def test_the_wait_returns_the_node_table_once_every_node_is_alive(monkeypatch):
    """``python -m fixtures.gcs ADDRESS COUNT``: a node's ``ray start``
    returns before its raylet registered."""
    from fixtures import gcs

    tables = iter([[], [{"alive": True}, {"alive": False}], [{"alive": True}] * 3])
    monkeypatch.setattr(gcs.GcsObserver, "nodes", lambda self: next(tables))
    assert gcs.wait_for_nodes("127.0.0.1:1", 3, timeout=10) == [{"alive": True}] * 3
