"""What a driver leaves on a cluster that outlives it is removed for good:
an actor with ``max_restarts`` comes back after a SIGKILL, so the check
after the removal waits for it to stay DEAD, and a detached actor whose
handle the driver recorded is killed with ``no_restart=True``."""
import os
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from conformance.cluster.after_exit import actors_after_exit
from conformance.run.execute import cleanup_env
from fixtures.rayenv import REPO_ROOT
from fixtures.session import SessionResources

DRIVER = textwrap.dedent("""
    import json, os
    import ray
    from conformance.run.driver import pickled_handle
    ray.init(address=os.environ["RAY_ADDRESS"])

    @ray.remote(num_cpus=0, max_restarts=-1)
    class Stays:
        def pid(self):
            return os.getpid()

    kept, recorded = [Stays.options(lifetime="detached").remote() for _ in range(2)]
    ray.get([kept.pid.remote(), recorded.pid.remote()])
    print(json.dumps({"job": ray.get_runtime_context().get_job_id(),
                      "kept": kept._actor_id.hex(), "recorded": recorded._actor_id.hex(),
                      "handle": pickled_handle(recorded)}), flush=True)
""")


@pytest.fixture(scope="module")
def cluster():
    session = SessionResources(marker=f"rlctest-ae{uuid.uuid4().hex[:6]}")
    try:
        yield session, session.cluster("multinode")
    finally:
        session.close()


def test_a_restarting_actor_is_never_taken_for_removed(cluster, tmp_path, monkeypatch):
    import json

    from conformance.cluster import cleanup
    from fixtures.wait import poll

    monkeypatch.setattr(cleanup, "DEAD_WAIT", 3.0)  # a restart takes under a second here
    session, multinode = cluster
    info = multinode.info()
    since = time.time()
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, cwd=tmp_path,
                              env={**os.environ, **multinode.driver_env(),
                                   "PYTHONPATH": str(REPO_ROOT)})
    out, _ = driver.communicate(timeout=120)
    left = json.loads(out.strip().splitlines()[-1])
    result = actors_after_exit(info, {"jobs": [left["job"]]}, [driver.pid], since, time.time(),
                               cleanup_env(session, multinode), str(tmp_path / "cleanup"),
                               {left["recorded"]: left["handle"]})
    assert set(result["actors"]) == {left["kept"], left["recorded"]}  # both outlived it
    # killed for good through its recorded handle
    assert "ray.kill through the handle its driver recorded" in result["removed"][left["recorded"]]
    # SIGKILLed, it came back each time: reported left, with why
    assert result["left"] == {left["kept"]: "ALIVE"}
    assert "it came back each time (restarted: max_restarts)" in result["how_left"][left["kept"]]
    observer = multinode.observer()

    def state(aid):
        return observer.actor_states([aid])[aid]["state"]
    # it stays DEAD (a restart would show within a second)
    assert poll(lambda: state(left["recorded"]), lambda s: s != "DEAD", 3.0) == "DEAD"
    assert state(left["kept"]) == "ALIVE"  # the cluster fixture's close removes it
