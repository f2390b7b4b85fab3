"""Loads the conformance plugin for ``pytest conformance``."""
from conformance.plugin import *  # noqa: F401,F403 - pytest hooks
from conformance.plugin import conformance_session  # noqa: F401 - the fixture
