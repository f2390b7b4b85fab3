"""Policy weights as sent to actors (driver side)."""

from __future__ import annotations

from typing import Any

from tensordict import TensorDict, TensorDictBase
from torch import nn


def as_weights(weights: Any) -> TensorDictBase:
    """A TensorDict of weights from a module, a TensorDict or a (nested) dict."""
    if isinstance(weights, nn.Module):
        return TensorDict.from_module(weights).data.clone()
    if isinstance(weights, TensorDictBase):
        return weights.detach()
    if isinstance(weights, dict):
        return TensorDict(weights).detach()
    raise TypeError(f"weights must be an nn.Module, a TensorDict or a dict, got {type(weights).__name__}")
