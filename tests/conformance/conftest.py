import pytest


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
