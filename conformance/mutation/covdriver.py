"""The scenario driver under coverage (``python -m conformance mutate coverage``).

Runs ``conformance.driver.main`` with coverage.py measuring ``impl/`` in the
driver and its threads (not in its peer, a fork), the data file named after the
driver's pid, the scenario id as the coverage context. The id also goes to
the environment, so that the Ray processes a ``local`` driver starts (its
raylet, then its workers) carry it (``covhook/sitecustomize.py``).
"""
from __future__ import annotations

import atexit
import json
import os


def main(request_path: str) -> int:
    import coverage

    from conformance import driver

    with open(request_path) as f:
        scenario_id = json.load(f)["scenario"]["id"]
    os.environ["RLC_COVERAGE_CONTEXT"] = scenario_id
    cov = coverage.Coverage(
        data_file=os.path.join(os.environ["RLC_COVERAGE_DIR"], ".coverage"),
        data_suffix=f"driver.{os.getpid()}", include=[os.environ["RLC_COVERAGE_INCLUDE"]],
        context=scenario_id)
    cov.start()

    def save():
        cov.stop()
        cov.save()

    atexit.register(save)  # first registered, last run: after Ray's and the impl's own

    def not_in_the_peer():  # a fork would write the driver's data file too
        cov.stop()
        atexit.unregister(save)

    os.register_at_fork(after_in_child=not_in_the_peer)
    return driver.main(request_path)
