"""Gymnasium environments the catalog uses to put a call inside Ray on purpose,
to make that call hang, or to make it fail.

``conformance.envs:RlcSlowCartPole-v0`` is CartPole whose ``step`` sleeps
``STEP_SECONDS``: a batch of ``frames_per_batch`` frames then takes
``frames_per_batch * STEP_SECONDS`` inside the actor, so a scenario that races
a teardown, a ``ray.shutdown()``, a kill or the interpreter exit against a
collector's call finds that call in flight every time, not by chance. The
``module:id`` form makes ``gymnasium.make`` import this module (and register
the env) in whatever process builds it, Ray workers included; it imports
nothing but gymnasium.

``RlcHelperProcessCartPole-v0`` is CartPole that starts a helper process
and stops it in ``close()``, as simulators with a server or a renderer
beside them do: a component that kills its actors without closing their
envs leaves the helper running. ``RlcSlowCloseHelperCartPole-v0``'s
``close()`` takes 1.5 s before it stops its helper.

``RlcHangableCartPole-v0`` is the slow CartPole that the harness can make
hang in the middle of a call (``kill(how=step_hang)``): its next step never
returns. ``RlcFailingCartPole-v0`` raises from step ``FAIL_AT_STEP`` on: a
batch that fails midway.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import gymnasium as gym
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

#: seconds one step sleeps: a 64-frame batch takes 3.2 s (a CartPole step
#: alone takes ~20 us here, measured)
STEP_SECONDS = 0.05
SLOW_ENV_ID = "conformance.envs:RlcSlowCartPole-v0"
#: seconds one step of the very slow env sleeps: a 64-frame batch takes
#: 12.8 s, longer than any graceful wait a teardown may take (the suite's
#: 10 s teardown bound; torchrl 0.14.1's shutdown() joins its thread for 5 s)
LONG_STEP_SECONDS = 0.2
LONG_BATCH_ENV_ID = "conformance.envs:RlcVerySlowCartPole-v0"
HANGABLE_ENV_ID = "conformance.envs:RlcHangableCartPole-v0"
FAILING_ENV_ID = "conformance.envs:RlcFailingCartPole-v0"
#: the envs whose episodes never terminate (SlowCartPole's): an evaluation
#: in one runs its whole step budget, or to its TimeLimit
NEVER_TERMINATE = (SLOW_ENV_ID, LONG_BATCH_ENV_ID, HANGABLE_ENV_ID, FAILING_ENV_ID)
#: the failing env's first failing step, counted from its creation across
#: resets: with 64-frame batches (2 actors, async) each actor's first batch
#: is whole and its second fails at its 36th frame; with sync 32-frame
#: shares, the fourth round fails at its 4th frame
FAIL_AT_STEP = 100
#: what the failing env's error says (``conformance.judge.oracles.CAUSES`` looks
#: for it in the error a user gets: tests/conformance/test_oracles.py checks
#: the two agree)
FAILURE_TEXT = "fails on purpose"
#: where the harness asks a process's hangable env to hang: a file named
#: after the process (pid and start time: one process for good), which the
#: env removes when it hangs, leaving ``<flag>.hung`` as its answer. Every
#: fixture that can ask runs its nodes on this machine (local, multinode).
FLAG_DIR = f"/tmp/rlc-env-flags-{os.getuid()}"


HELPER_ENV_ID = "conformance.envs:RlcHelperProcessCartPole-v0"
#: the last word of a helper process's command line: a leftover one is named by it
HELPER_TAG = "rlc-env-helper"
SLOW_CLOSE_HELPER_ENV_ID = "conformance.envs:RlcSlowCloseHelperCartPole-v0"
SLOW_CLOSE_ENV_ID = "conformance.envs:RlcSlowCloseCartPole-v0"
#: seconds the slow-closing helper env's close() takes before it stops its
#: helper: more than a second, less than half the bound its scenarios give
#: (``catalog.families.env_helpers``)
CLOSE_SECONDS = 1.5
#: seconds a helper lives if nothing stops it (the harness kills a leftover
#: one when its driver's run ends: fixtures.runner.collect_leftovers)
HELPER_LIFETIME = 600


def process_key(pid: int) -> str:
    """``<pid>-<start time>``: the start time in clock ticks since boot
    (``/proc/<pid>/stat`` field 22) tells a reused pid apart."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return f"{pid}-{fields[19]}"  # fields[0] is field 3 (the state)


def hang_flag(pid: int) -> str:
    """The file that makes process ``pid``'s hangable env hang at its next step."""
    return os.path.join(FLAG_DIR, process_key(pid))


class SlowCartPole(CartPoleEnv):
    """CartPole whose every step takes at least ``step_seconds`` and whose
    episodes never terminate (a fallen pole is set up again): an evaluation
    episode lasts its whole step budget (50 steps: 2.5 s), where a random
    policy would end it after ~20 steps."""

    def __init__(self, step_seconds: float = STEP_SECONDS, **kwargs):
        super().__init__(**kwargs)
        self.step_seconds = step_seconds

    def step(self, action):
        time.sleep(self.step_seconds)
        obs, reward, terminated, truncated, info = super().step(action)
        if terminated:
            obs, _ = self.reset()
        return obs, reward, False, truncated, info


class HangableCartPole(SlowCartPole):
    """The slow CartPole, whose step hangs for good once the harness has
    written its process's flag (:func:`hang_flag`): a call in flight (an
    episode, a batch) then never returns, while the actor's other threads
    (a liveness ping) still answer."""

    _flag: tuple | None = None  # (pid, flag path), computed in the process that steps

    def step(self, action):
        if self._flag is None or self._flag[0] != os.getpid():
            self._flag = (os.getpid(), hang_flag(os.getpid()))
        flag = self._flag[1]
        if os.path.exists(flag):
            with open(flag + ".hung", "w"):
                pass  # the harness's evidence that a step is stuck now
            os.remove(flag)
            while True:
                time.sleep(3600)  # until the actor is killed
        return super().step(action)


class FailingCartPole(SlowCartPole):
    """CartPole that raises from step ``fail_at`` on (steps counted from its
    creation, across resets), without any sleep: a batch fails midway."""

    def __init__(self, fail_at: int = FAIL_AT_STEP, **kwargs):
        super().__init__(step_seconds=0.0, **kwargs)
        self.fail_at = fail_at
        self.steps = 0

    def step(self, action):
        self.steps += 1
        if self.steps >= self.fail_at:
            # two lines, as many libraries' errors are (what went wrong, then a hint): a
            # summary of the error that quotes one line must quote the first
            raise RuntimeError(f"RlcFailingCartPole-v0: step {self.steps} {FAILURE_TEXT} "
                               f"(it fails from step {self.fail_at} on)\n"
                               "This env is the conformance suite's own (conformance.envs); "
                               "the scenario asked for it.")
        return super().step(action)


#: starts the helper as a daemon (a session of its own, its launcher gone)
#: and prints its pid
_LAUNCHER = (
    "import subprocess, sys\n"
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(%d)', %r],"
    " start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,"
    " stderr=subprocess.DEVNULL)\n"
    "print(p.pid)\n" % (HELPER_LIFETIME, HELPER_TAG))


class HelperProcessCartPole(CartPoleEnv):
    """CartPole with a helper process, started with the env and stopped by
    ``close()``, as a simulator's server, game engine or renderer runs
    beside its env. The helper is a daemon (its launcher exits, it runs in
    a session of its own), as servers started by a launch script are: Ray
    2.60 kills an actor's direct children when it kills the actor, not a
    daemon (measured 2026-11-27: a direct child was gone 2 s after
    ``ray.kill``, a daemon outlived ``ray.kill`` and ``ray.shutdown()``). So
    a component that kills its actors without closing their envs leaves the
    helper running, a leaked process the suite finds once the driver has
    exited (``no_leftover_process``; on the local fixture, where the
    actors' processes, and so the helper, carry the driver's marker)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        out = subprocess.run([sys.executable, "-c", _LAUNCHER], capture_output=True, text=True,
                             check=True, timeout=60)
        self.helper_pid: int | None = int(out.stdout)
        self.helper_key = process_key(self.helper_pid)  # its pid and start time: this helper

    def close(self):
        pid, self.helper_pid = self.helper_pid, None
        if pid is not None and _is_helper(pid, self.helper_key):  # never a process reusing its pid
            try:
                os.kill(pid, signal.SIGKILL)  # a daemon: not this process's child to wait for
            except ProcessLookupError:
                pass
        super().close()


class SlowCloseCartPole(CartPoleEnv):
    """CartPole whose ``close()`` takes ``CLOSE_SECONDS``, without a helper
    process (so on any fixture): a teardown that closes its envs takes that
    long at least, and one that returns sooner has not finished (a
    coroutine teardown that is not awaited)."""

    def close(self):
        time.sleep(CLOSE_SECONDS)
        super().close()


class SlowCloseHelperCartPole(HelperProcessCartPole):
    """The helper env whose ``close()`` takes ``CLOSE_SECONDS`` before it
    stops the helper, as a simulator that saves its state or a renderer's
    server that drains its clients does: a teardown that kills the actor
    before that close returns leaves the helper running."""

    def close(self):
        time.sleep(CLOSE_SECONDS)
        super().close()


def _is_helper(pid: int, key: str | None = None) -> bool:
    """Whether ``pid`` runs a helper (and, given ``key``, the helper of that
    start time: :func:`process_key`)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            tagged = f.read().rstrip(b"\0").endswith(HELPER_TAG.encode())
        return tagged and (key is None or process_key(pid) == key)
    except OSError:
        return False


for _id, _entry, _kwargs in (
        ("RlcSlowCartPole-v0", SlowCartPole, {}),
        ("RlcVerySlowCartPole-v0", SlowCartPole, {"step_seconds": LONG_STEP_SECONDS}),
        ("RlcHangableCartPole-v0", HangableCartPole, {}),
        ("RlcFailingCartPole-v0", FailingCartPole, {}),
        ("RlcHelperProcessCartPole-v0", HelperProcessCartPole, {}),
        ("RlcSlowCloseCartPole-v0", SlowCloseCartPole, {}),
        ("RlcSlowCloseHelperCartPole-v0", SlowCloseHelperCartPole, {})):
    if _id not in gym.registry:
        gym.register(_id, entry_point=_entry, max_episode_steps=500, kwargs=_kwargs)
