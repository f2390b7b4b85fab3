"""RayCollector behaviour on a shared local Ray: batches, modes, weights,
background collection, auto-shutdown, construction failures."""

import threading
import time

import pytest
import ray
import torch
from tensordict import TensorDict

from impl import ActorNotReadyError, BackgroundWorkError, ComponentClosedError, RayCollector, RayReplayBuffer
from impl_support import READY_TIMEOUT, BrokenCartPole, actor_state, always_one, cartpole, linear_policy, \
    live_actors, threads_since, wait_until

pytestmark = pytest.mark.usefixtures("ray_session")

SMALL = {"num_cpus": 0.5}


def collector(track, *args, **kwargs):
    kwargs.setdefault("remote_configs", SMALL)
    kwargs.setdefault("ready_timeout", READY_TIMEOUT)
    return track(RayCollector(*args, **kwargs))


def assert_consistent_transitions(batch):
    """``next.observation`` of a step is the ``observation`` of the next one
    unless the episode ended there."""
    obs, nxt, done = batch["observation"], batch["next", "observation"], batch["next", "done"].squeeze(-1)
    keep = ~done[:-1]
    assert torch.equal(obs[1:][keep], nxt[:-1][keep])


def assert_exhausted(col, handles, total):
    """The collector reached ``total`` frames and tore itself down."""
    assert col.collected_frames == total
    assert not col.is_alive()
    assert col.remote_collectors() == []
    assert [actor_state(h) for h in handles] == ["DEAD"] * len(handles)
    start = time.monotonic()
    col.shutdown()  # a no-op
    assert time.monotonic() - start < 0.5
    with pytest.raises(ComponentClosedError, match="RayCollector is closed: iterator.*total_frames"):
        next(iter(col))


def test_sync_mode_stacks_one_batch_per_actor_then_shuts_itself_down(track):
    col = collector(track, "CartPole-v1", frames_per_batch=64, total_frames=192, num_collectors=2, sync=True)
    assert col.is_alive()
    handles = col.remote_collectors()
    batches = list(col)
    assert [b.batch_size for b in batches] == [torch.Size([2, 32])] * 3
    for key in ["observation", "action", ("next", "observation"), ("next", "reward"), ("next", "done"),
                ("next", "terminated"), ("next", "truncated")]:
        assert key in batches[0].keys(include_nested=True)
    assert batches[0]["next", "reward"].shape == (2, 32, 1)
    for b in batches:
        for row in b.unbind(0):
            assert_consistent_transitions(row)
    assert_exhausted(col, handles, 192)


def test_async_mode_yields_single_actor_batches(track):
    col = collector(track, cartpole, frames_per_batch=32, total_frames=160, num_collectors=2)
    handles = col.remote_collectors()
    batches = list(col)
    assert [b.batch_size for b in batches] == [torch.Size([32])] * 5
    for b in batches:
        assert_consistent_transitions(b)
    assert_exhausted(col, handles, 160)


def test_total_frames_not_a_multiple_of_the_batch_is_a_lower_bound(track):
    col = collector(track, "CartPole-v1", frames_per_batch=50, total_frames=120, num_collectors=2)
    assert sum(b.numel() for b in col) == 150
    assert not col.is_alive()


def test_zero_total_frames_yields_nothing_and_shuts_down(track):
    col = collector(track, "CartPole-v1", frames_per_batch=16, total_frames=0)
    assert list(col) == []
    assert not col.is_alive()


def test_breaking_out_and_iterating_again_continues_an_endless_collector(track):
    col = collector(track, "CartPole-v1", frames_per_batch=32, num_collectors=2)
    for i, _ in enumerate(col):
        if i == 1:
            break
    for i, _ in enumerate(col):
        if i == 2:
            break
    assert col.collected_frames == 5 * 32
    assert col.is_alive()
    col.shutdown()
    assert not col.is_alive()
    assert not live_actors()


def test_update_policy_weights_changes_the_actions(track):
    policy = linear_policy(bias=(1.0, 0.0))  # always action 0
    col = collector(track, "CartPole-v1", policy, frames_per_batch=32, num_collectors=2, sync=True)
    it = iter(col)
    assert (next(it)["action"] == 0).all()
    with torch.no_grad():
        policy[0].module.bias.copy_(torch.tensor([0.0, 1.0]))  # now always action 1
    col.update_policy_weights_()  # default: the local policy's weights
    assert (next(it)["action"] == 1).all()
    weights = TensorDict.from_module(linear_policy(bias=(1.0, 0.0))).data
    col.update_policy_weights_(weights)
    assert (next(it)["action"] == 0).all()
    col.shutdown()


def test_plain_callable_policy_is_called_on_observations(track):
    col = collector(track, "CartPole-v1", always_one, frames_per_batch=16, total_frames=16)
    (batch,) = list(col)
    assert (batch["action"] == 1).all()


def test_random_policy_has_no_weights_to_update(track):
    col = collector(track, "CartPole-v1", frames_per_batch=16)
    with pytest.raises(ValueError, match="no weights"):
        col.update_policy_weights_()
    col.shutdown()


def test_replay_buffer_mode_yields_progress_and_fills_the_buffer(track):
    rb = track(RayReplayBuffer(1000, batch_size=8, ready_timeout=READY_TIMEOUT))
    col = collector(track, "CartPole-v1", frames_per_batch=64, total_frames=256, num_collectors=2,
                    sync=True, replay_buffer=rb)
    handles = col.remote_collectors()
    progress = list(col)
    assert progress == [64] * 4
    assert rb.write_count == 256 and len(rb) == 256
    assert_exhausted(col, handles, 256)
    assert rb.is_alive()  # the collector's teardown left the buffer alone
    assert rb.sample().batch_size == torch.Size([8])
    rb.close()


def test_start_collects_in_the_background_until_shutdown(track):
    rb = track(RayReplayBuffer(10_000, ready_timeout=READY_TIMEOUT))
    col = collector(track, "CartPole-v1", frames_per_batch=32, num_collectors=2, replay_buffer=rb)
    threads_before = set(threading.enumerate())
    col.start()
    assert wait_until(lambda: rb.write_count >= 200, timeout=30)
    with pytest.raises(RuntimeError, match="background"):
        iter(col)
    start = time.monotonic()
    col.shutdown()
    assert time.monotonic() - start < 10
    assert set(threading.enumerate()) <= threads_before, threads_since(threads_before)
    assert col.error is None
    written = rb.write_count
    time.sleep(0.3)
    assert rb.write_count == written == len(rb)  # nothing writes any more, nothing lost
    assert not col.is_alive() and rb.is_alive()
    rb.close()


def test_start_stops_and_shuts_down_at_total_frames(track):
    rb = track(RayReplayBuffer(1000, ready_timeout=READY_TIMEOUT))
    col = collector(track, "CartPole-v1", frames_per_batch=32, total_frames=256, num_collectors=2, replay_buffer=rb)
    threads_before = set(threading.enumerate())
    col.start()
    assert wait_until(lambda: not col.is_alive(), timeout=30)
    assert wait_until(lambda: set(threading.enumerate()) <= threads_before, timeout=5), \
        threads_since(threads_before)
    assert rb.write_count == 256 == col.collected_frames
    col.shutdown()  # a no-op
    rb.close()


def test_an_env_error_under_start_is_raised_by_every_later_call(track):
    rb = track(RayReplayBuffer(10_000, ready_timeout=READY_TIMEOUT))
    col = collector(track, BrokenCartPole(at=40, how="raise"), frames_per_batch=32, num_collectors=2,
                    replay_buffer=rb)
    col.start()
    assert wait_until(lambda: col.error is not None, timeout=30)
    assert not col.is_alive()  # the actors answer, but the collector's work is over
    calls = {"start": col.start, "iterator": lambda: iter(col),
             "update_policy_weights_": lambda: col.update_policy_weights_(torch.nn.Linear(4, 2))}
    for method, call in calls.items():
        with pytest.raises(BackgroundWorkError, match=f"simulator crashed.*{method}\\(\\) cannot") as info:
            call()
        assert info.value.__cause__ is col.error  # chained to what stopped the thread
    start = time.monotonic()
    col.shutdown()  # never raises
    assert time.monotonic() - start < 10
    assert rb.write_count >= 32  # what the actors wrote before the failure stays
    rb.close()


def test_an_actor_death_under_start_surfaces_and_shutdown_logs_it_if_no_call_did(track, caplog):
    from ray.exceptions import RayActorError

    rb = track(RayReplayBuffer(10_000, ready_timeout=READY_TIMEOUT))
    col = collector(track, "CartPole-v1", frames_per_batch=32, num_collectors=2, replay_buffer=rb)
    col.start()
    assert wait_until(lambda: rb.write_count >= 64, timeout=30)
    ray.kill(col.remote_collectors()[1])
    assert wait_until(lambda: col.error is not None, timeout=10)
    assert isinstance(col.error, RayActorError) and not col.is_alive()
    with caplog.at_level("ERROR", logger="impl.collector"):
        col.shutdown()  # the next call: it does not raise, it logs
    assert "background work had stopped with an error no call raised" in caplog.text
    assert "ActorDiedError" in caplog.text
    with pytest.raises(ComponentClosedError):  # closed now: the closed error comes first
        col.start()
    rb.close()


def test_start_needs_a_replay_buffer(track):
    col = collector(track, "CartPole-v1", frames_per_batch=16)
    with pytest.raises(ValueError, match="replay_buffer"):
        col.start()
    col.shutdown()


def test_unknown_env_id_fails_construction_and_leaves_no_actor():
    with pytest.raises(ActorNotReadyError, match="Nope-v9"):
        RayCollector("Nope-v9", frames_per_batch=16, num_collectors=2, remote_configs=SMALL,
                     ready_timeout=READY_TIMEOUT)
    assert not live_actors()


def test_constructing_on_a_closed_buffer_fails(track):
    rb = RayReplayBuffer(10, ready_timeout=READY_TIMEOUT)
    rb.close()
    with pytest.raises(ComponentClosedError, match="RayReplayBuffer is closed"):
        RayCollector("CartPole-v1", frames_per_batch=16, replay_buffer=rb, ready_timeout=READY_TIMEOUT)
    assert not live_actors()
