"""Fixtures for the reference implementation's tests: real local Ray only.

Ray needs these variables before it starts, in this process and in every
Ray worker (workers import ``impl`` and ``impl_support`` by module).
"""

import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ["RAY_AUTH_MODE"] = "disabled"
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(REPO), str(HERE), os.environ.get("PYTHONPATH", "")) if p
)
for path in (str(HERE), str(REPO)):
    if path not in sys.path:
        sys.path.insert(0, path)

import pytest  # noqa: E402
import ray  # noqa: E402

from impl_support import assert_no_ray_processes, live_actors, ray_temp_dir, wait_until  # noqa: E402


def pytest_configure(config):
    # Tests of a module share one Ray: keep each module on one xdist worker.
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadfile"


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(360))  # 3 components at READY_TIMEOUT each


def ray_init_kwargs() -> dict:
    """The only way tests start Ray: local, 4 CPUs, private short temp dir."""
    return dict(address="local", num_cpus=4, include_dashboard=False, _temp_dir=ray_temp_dir())


def _cleanup_temp_dir() -> None:
    shutil.rmtree(ray_temp_dir(), ignore_errors=True)


@pytest.fixture(scope="module")
def shared_ray():
    """One Ray for a whole module, for tests that never shut it down."""
    assert not ray.is_initialized()
    ray.init(**ray_init_kwargs())
    yield
    ray.shutdown()
    assert_no_ray_processes()
    _cleanup_temp_dir()


@pytest.fixture
def ray_session(shared_ray):
    """The shared Ray, checked for leaked actors after the test."""
    yield
    assert ray.is_initialized(), "the test shut down the module's shared Ray"
    if not wait_until(lambda: not live_actors(), timeout=5):
        pytest.fail(f"actors left alive after the test: {live_actors()}")


@pytest.fixture
def track():
    """``track(component)`` tears the component down after the test whatever
    happened (teardown never raises), so a failing test leaks nothing."""
    components = []
    yield lambda c: components.append(c) or c
    for c in components:
        (getattr(c, "shutdown", None) or c.close)(timeout=5)


@pytest.fixture
def own_ray():
    """No Ray at the start; the test may start and must end its own.

    Yields the ray.init kwargs to use (directly or as ray_init_config).
    """
    assert not ray.is_initialized()
    yield ray_init_kwargs()
    running = ray.is_initialized()
    if running:
        ray.shutdown()
    assert_no_ray_processes()
    _cleanup_temp_dir()
    assert not running, "the test left Ray running"
