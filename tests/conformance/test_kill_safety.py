"""A fault never hits the harness: the kill op signals only a live Ray worker."""
import os
import subprocess

import pytest

from conformance.ops.verbs import HarnessError, check_signalable


@pytest.mark.parametrize("pid", [0, 1, -1, None])
def test_no_signal_to_a_process_group_or_init(pid):
    with pytest.raises(HarnessError, match="refusing to signal pid"):
        check_signalable(pid)


def test_no_signal_to_the_driver_or_its_group():
    with pytest.raises(HarnessError, match="the driver itself or its process group"):
        check_signalable(os.getpid())
    with pytest.raises(HarnessError, match="the driver itself or its process group"):
        check_signalable(os.getpgrp())


def test_no_signal_to_a_process_that_is_not_a_ray_worker():
    import psutil

    from fixtures.wait import wait_for_condition

    proc = subprocess.Popen(["sleep", "30"])
    try:  # its command line is empty while it execs (seen under load)
        wait_for_condition(lambda: psutil.Process(proc.pid).cmdline() == ["sleep", "30"], 10)
        with pytest.raises(HarnessError, match="not a Ray worker"):
            check_signalable(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    with pytest.raises(HarnessError, match="is not running"):
        check_signalable(proc.pid)


@pytest.mark.parametrize("kind", ["external", "local"])
def test_no_node_removal_off_the_suites_own_cluster(kind):
    from types import SimpleNamespace

    from conformance.ops.scenario import Op
    from conformance.ops.verbs import kill

    ctx = SimpleNamespace(fixture={"kind": kind, "nodes": []}, running_op=None)
    with pytest.raises(HarnessError, match=f"refusing to remove a node of the {kind} fixture"):
        kill(ctx, Op("kill", "buffer", {"how": "remove_node"}))
