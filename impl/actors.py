"""Ray actors of the collector and the replay buffer.

Defined at module level so Ray workers import them by module (``impl`` must
be importable in workers: run drivers with the repo root on PYTHONPATH).
"""

from __future__ import annotations

import ray
import torch
from tensordict import TensorDictBase

from impl.control import CONTROL_GROUPS, Control
from impl.rollout import Stepper, load_weights, make_env


@ray.remote(concurrency_groups=CONTROL_GROUPS)
class CollectorActor(Control):
    """Steps one env with one policy; one batch per ``next()`` call."""

    def __init__(self, env, policy, frames_per_batch: int, writer=None, seed: int | None = None):
        torch.set_num_threads(1)
        self._stepper = Stepper(make_env(env), policy, seed)
        self._frames = frames_per_batch
        self._writer = writer

    def next(self) -> TensorDictBase:
        return self._stepper.collect(self._frames)

    def next_to_buffer(self) -> int:
        """Collect a batch, write it through the buffer client, return its size."""
        batch = self.next()
        self._writer.extend(batch)
        return batch.numel()

    def update_policy_weights_(self, weights: TensorDictBase) -> None:
        load_weights(self._stepper.policy, weights)


@ray.remote(concurrency_groups=CONTROL_GROUPS)
class ReplayBufferActor(Control):
    """A circular TensorDict storage of ``capacity`` rows."""

    def __init__(self, capacity: int):
        torch.set_num_threads(1)
        self._capacity = capacity
        self._storage: TensorDictBase | None = None
        self._writes = 0

    def extend(self, data: TensorDictBase) -> int:
        rows = data.reshape(-1)
        n = rows.numel()
        if n == 0:
            return 0
        if self._storage is None:
            self._storage = rows[:1].expand(self._capacity).clone()
        if n > self._capacity:  # only the last `capacity` rows survive
            rows, skipped = rows[-self._capacity :], n - self._capacity
        else:
            skipped = 0
        index = (torch.arange(rows.numel()) + self._writes + skipped) % self._capacity
        self._storage[index] = rows
        self._writes += n
        return n

    def sample(self, batch_size: int) -> TensorDictBase:
        size = self.length()
        if size == 0:
            raise RuntimeError("RayReplayBuffer is empty: nothing to sample")
        return self._storage[torch.randint(size, (batch_size,))].clone()

    def length(self) -> int:
        return min(self._writes, self._capacity)

    def write_count(self) -> int:
        return self._writes
