"""Environment stepping shared by the collector and eval actors.

Steps a gymnasium env with numpy into preallocated arrays and builds one
TensorDict per batch (no per-step TensorDict unless the policy needs one).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from tensordict.nn import TensorDictModuleBase
from torch import nn


def make_env(env: str | Callable[[], Any]):
    """A gymnasium env from an env id or a zero-argument factory."""
    if isinstance(env, str):
        import gymnasium as gym

        return gym.make(env)
    return env()


def policy_fn(policy: Any, action_space) -> Callable[[np.ndarray], Any]:
    """``observation -> action`` for ``env.step``.

    ``None`` samples the action space; a TensorDictModule is called on
    ``TensorDict(observation=...)`` and its ``"action"`` entry is used; any
    other callable is called on the observation tensor.
    """
    if policy is None:
        return lambda obs: action_space.sample()
    discrete = hasattr(action_space, "n") and not np.shape(action_space.sample())

    def to_env(action):
        if isinstance(action, torch.Tensor):
            action = action.detach().cpu().numpy()
        return int(action) if discrete else np.asarray(action, dtype=action_space.dtype)

    if isinstance(policy, TensorDictModuleBase):
        return lambda obs: to_env(
            policy(TensorDict(observation=torch.as_tensor(obs), batch_size=[]))["action"]
        )
    return lambda obs: to_env(policy(torch.as_tensor(obs)))


def as_weights(weights: Any) -> TensorDictBase:
    """A TensorDict of weights from a module, a TensorDict or a (nested) dict."""
    if isinstance(weights, nn.Module):
        return TensorDict.from_module(weights).data.clone()
    if isinstance(weights, TensorDictBase):
        return weights.detach()
    if isinstance(weights, dict):
        return TensorDict(weights).detach()
    raise TypeError(f"weights must be an nn.Module, a TensorDict or a dict, got {type(weights).__name__}")


def load_weights(policy: Any, weights: TensorDictBase) -> None:
    if not isinstance(policy, nn.Module):
        raise TypeError(f"cannot load weights into a policy of type {type(policy).__name__}")
    weights.to_module(policy)


class Stepper:
    """A gymnasium env, a policy, and the current observation."""

    def __init__(self, env: Any, policy: Any, seed: int | None = None) -> None:
        self.env = env
        self.policy = policy
        self.act = policy_fn(policy, self.env.action_space)
        if seed is not None:
            self.env.action_space.seed(seed)
        self.obs, _ = self.env.reset(seed=seed)
        self._action_example = np.asarray(self.env.action_space.sample())

    @torch.no_grad()
    def collect(self, frames: int) -> TensorDict:
        """Step ``frames`` times (resetting finished episodes); one TensorDict."""
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
        t = torch.from_numpy
        return TensorDict(
            {
                "observation": t(obs),
                "action": t(action),
                "next": {
                    "observation": t(next_obs),
                    "reward": t(reward),
                    "done": t(terminated | truncated),
                    "terminated": t(terminated),
                    "truncated": t(truncated),
                },
            },
            batch_size=[frames],
        )

    @torch.no_grad()
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
