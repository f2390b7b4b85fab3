"""The reference, except that a buffer's close() takes 1.5 s past a 1 s
teardown bound: in every run (``SLOW_EVERY_RUN``), or only in the first
run of the test's ``RLC_TEST_SLOW_MARK`` file (a busy machine's false alarm,
gone when the scenario is rerun alone). For ``test_rerun.py``."""
import os
import time

from conformance.adapters.reference import ReferenceAdapter


class SlowFirstTeardown(ReferenceAdapter):
    name = "slow-first-teardown"
    teardown_bound = 1.0

    def teardown(self, component: str, obj, shutdown_ray: bool = False) -> None:
        mark = os.environ["RLC_TEST_SLOW_MARK"]
        if component == "buffer" and (os.environ.get("SLOW_EVERY_RUN")
                                      or not os.path.exists(mark)):
            open(mark, "a").close()
            time.sleep(1.5)
        super().teardown(component, obj, shutdown_ray)
