"""conformance.envs:RlcHelperProcessCartPole-v0, the env of the ``env_helper``
family: its helper is a daemon (a session of its own, as a server a launch
script starts), which only the env's close() stops, and close() never
signals a process that is not its helper; and the slow-closing envs. No Ray."""
import os
import signal
import subprocess
import sys

import gymnasium as gym
import pytest

from conformance import envs
from fixtures.wait import wait_for_condition


def _kill_if_helper(pid, key):
    """Stop the test's own helper if it still runs (never a process reusing its pid)."""
    if envs._is_helper(pid, key):
        os.kill(pid, signal.SIGKILL)


def test_close_stops_the_daemon_helper():
    env = gym.make(envs.HELPER_ENV_ID)
    pid, key = env.unwrapped.helper_pid, env.unwrapped.helper_key
    try:
        assert envs._is_helper(pid, key)
        assert os.getsid(pid) == pid  # a daemon: Ray's kill of the actor would not reach it
        env.close()
        wait_for_condition(lambda: not envs._is_helper(pid), timeout=5,
                           message=f"the helper (pid {pid}) still runs after close()")
    finally:
        _kill_if_helper(pid, key)


@pytest.mark.parametrize("stranger_cmd", [
    [sys.executable, "-c", "import time; time.sleep(60)"],  # any process
    [sys.executable, "-c", "import time; time.sleep(60)", envs.HELPER_TAG],  # another helper
])
def test_close_never_signals_another_process_that_holds_the_helpers_pid(stranger_cmd):
    env = gym.make(envs.HELPER_ENV_ID)
    helper, key = env.unwrapped.helper_pid, env.unwrapped.helper_key
    stranger = subprocess.Popen(stranger_cmd)
    try:
        env.unwrapped.helper_pid = stranger.pid  # the helper gone, its pid reused
        env.close()
        with pytest.raises(subprocess.TimeoutExpired):  # still running: close() checked
            stranger.wait(timeout=1)
    finally:
        stranger.kill()
        stranger.wait()
        _kill_if_helper(helper, key)


def test_the_slow_close_takes_its_seconds_then_stops_the_helper():
    import time

    env = gym.make(envs.SLOW_CLOSE_HELPER_ENV_ID)
    pid, key = env.unwrapped.helper_pid, env.unwrapped.helper_key
    try:
        t0 = time.monotonic()
        env.close()
        took = time.monotonic() - t0
        assert took >= envs.CLOSE_SECONDS, took  # a kill before this leaves the helper running
        wait_for_condition(lambda: not envs._is_helper(pid), timeout=5,
                           message=f"the helper (pid {pid}) still runs after the slow close()")
    finally:
        _kill_if_helper(pid, key)


def test_the_slow_close_env_without_a_helper_takes_its_seconds():
    """async_teardown's ``-slow-close`` env: a teardown that closes it lasts
    CLOSE_SECONDS at least, so a coroutine that returns sooner had not finished."""
    import time

    env = gym.make(envs.SLOW_CLOSE_ENV_ID)
    assert not hasattr(env.unwrapped, "helper_pid")  # usable on any fixture
    env.reset(seed=0)
    t0 = time.monotonic()
    env.close()
    assert time.monotonic() - t0 >= envs.CLOSE_SECONDS
