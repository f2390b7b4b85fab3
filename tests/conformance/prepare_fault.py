"""A pytest plugin for ``pytest conformance -p tests.conformance.prepare_fault``:
every scenario's fixture fails to prepare, so each test fails before its
scenario has a verdict (``test_harness.py``)."""
from fixtures.session import SessionResources


def _fail(self, kind, address=None):
    raise RuntimeError(f"injected: the {kind} fixture could not be prepared")


def pytest_configure(config):
    SessionResources.prepare = _fail
