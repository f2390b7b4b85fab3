"""Invalid arguments fail before Ray is touched (no Ray runs in this module)."""

import pytest
import ray

from impl import RayCollector, RayReplayBuffer, RayEvalWorker
from impl_support import cartpole, constant_policy_maker


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(frames_per_batch=0), "frames_per_batch"),
        (dict(frames_per_batch=-5), "frames_per_batch"),
        (dict(frames_per_batch=1.5), "frames_per_batch"),
        (dict(frames_per_batch=10, total_frames=-2), "total_frames"),
        (dict(frames_per_batch=10, num_collectors=0), "num_collectors"),
        (dict(frames_per_batch=10, num_collectors=3, sync=True), "divisible"),
        (dict(frames_per_batch=10, num_collectors=2, remote_configs=[{}]), "num_collectors"),
    ],
)
def test_collector_rejects_invalid_arguments_without_starting_ray(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RayCollector("CartPole-v1", **kwargs)
    assert not ray.is_initialized()


def test_collector_rejects_bad_env_and_policy_types():
    with pytest.raises(TypeError, match="create_env_fn"):
        RayCollector(42, frames_per_batch=10)
    with pytest.raises(TypeError, match="policy"):
        RayCollector(cartpole, policy=3, frames_per_batch=10)
    assert not ray.is_initialized()


@pytest.mark.parametrize("capacity", [0, -1, 2.5, None])
def test_buffer_rejects_invalid_capacity_without_starting_ray(capacity):
    with pytest.raises(ValueError, match="capacity"):
        RayReplayBuffer(capacity)
    assert not ray.is_initialized()


def test_buffer_rejects_invalid_batch_size_without_starting_ray():
    with pytest.raises(ValueError, match="batch_size"):
        RayReplayBuffer(10, batch_size=0)
    assert not ray.is_initialized()


def test_eval_worker_rejects_invalid_arguments_without_starting_ray():
    with pytest.raises(TypeError, match="policy_maker"):
        RayEvalWorker(None, cartpole, None)
    with pytest.raises(TypeError, match="env_maker"):
        RayEvalWorker(None, 3, constant_policy_maker)
    with pytest.raises(ValueError, match="name"):
        RayEvalWorker(None, cartpole, constant_policy_maker, name="")
    with pytest.raises(ValueError, match="shutdown_timeout"):
        RayEvalWorker(None, cartpole, constant_policy_maker, shutdown_timeout=-1)
    assert not ray.is_initialized()
