"""A Ray cluster started the way a user starts one, for the external tests.

``ray start --head`` and ``ray start --address`` worker nodes, all on
127.0.0.1, in a temp dir of its own, with token authentication as Ray 2.60
sets it up for a user who has a token: the token is generated into the
user's ``~/.ray/auth_token`` (a temporary HOME here, never the real one) and
``ray start --head`` then turns token auth on by itself. The suite does not
own this cluster: the tests stop it by the marker its processes carry.

What a loopback-only multi-node ``ray start`` cluster takes on Ray 2.60
(measured):

- a joining node needs ``RAY_AUTH_MODE=token`` (only the head turns it on
  from an existing token) and must not have
  ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (``ray start --address`` refuses);
- with clusters enabled, ``ray start`` rewrites ``127.0.0.1`` and
  ``localhost`` (as ``--address`` or ``--node-ip-address``) to the machine's
  outward address, and the node's raylet then listens on every interface. A
  host name that resolves to 127.0.0.1 only (here the machine's own name)
  is kept: the node's IP is then 127.0.0.1 and its raylet listens there.
- the nodes import ``impl`` and ``conformance`` (the actors of the reference
  and the suite's envs): PYTHONPATH is this clone, as a user's cluster has
  the implementation installed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid

import psutil

from fixtures import procs
from fixtures.raystart import free_ports, loopback_name

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RAY = os.path.join(os.path.dirname(sys.executable), "ray")
#: what the suite or a test run may have set, which a user's shell has not
NOT_THE_USERS = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS",
                 "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RLC_MARKER", "RLC_RUN_MARKER",
                 "RLC_RUN_ID", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT",
                 "PYTEST_CURRENT_TEST")


class UserCluster:
    """Head + ``workers`` nodes (2 CPUs each), stopped by ``stop()``.
    ``node_env``: more of the nodes' environment (e.g. their PATH and
    PYTHONPATH: the Python env they run with)."""

    def __init__(self, workers: int = 1, node_env: dict | None = None):
        self.marker = f"rlcuser-{uuid.uuid4().hex[:6]}"
        self.root = f"/tmp/{self.marker}"  # short: Ray's socket paths live below it
        self.home = os.path.join(self.root, "home")
        self.token_path = os.path.join(self.home, ".ray", "auth_token")
        self.workers = workers
        self.node_env = dict(node_env or {})
        self.port = None
        self.dashboard_port = None

    @property
    def address(self) -> str:
        """For the suite (which keeps Ray on 127.0.0.1: RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0)."""
        return f"127.0.0.1:{self.port}"

    @property
    def dashboard_address(self) -> str:
        """The head's dashboard: Ray's job server, where its Ray has ray[default]."""
        return f"http://127.0.0.1:{self.dashboard_port}"

    @property
    def user_address(self) -> str:
        """For a user's own driver or node (Ray's defaults would rewrite 127.0.0.1)."""
        return f"{loopback_name()}:{self.port}"

    def user_env(self, **extra) -> dict:
        """The environment of the user's own shell: their HOME (with the
        token), nothing of the suite's."""
        env = {k: v for k, v in os.environ.items() if k not in NOT_THE_USERS}
        env.update({"HOME": self.home, "PYTHONPATH": REPO, "RAY_USAGE_STATS_ENABLED": "0",
                    **extra})
        return env

    def _node_env(self, node: str, **extra) -> dict:
        # SPT_NOENV: keep the environ block (and the marker in it) readable
        # after Ray's setproctitle
        return self.user_env(**{"RLC_MARKER": f"{self.marker}:{node}", "SPT_NOENV": "1",
                                **self.node_env, **extra})

    def _ray(self, node: str, args: list, env: dict) -> None:
        log = os.path.join(self.root, f"{node}.log")
        with open(log, "w") as out:
            done = subprocess.run([RAY, *args], env=env, stdout=out, stderr=subprocess.STDOUT,
                                  timeout=120, check=False)
        if done.returncode != 0:
            with open(log) as f:
                raise RuntimeError(f"ray {' '.join(args[:2])} ({node}) exited "
                                   f"{done.returncode}:\n{f.read()[-3000:]}")

    def start(self) -> "UserCluster":
        os.makedirs(self.home)
        self._ray("token", ["get-auth-token", "--generate"], self._node_env("token"))
        self.port, *ports = free_ports(6)
        self.dashboard_port = ports[0]
        self._ray("head", [
            "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(self.port),
            "--dashboard-host", "127.0.0.1", "--dashboard-port", str(ports[0]),
            "--dashboard-agent-listen-port", str(ports[1]),
            "--dashboard-agent-grpc-port", str(ports[2]), "--runtime-env-agent-port",
            str(ports[3]), "--metrics-export-port", str(ports[4]),
            "--temp-dir", os.path.join(self.root, "ray"), "--num-cpus", "2",
            "--disable-usage-stats"], self._node_env("head", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0"))
        for i in range(self.workers):
            ports = free_ports(4)
            self._ray(f"worker{i}", [
                "start", "--address", self.user_address,
                "--dashboard-agent-listen-port", str(ports[0]),
                "--dashboard-agent-grpc-port", str(ports[1]),
                "--runtime-env-agent-port", str(ports[2]), "--metrics-export-port", str(ports[3]),
                "--num-cpus", "2", "--resources", f'{{"worker{i}": 1}}',
                "--disable-usage-stats"], self._node_env(f"worker{i}", RAY_AUTH_MODE="token"))
        return self

    def processes(self) -> list:
        return procs.find_marked(self.marker)

    def not_on_loopback(self) -> list:
        """Listening sockets of the cluster's processes bound elsewhere than 127.0.0.1."""
        found = []
        for proc in self.processes():
            try:
                for conn in proc.net_connections(kind="inet"):
                    if conn.status == psutil.CONN_LISTEN and conn.laddr.ip not in (
                            "127.0.0.1", "::ffff:127.0.0.1"):
                        found.append((proc.pid, proc.name(), conn.laddr.ip, conn.laddr.port))
            except psutil.Error:
                continue
        return found

    def state(self) -> dict:
        """What the cluster's GCS holds: ``{"jobs": [...], "actors": {id: record}}``,
        read in a process of the user's (token mode: a test process keeps its
        own Ray config)."""
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "state", self.address],
                              env=self.user_env(RAY_AUTH_MODE="token"), capture_output=True,
                              text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"reading the cluster's state failed:\n{done.stderr[-3000:]}")
        return json.loads(done.stdout)

    def named_actors_alive(self, run_id: str) -> list:
        """Ids of the named actors ALIVE in the suite's namespace of run ``run_id``."""
        namespace = f"rlc-conformance-{run_id}"
        return [aid for aid, rec in self.state()["actors"].items()
                if rec["namespace"] == namespace and rec["name"] and rec["state"] == "ALIVE"]

    def job_processes(self) -> dict:
        """{pid: (job id, command)} of the cluster's Ray workers (Ray puts
        RAY_JOB_ID in a worker's environment)."""
        found = {}
        for proc in self.processes():
            try:
                job = proc.environ().get("RAY_JOB_ID")
                if job:
                    found[proc.pid] = (job, " ".join(proc.cmdline())[:80])
            except psutil.Error:
                continue
        return found

    def stop(self) -> list:
        """Kill every process of the cluster (by its marker); the ones killed."""
        killed = procs.kill_marked(self.marker, grace=2.0)
        procs.reap_zombie_children()
        shutil.rmtree(self.root, ignore_errors=True)
        return killed


def _print_state(address: str) -> None:
    sys.path.insert(0, REPO)
    from fixtures.gcs import GcsObserver

    observer = GcsObserver(address)
    print(json.dumps({"jobs": observer.jobs(), "actors": observer.all_actors()}))


if __name__ == "__main__":
    _print_state(sys.argv[2])
