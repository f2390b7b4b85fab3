"""conformance.envs:RlcHelperProcessCartPole-v0, the env of the ``env_helper``
family: its helper is a daemon (a session of its own, as a server a launch
script starts), which only the env's close() stops, and close() never
signals a process that is not its helper. No Ray."""
import os
import signal
import subprocess
import sys

import gymnasium as gym

from conformance import envs
from fixtures.wait import wait_for_condition


def test_close_stops_the_daemon_helper():
    env = gym.make(envs.HELPER_ENV_ID)
    pid = env.unwrapped.helper_pid
    assert envs._is_helper(pid)
    assert os.getsid(pid) == pid  # a daemon: Ray's kill of the actor would not reach it
    env.close()
    wait_for_condition(lambda: not envs._is_helper(pid), timeout=5,
                       message=f"the helper (pid {pid}) still runs after close()")


def test_close_never_signals_a_stranger_that_holds_the_helpers_pid():
    env = gym.make(envs.HELPER_ENV_ID)
    helper = env.unwrapped.helper_pid
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        env.unwrapped.helper_pid = stranger.pid  # the helper gone, its pid reused
        env.close()
        assert stranger.poll() is None  # still running: close() checked whose pid it was
    finally:
        stranger.kill()
        stranger.wait()
        os.kill(helper, signal.SIGKILL)
