"""The zombie check of no_leftover_process: the worker of an actor Ray
reports DEAD gets a bounded grace while it is still exiting (at work on a
busy machine); one that only sleeps is a zombie actor."""
import subprocess
import sys
import time
from types import SimpleNamespace

from conformance.ops.budgets import SETTLE_SECONDS
from conformance.run.driver import zombie_pids

EXITING = "import time\nt = time.monotonic()\nwhile time.monotonic() - t < {}: pass"


def test_a_worker_still_exiting_is_no_zombie_one_that_sleeps_is():
    exiting = subprocess.Popen([sys.executable, "-c", EXITING.format(SETTLE_SECONDS + 3)])
    sleeping = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        ctx = SimpleNamespace(last_known={}, actors={"collector": [
            {"id": "exiting", "pid": exiting.pid}, {"id": "sleeping", "pid": sleeping.pid}]})
        dead = {"collector": {"exiting": {"state": "DEAD"}, "sleeping": {"state": "DEAD"}}}
        t0 = time.monotonic()
        assert zombie_pids(ctx, dead) == {"sleeping": sleeping.pid}
        assert exiting.poll() == 0  # it ended, within the grace
        assert time.monotonic() - t0 < SETTLE_SECONDS + 6
    finally:
        for proc in (exiting, sleeping):
            proc.kill()
            proc.wait()
