"""Fixtures of the adapters' real tests: one local Ray (address "local",
2 CPUs, the test module's private temp dir ``TMP``).

``ray_env`` (module scope): the environment for Ray and its workers; at its
end Ray is shut down and no process of ours may remain. ``local_ray``: Ray
up, started again if a teardown shut it down.
"""
import os
import shutil
from pathlib import Path

import pytest
import ray

from fixtures.wait import poll
from tests.adapters.local_ray import ray_processes

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ray_env(request):
    """Env for Ray (this process and its workers); at the end, no Ray left.
    The module's ``TMP`` names the Ray temp dir."""
    tmp = request.module.TMP
    assert not ray.is_initialized()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        mp.setenv("RAY_AUTH_MODE", "disabled")
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        mp.setenv("RAY_TMPDIR", tmp)
        mp.delenv("RAY_ADDRESS", raising=False)
        mp.setenv("PYTHONPATH", os.pathsep.join(
            p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))
        yield tmp
        ray.shutdown()
    left = poll(lambda: ray_processes(tmp), lambda found: not found, 15, interval=0.2)
    for p in left:  # ours: started by this process
        p.kill()
    shutil.rmtree(tmp, ignore_errors=True)
    assert not left, f"Ray processes left behind: {[(p.pid, p.name()) for p in left]}"


@pytest.fixture
def local_ray(ray_env):
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, include_dashboard=False, _temp_dir=ray_env)
