"""RayEvalWorker on a shared Ray: rollouts, weights, named actors."""

import pytest
import ray
import torch
from tensordict import TensorDict

from impl import ActorNotReadyError, ComponentClosedError, RayEvalWorker
from impl_support import (
    READY_TIMEOUT,
    actor_state,
    cartpole,
    constant_policy_maker,
    linear_module_policy,
    live_actors,
    record_torch_imported,
)

pytestmark = pytest.mark.usefixtures("ray_session")

NS = "rlc-impl-tests"


def test_submit_and_poll_return_the_episode_return_and_length(track):
    worker = track(RayEvalWorker(None, cartpole, constant_policy_maker, num_cpus=0.5, ready_timeout=READY_TIMEOUT))
    assert worker.poll() is None  # nothing submitted
    worker.submit(None, max_steps=500)
    result = worker.poll(timeout=30)
    assert set(result) == {"reward", "steps"}
    assert isinstance(result["reward"], float) and isinstance(result["steps"], int)
    assert 0 < result["steps"] < 500  # always pushing right ends the episode early
    assert result["reward"] == result["steps"]  # CartPole: +1 per step
    assert worker.poll() is None  # the result was handed out
    worker.submit(None, max_steps=3)
    assert worker.poll(timeout=30) == {"reward": 3.0, "steps": 3}
    worker.shutdown()


def test_init_fn_runs_first_and_submitted_weights_are_loaded(track):
    worker = track(RayEvalWorker(record_torch_imported, "CartPole-v1", linear_module_policy, num_cpus=0.5,
                                 ready_timeout=READY_TIMEOUT))
    handle = worker._actors[0]
    assert ray.get(handle.__ray_call__.remote(lambda self: __import__("os").environ["IMPL_TEST_TORCH_BEFORE_INIT"])) == "False"
    policy = linear_module_policy(None)
    with torch.no_grad():
        policy.linear.bias.copy_(torch.tensor([0.25, 0.75]))
    worker.submit(TensorDict.from_module(policy).data, max_steps=5)
    assert worker.poll(timeout=30)["steps"] == 5
    remote_bias = ray.get(handle.__ray_call__.remote(lambda self: self._stepper.policy.linear.bias.tolist()))
    assert remote_bias == [0.25, 0.75]
    worker.shutdown()


def test_named_worker_from_name_handle_does_not_own_the_actor(track):
    owner = track(RayEvalWorker(None, "CartPole-v1", constant_policy_maker, name="ev", namespace=NS, num_cpus=0.5,
                                ready_timeout=READY_TIMEOUT))
    assert owner.owns_actor
    handle = owner._actors[0]
    other = track(RayEvalWorker.from_name("ev", namespace=NS))
    assert not other.owns_actor and other.is_alive()
    other.submit(None, max_steps=4)
    assert other.poll(timeout=30) == {"reward": 4.0, "steps": 4}
    other.shutdown()  # releases the handle only
    with pytest.raises(ComponentClosedError, match="RayEvalWorker is closed: poll"):
        other.poll()
    assert owner.is_alive()
    assert ray.get_actor("ev", namespace=NS)  # still registered
    owner.shutdown()  # kills the detached actor and frees the name
    assert actor_state(handle) == "DEAD"
    with pytest.raises(ValueError):
        ray.get_actor("ev", namespace=NS)


def test_taken_name_and_unknown_name_fail_cleanly(track):
    owner = track(RayEvalWorker(None, "CartPole-v1", constant_policy_maker, name="ev2", namespace=NS, num_cpus=0.5,
                                ready_timeout=READY_TIMEOUT))
    with pytest.raises(ValueError, match="ev2"):
        RayEvalWorker(None, "CartPole-v1", constant_policy_maker, name="ev2", namespace=NS, num_cpus=0.5,
                      ready_timeout=READY_TIMEOUT)
    with pytest.raises(ValueError, match="missing"):
        RayEvalWorker.from_name("missing", namespace=NS)
    assert owner.is_alive() and len(live_actors()) == 1
    owner.shutdown()


def test_unknown_env_id_fails_construction_and_leaves_no_actor():
    with pytest.raises(ActorNotReadyError, match="Nope-v3"):
        RayEvalWorker(None, "Nope-v3", constant_policy_maker, name="ev3", namespace=NS, num_cpus=0.5,
                      ready_timeout=READY_TIMEOUT)
    assert not live_actors()
    with pytest.raises(ValueError):
        ray.get_actor("ev3", namespace=NS)
