"""Environment stepping shared by the collector and eval actors.

Runs in actor processes and imports only numpy at module level: torch (and
tensordict) are imported only if the policy needs them, so a random-policy
actor starts fast. A batch is a flat dict ``{key: array}`` (nested keys are
tuples) filled in place, step by step; the driver turns it into one
TensorDict (see :mod:`impl.batches`).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np


def make_env(env: str | Callable[[], Any]):
    """A gymnasium env from an env id or a zero-argument factory."""
    if isinstance(env, str):
        import gymnasium as gym

        return gym.make(env)
    return env()


def _is_tensordict_module(policy: Any) -> bool:
    nn = sys.modules.get("tensordict.nn")  # a TensorDictModule implies it is imported
    return nn is not None and isinstance(policy, nn.TensorDictModuleBase)


def policy_fn(policy: Any, action_space) -> Callable[[np.ndarray], Any]:
    """``observation -> action`` for ``env.step``.

    ``None`` samples the action space; a TensorDictModule is called on
    ``TensorDict(observation=...)`` and its ``"action"`` entry is used; any
    other callable is called on the observation tensor.
    """
    if policy is None:
        return lambda obs: action_space.sample()
    import torch

    discrete = hasattr(action_space, "n") and not np.shape(action_space.sample())

    def to_env(action):
        if isinstance(action, torch.Tensor):
            action = action.detach().cpu().numpy()
        return int(action) if discrete else np.asarray(action, dtype=action_space.dtype)

    if _is_tensordict_module(policy):
        from tensordict import TensorDict

        def act(obs):
            with torch.no_grad():
                td = policy(TensorDict(observation=torch.as_tensor(obs), batch_size=[]))
            return to_env(td["action"])

    else:

        def act(obs):
            with torch.no_grad():
                return to_env(policy(torch.as_tensor(obs)))

    return act


def load_weights(policy: Any, weights: Any) -> None:
    """Load a TensorDict of weights into an ``nn.Module`` policy in place."""
    import torch

    if not isinstance(policy, torch.nn.Module):
        raise TypeError(f"cannot load weights into a policy of type {type(policy).__name__}")
    weights.to_module(policy)


class Stepper:
    """A gymnasium env, a policy, and the current observation."""

    def __init__(self, env: Any, policy: Any, seed: int | None = None) -> None:
        self.env = env
        self.policy = policy
        self.act = policy_fn(policy, env.action_space)
        if "torch" in sys.modules:  # one thread per actor: actors share the cores
            sys.modules["torch"].set_num_threads(1)
        if seed is not None:
            env.action_space.seed(seed)
        self.obs, _ = env.reset(seed=seed)
        self._action_example = np.asarray(env.action_space.sample())

    def collect(self, frames: int) -> dict:
        """Step ``frames`` times (resetting finished episodes); a flat batch."""
        env, act = self.env, self.act
        obs0 = np.asarray(self.obs)
        obs = np.empty((frames, *obs0.shape), dtype=obs0.dtype)
        next_obs = np.empty_like(obs)
        action = np.empty((frames, *self._action_example.shape), dtype=self._action_example.dtype)
        reward = np.empty((frames, 1), dtype=np.float32)
        terminated = np.empty((frames, 1), dtype=bool)
        truncated = np.empty((frames, 1), dtype=bool)
        o = self.obs
        for i in range(frames):
            a = act(o)
            obs[i] = o
            action[i] = a
            o2, r, term, trunc, _ = env.step(a)
            next_obs[i] = o2
            reward[i] = r
            terminated[i] = term
            truncated[i] = trunc
            o = env.reset()[0] if (term or trunc) else o2
        self.obs = o
        return {
            "observation": obs,
            "action": action,
            ("next", "observation"): next_obs,
            ("next", "reward"): reward,
            ("next", "done"): terminated | truncated,
            ("next", "terminated"): terminated,
            ("next", "truncated"): truncated,
        }

    def evaluate(self, max_steps: int) -> dict:
        """One episode of at most ``max_steps`` steps: return and length."""
        o, _ = self.env.reset()
        total, steps = 0.0, 0
        for steps in range(1, max_steps + 1):
            o, r, term, trunc, _ = self.env.step(self.act(o))
            total += float(r)
            if term or trunc:
                break
        return {"reward": total, "steps": steps}

    def close(self) -> None:
        self.env.close()
