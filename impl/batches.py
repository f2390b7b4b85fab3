"""Batches between actors and drivers: flat dicts of numpy arrays.

Actors exchange ``{key: np.ndarray}`` (nested keys are tuples), which Ray
serializes without copies and which needs neither torch nor tensordict in the
actor; drivers convert to and from one TensorDict per batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def to_flat(data: Any) -> dict:
    """Rows of a TensorDict (flattened over its batch dims) as a flat dict;
    a flat dict passes through."""
    if isinstance(data, dict):
        return data
    rows = data.reshape(-1)
    return {
        key: value.detach().cpu().numpy()
        for key, value in rows.items(include_nested=True, leaves_only=True)
    }


def from_flat(flat: dict, batch_size: list[int] | None = None):
    """One TensorDict from a flat dict (arrays are copied if read-only)."""
    import torch
    from tensordict import TensorDict

    if batch_size is None:
        batch_size = [len(next(iter(flat.values())))]
    td = TensorDict(batch_size=batch_size)
    for key, value in flat.items():
        td.set(key, torch.from_numpy(value if value.flags.writeable else value.copy()))
    return td


def stack_flat(flats: list[dict]) -> dict:
    """Stack flat batches along a new leading dim."""
    return {key: np.stack([f[key] for f in flats]) for key in flats[0]}


def rows_of(flat: dict) -> int:
    sizes = {len(v) for v in flat.values()}
    if len(sizes) != 1:
        raise ValueError(f"entries of a batch must have the same number of rows, got {sorted(sizes)}")
    return sizes.pop()
