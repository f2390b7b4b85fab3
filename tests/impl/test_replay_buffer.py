"""RayReplayBuffer on a shared Ray: storage semantics and the client."""

import pickle

import pytest
import ray
import torch
from tensordict import TensorDict

from impl import RayCollector, RayReplayBuffer
from impl_support import READY_TIMEOUT, write_through

pytestmark = pytest.mark.usefixtures("ray_session")


def rows(start, stop):
    return TensorDict(x=torch.arange(start, stop, dtype=torch.float32), batch_size=[stop - start])


def test_extend_add_sample_len_and_write_count(track):
    rb = track(RayReplayBuffer(100, batch_size=5, ready_timeout=READY_TIMEOUT))
    assert len(rb) == 0 and rb.write_count == 0
    assert rb.extend(rows(0, 10)) == 10
    rb.add(TensorDict(x=torch.tensor(10.0), batch_size=[]))
    assert len(rb) == 11 and rb.write_count == 11
    sample = rb.sample()
    assert sample.batch_size == torch.Size([5])
    assert set(sample["x"].tolist()) <= set(range(11))
    assert rb.sample(32).batch_size == torch.Size([32])
    rb.close()


def test_writes_are_circular_beyond_capacity(track):
    rb = track(RayReplayBuffer(10, batch_size=200, ready_timeout=READY_TIMEOUT))
    rb.extend(rows(0, 7))
    rb.extend(rows(7, 25))  # wider than the capacity: only the last 10 rows stay
    assert len(rb) == 10 and rb.write_count == 25
    assert set(rb.sample()["x"].tolist()) == set(range(15, 25))
    rb.close()


def test_sample_errors_are_clear(track):
    rb = track(RayReplayBuffer(10, ready_timeout=READY_TIMEOUT))
    with pytest.raises(ValueError, match="batch_size"):
        rb.sample()
    with pytest.raises(RuntimeError, match="empty"):
        rb.sample(2)
    rb.close()


def test_client_is_picklable_and_writes_from_another_process(track):
    rb = track(RayReplayBuffer(100, ready_timeout=READY_TIMEOUT))
    client = rb.client()
    assert ray.get(write_through.remote(client, 6)) == 6
    clone = pickle.loads(pickle.dumps(client))
    clone.extend(rows(0, 4))
    assert len(rb) == 10 and rb.write_count == 10
    rb.close()


def test_data_survives_the_collector_shutdown(track):
    rb = track(RayReplayBuffer(1000, ready_timeout=READY_TIMEOUT))
    col = track(RayCollector("CartPole-v1", frames_per_batch=32, num_collectors=2, replay_buffer=rb,
                             remote_configs={"num_cpus": 0.5}, ready_timeout=READY_TIMEOUT))
    for i, _ in enumerate(col):
        if i == 3:
            break
    col.shutdown(shutdown_ray=True)  # Ray was started by the user: ignored
    assert ray.is_initialized()
    written = rb.write_count
    assert written >= 4 * 32 and len(rb) == written
    assert rb.sample(16)["observation"].shape == (16, 4)
    rb.close()
