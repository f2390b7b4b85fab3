"""Ray actors of the collector and the replay buffer.

Defined at module level so Ray workers import them by module (``impl`` must
be importable in workers: run drivers with the repo root on PYTHONPATH).
Only numpy is imported here; see :mod:`impl.rollout`.
"""

from __future__ import annotations

import numpy as np
import ray

from impl.batches import rows_of
from impl.control import CONTROL_GROUPS, Control
from impl.rollout import Stepper, load_weights, make_env


@ray.remote(concurrency_groups=CONTROL_GROUPS)
class CollectorActor(Control):
    """Steps one env with one policy; one flat batch per ``next()`` call."""

    def __init__(self, env, policy, frames_per_batch: int, writer=None, seed: int | None = None):
        self._stepper = Stepper(make_env(env), policy, seed)
        self._frames = frames_per_batch
        self._writer = writer

    def next(self) -> dict:
        return self._stepper.collect(self._frames)

    def next_to_buffer(self) -> int:
        """Collect a batch, write it through the buffer client, return its size."""
        batch = self.next()
        return self._writer.extend(batch)

    def update_policy_weights_(self, weights) -> None:
        load_weights(self._stepper.policy, weights)

    def close_env(self) -> None:
        self._stepper.close()


@ray.remote(concurrency_groups=CONTROL_GROUPS)
class ReplayBufferActor(Control):
    """A circular storage of ``capacity`` rows: one numpy array per key."""

    def __init__(self, capacity: int):
        self._capacity = capacity
        self._storage: dict | None = None
        self._writes = 0
        self._fenced: set = set()  # writers whose component has shut down

    def fence(self, writer: str) -> int:
        """Drop every later write of ``writer``; returns the write count."""
        self._fenced.add(writer)
        return self._writes

    def extend(self, flat: dict, writer: str | None = None) -> int:
        if writer is not None and writer in self._fenced:
            return 0  # sent by a collector before its shutdown, arrived after it
        n = rows_of(flat)
        if self._storage is None:
            self._storage = {k: np.zeros((self._capacity, *v.shape[1:]), v.dtype) for k, v in flat.items()}
        elif flat.keys() != self._storage.keys():
            raise ValueError(f"batch keys {sorted(map(str, flat))} differ from stored {sorted(map(str, self._storage))}")
        keep = min(n, self._capacity)  # of a batch wider than the buffer, the last rows stay
        index = (np.arange(n - keep, n) + self._writes) % self._capacity
        for key, value in flat.items():
            self._storage[key][index] = value[n - keep :]
        self._writes += n
        return n

    def sample(self, batch_size: int) -> dict:
        size = self.length()
        if size == 0:
            raise RuntimeError("RayReplayBuffer is empty: nothing to sample")
        index = np.random.randint(size, size=batch_size)
        return {key: value[index] for key, value in self._storage.items()}

    def length(self) -> int:
        return min(self._writes, self._capacity)

    def write_count(self) -> int:
        return self._writes
