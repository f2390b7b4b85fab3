"""Loads the conformance plugin (its hooks and the ``conformance_session``
fixture) for ``pytest conformance``."""
pytest_plugins = ["conformance.plugin"]
