import os
import sys
from pathlib import Path

import pytest

from fixtures.rayenv import REPO_ROOT

#: the mutation extra (cosmic-ray), off the venv's path (ci/setup.sh)
MUTATION_SITE = Path(sys.prefix) / "mutation-site"


@pytest.fixture
def cosmic_ray_path(monkeypatch):
    """cosmic-ray and our plugins on sys.path for the test (a failure where
    RLC_EXTRAS names mutation, as in .ci/run; else a skip)."""
    if not (MUTATION_SITE / "cosmic_ray").is_dir():
        if "mutation" in os.environ.get("RLC_EXTRAS", "").split(","):
            pytest.fail(f"RLC_EXTRAS names mutation but {MUTATION_SITE} has no cosmic_ray")
        pytest.skip("the mutation extra is not installed (RLC_EXTRAS=mutation bash ci/setup.sh)")
    monkeypatch.syspath_prepend(str(MUTATION_SITE))
    monkeypatch.syspath_prepend(str(REPO_ROOT / "conformance" / "mutation" / "plugins"))


@pytest.fixture(scope="module")
def session():
    """A zygote and clusters for this test module, torn down by pid."""
    from conformance.run.execute import preload_modules
    from fixtures.rayenv import RAY_ENV
    from conformance.adapters.registry import load_adapter
    from fixtures.session import SessionResources
    import os

    os.environ.update(RAY_ENV)
    s = SessionResources(preload=preload_modules(load_adapter("reference")))
    try:
        yield s
    finally:
        s.close()
