r"""AsyncCollector (Tianshou 2.0.1) cannot collect with a stateless policy.

Hand-written (no suite scenario: outside the lifecycle contract). The
adapter's policy returns a hidden state to get past it. Prints each try.

Run: python THIS_SCRIPT.py   (Tianshou 2.0.1, Ray, gymnasium, torch)
"""
import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import gymnasium as gym
import ray
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.data import AsyncCollector
from tianshou.env import RayVectorEnv
from tianshou.utils.net.common import Net

ray.init(address="local", num_cpus=2, include_dashboard=False)
for random in (False, True):  # each on its own envs and collector
    envs = RayVectorEnv([lambda: gym.make("CartPole-v1")] * 2, wait_num=1)
    space = envs.action_space[0]
    policy = DiscreteQLearningPolicy(model=Net(state_shape=(4,), action_shape=space.n),
                                     action_space=space)
    collector = AsyncCollector(policy, envs)
    collector.reset()
    try:
        stats = collector.collect(n_step=64, random=random)
        print(f"collect(random={random}): ok, {stats.n_collected_steps} steps")
    except Exception as exc:  # noqa: BLE001 - the outcome is printed
        print(f"collect(random={random}): raised {type(exc).__name__}: {exc}")
    for w in envs.workers:  # close() would leave them alive (the lifecycle finding)
        ray.kill(w.env)
ray.shutdown()
