"""The scenario driver under coverage (``python -m conformance mutate coverage``).

Runs ``conformance.run.driver.main`` with coverage.py measuring ``impl/`` in the
driver, its threads and its peer (a fork, in a file of its own), the data file named after the
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

    from conformance.run import driver

    with open(request_path) as f:
        scenario_id = json.load(f)["scenario"]["id"]
    os.environ["RLC_COVERAGE_CONTEXT"] = scenario_id
    directory, include = os.environ["RLC_COVERAGE_DIR"], os.environ["RLC_COVERAGE_INCLUDE"]

    def measure():
        cov = coverage.Coverage(data_file=os.path.join(directory, ".coverage"),
                                data_suffix=f"driver.{os.getpid()}", include=[include],
                                context=scenario_id)
        cov.start()
        return cov

    cov = measure()

    def save():
        cov.stop()
        cov.save()

    atexit.register(save)  # first registered, last run: after Ray's and the impl's own
    real_exit = os._exit

    def in_the_peer():
        """The peer (a fork that runs the second driver, e.g. ``from_name``)
        measures into its own file and leaves by ``os._exit``: save first."""
        nonlocal cov
        cov.stop()
        atexit.unregister(save)
        cov = measure()

        def exit_saving(code):
            save()
            real_exit(code)

        os._exit = exit_saving

    os.register_at_fork(after_in_child=in_the_peer)
    return driver.main(request_path)
