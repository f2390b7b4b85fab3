"""Interpreter exit with a collector still collecting in its background thread.

A thread inside a Ray call while Ray's atexit shutdown destroys the core
worker crashes the process (SIGSEGV, seen in the suite's
``exit/multinode/impl/background-running``). The collector is torn down at
interpreter exit before any atexit handler runs, Ray's shutdown included.
"""

import json
import subprocess
import sys
import textwrap

from conftest import REPO, ray_init_kwargs
from impl_support import READY_TIMEOUT, assert_no_ray_processes

SCRIPT = f"READY_TIMEOUT = {READY_TIMEOUT!r}\n" + textwrap.dedent("""
    import atexit, json, sys, time
    import ray
    from impl import RayCollector, RayReplayBuffer

    ray.init(**json.loads(sys.argv[1]))
    buffer = RayReplayBuffer(1000, remote_config={"num_cpus": 0.5}, ready_timeout=READY_TIMEOUT)
    collector = RayCollector("CartPole-v1", frames_per_batch=16, replay_buffer=buffer,
                             remote_configs={"num_cpus": 0.5}, ready_timeout=READY_TIMEOUT)
    collector.start()
    while len(buffer) < 32:
        time.sleep(0.05)

    def report():  # registered last among atexit handlers: runs first of them
        with open(sys.argv[2], "w") as f:
            json.dump({"closed": collector._closed_reason, "thread": collector._thread.is_alive(),
                       "ray": ray.is_initialized()}, f)

    atexit.register(report)
""")


def test_a_working_collector_is_torn_down_before_the_atexit_handlers(tmp_path):
    out = tmp_path / "state.json"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(ray_init_kwargs()), str(out)],
                          cwd=REPO, capture_output=True, text=True,
                          timeout=READY_TIMEOUT * 2 + 60)  # two components built
    assert proc.returncode == 0, proc.stderr[-3000:]
    state = json.loads(out.read_text())
    assert state == {"closed": "interpreter exit", "thread": False, "ray": True}
    assert "Traceback" not in proc.stderr
    assert_no_ray_processes()
