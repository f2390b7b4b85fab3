"""Gymnasium environments the catalog uses to put a call inside Ray on purpose.

``conformance.envs:RlcSlowCartPole-v0`` is CartPole whose ``step`` sleeps
``STEP_SECONDS``: a batch of ``frames_per_batch`` frames then takes
``frames_per_batch * STEP_SECONDS`` inside the actor, so a scenario that races
a teardown, a ``ray.shutdown()``, a kill or the interpreter exit against a
collector's call finds that call in flight every time, not by chance. The
``module:id`` form makes ``gymnasium.make`` import this module (and register
the env) in whatever process builds it, Ray workers included; it imports
nothing but gymnasium.
"""
from __future__ import annotations

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


if "RlcSlowCartPole-v0" not in gym.registry:
    gym.register("RlcSlowCartPole-v0", entry_point=SlowCartPole, max_episode_steps=500)
if "RlcVerySlowCartPole-v0" not in gym.registry:
    gym.register("RlcVerySlowCartPole-v0", entry_point=SlowCartPole, max_episode_steps=500,
                 kwargs={"step_seconds": LONG_STEP_SECONDS})
