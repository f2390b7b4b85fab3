"""Who owns Ray, and teardown around ray.shutdown(). Each test has its own Ray
(or none) and must end with no Ray running and no Ray process left."""

import threading

import pytest
import ray
import torch
from tensordict import TensorDict

from impl import ActorNotReadyError, ComponentClosedError, RayCollector, RayEvalWorker, RayReplayBuffer
from impl_support import READY_TIMEOUT, Sentinel, constant_policy_maker, ray_processes, threads_since, timed, \
    wait_until

SMALL = {"num_cpus": 0.5}
ROW = TensorDict(x=torch.zeros(3), batch_size=[3])


def test_component_that_started_ray_shuts_it_down_only_on_request(own_ray):
    rb = RayReplayBuffer(10, ray_init_config=own_ray, ready_timeout=READY_TIMEOUT)
    assert ray.is_initialized() and rb._lease.started_ray
    rb.close()  # default: Ray keeps running
    assert ray.is_initialized()
    col = RayCollector("CartPole-v1", frames_per_batch=16, ray_init_config=own_ray, remote_configs=SMALL,
                       ready_timeout=READY_TIMEOUT)
    assert not col._lease.started_ray and col._lease.runtime_started_here
    col.shutdown(shutdown_ray=True)  # last holder of a runtime this library started
    assert not ray.is_initialized()


def test_ray_started_from_a_thread_that_ends_outlives_it(own_ray):
    """A build in a thread pool's worker starts Ray there: Ray's processes die
    with the thread that started them (PR_SET_PDEATHSIG): the runtime must
    outlive it, and end (its processes and the thread keeping them) on request."""
    before = set(threading.enumerate())
    built = []
    worker = threading.Thread(target=lambda: built.append(RayReplayBuffer(
        10, ray_init_config=own_ray, ready_timeout=READY_TIMEOUT)))
    worker.start()
    worker.join()
    rb = built[0]
    assert rb._lease.started_ray and not worker.is_alive()
    rb.extend(ROW)
    assert len(rb) == 3  # answered after the thread that started Ray ended
    rb.close(shutdown_ray=True)
    assert not ray.is_initialized()
    assert not ray_processes(), f"left after the shutdown: {ray_processes()}"
    assert wait_until(lambda: not threads_since(before), timeout=2), threads_since(before)


def test_the_users_ray_shutdown_of_a_runtime_started_from_a_thread_leaves_no_thread(own_ray):
    """The user's own ray.shutdown() (which waits at most a second for each
    process Ray started, ray/_private/node.py) of a runtime a build started
    from an ending thread: the thread keeping that runtime must outlive its
    processes (its end SIGKILLs what is left), and the call returns once it has
    ended: no thread of the library left (built_in_thread/*/impl/all>ray)."""
    before = set(threading.enumerate())
    worker = threading.Thread(target=lambda: RayReplayBuffer(
        10, ray_init_config=own_ray, ready_timeout=READY_TIMEOUT).close())
    worker.start()
    worker.join()
    assert ray.is_initialized()  # the buffer closed, the runtime it started kept
    ray.shutdown()
    assert not threads_since(before), threads_since(before)  # at the return, no wait
    assert not ray_processes(), f"left after the shutdown: {ray_processes()}"


def test_a_buffer_client_after_the_users_ray_shutdown_fails_clearly(own_ray):
    """The client a collector writes through holds only the actor's handle: once
    the user's ray.shutdown() ended the buffer, its calls raise
    ComponentClosedError, not Ray's AttributeError about a missing core worker."""
    ray.init(**own_ray)
    rb = RayReplayBuffer(10, ready_timeout=READY_TIMEOUT)
    client = rb.client()
    assert client.extend(ROW) == 3
    ray.shutdown()
    for call, name in ((lambda: client.extend(ROW), "extend"), (lambda: len(client), "len"),
                       (lambda: client.sample(2), "sample")):
        with pytest.raises(ComponentClosedError, match=rf"RayReplayBufferClient is closed: {name}\(\) "
                                                       "called after its Ray runtime was shut down"):
            call()
    assert not ray.is_initialized()  # no call started a runtime
    rb.close()


def test_ray_found_running_is_never_shut_down(own_ray):
    ray.init(**own_ray)
    sentinel = Sentinel.remote()
    rb = RayReplayBuffer(100, ready_timeout=READY_TIMEOUT)
    col = RayCollector("CartPole-v1", frames_per_batch=16, replay_buffer=rb, remote_configs=SMALL,
                       ready_timeout=READY_TIMEOUT)
    ev = RayEvalWorker(None, "CartPole-v1", constant_policy_maker, num_cpus=0.5, ready_timeout=READY_TIMEOUT)
    assert not any(c._lease.started_ray or c._lease.runtime_started_here for c in (rb, col, ev))
    col.shutdown(shutdown_ray=True)
    ev.shutdown(shutdown_ray=True)
    rb.close(shutdown_ray=True)
    assert ray.is_initialized()
    assert ray.get(sentinel.ping.remote(), timeout=10) == "pong"  # other actors untouched
    ray.shutdown()


def test_shutdown_ray_is_deferred_while_the_buffer_holds_ray(own_ray):
    rb = RayReplayBuffer(1000, ray_init_config=own_ray, ready_timeout=READY_TIMEOUT)
    col = RayCollector("CartPole-v1", frames_per_batch=32, num_collectors=2, replay_buffer=rb, remote_configs=SMALL,
                       ready_timeout=READY_TIMEOUT)
    for i, _ in enumerate(col):
        if i == 3:
            break
    col.shutdown(shutdown_ray=True)
    assert ray.is_initialized() and rb.is_alive()
    assert len(rb) == rb.write_count >= 4 * 32
    assert rb.sample(8).batch_size == (8,)
    rb.close()  # the last holder: the deferred ray.shutdown() happens now
    assert not ray.is_initialized()


def test_failed_constructor_gives_back_the_ray_it_started(own_ray):
    with pytest.raises(ActorNotReadyError, match="Nope-v1"):
        RayCollector("Nope-v1", frames_per_batch=16, ray_init_config=own_ray, remote_configs=SMALL,
                     ready_timeout=READY_TIMEOUT)
    assert not ray.is_initialized()


# Teardown sequences with ray.shutdown() ("ray") at every position. The
# collector runs a background thread writing into the buffer meanwhile.
SEQUENCES = [
    ["ray", "col", "rb", "ev"],
    ["col", "ray", "rb", "ev"],
    ["rb", "ray", "ev", "col"],
    ["ev", "rb", "col", "ray"],
]


@pytest.mark.parametrize("sequence", SEQUENCES, ids="-".join)
def test_teardown_in_any_order_with_ray_shutdown(sequence, own_ray):
    rb = RayReplayBuffer(10_000, ray_init_config=own_ray, ready_timeout=READY_TIMEOUT)
    col = RayCollector("CartPole-v1", frames_per_batch=32, num_collectors=2, replay_buffer=rb, remote_configs=SMALL,
                       ready_timeout=READY_TIMEOUT)
    ev = RayEvalWorker(None, "CartPole-v1", constant_policy_maker, name="ev", namespace="own", num_cpus=0.5,
                       ready_timeout=READY_TIMEOUT)
    threads_before = set(threading.enumerate())
    col.start()
    assert wait_until(lambda: rb.write_count > 0, timeout=30)
    steps = {"col": col.shutdown, "rb": rb.close, "ev": ev.shutdown, "ray": ray.shutdown}
    for step in sequence:
        assert timed(steps[step]) < 10
        if step == "ray":
            assert not ray.is_initialized()
            # ray.shutdown() stopped the background thread before destroying
            # the core worker (a thread inside a Ray call meanwhile may exit
            # the process or hang in core_worker.wait): gone on return.
            assert set(threading.enumerate()) <= threads_before, threads_since(threads_before)
            if "col" not in sequence[:sequence.index("ray")]:
                with pytest.raises(ComponentClosedError, match=r"called after ray\.shutdown\(\)"):
                    col.start()
    for step in ("col", "rb", "ev"):  # again: still silent, still bounded
        assert timed(steps[step]) < 1
    for call in (lambda: next(iter(col)), lambda: rb.sample(1), lambda: len(rb), lambda: ev.poll()):
        with pytest.raises(ComponentClosedError, match="is closed"):
            call()
    assert not any(c.is_alive() for c in (rb, col, ev))
    assert set(threading.enumerate()) <= threads_before, threads_since(threads_before)
    assert not ray.is_initialized()  # nothing restarted Ray
    assert not ray_processes()


def test_use_after_ray_shutdown_raises_closed_without_restarting_ray(own_ray):
    rb = RayReplayBuffer(100, ray_init_config=own_ray, ready_timeout=READY_TIMEOUT)
    col = RayCollector("CartPole-v1", frames_per_batch=16, replay_buffer=rb, remote_configs=SMALL,
                       ready_timeout=READY_TIMEOUT)
    ev = RayEvalWorker(None, "CartPole-v1", constant_policy_maker, num_cpus=0.5, ready_timeout=READY_TIMEOUT)
    ray.shutdown()
    calls = [lambda: rb.extend(None), lambda: rb.client(), col.start, lambda: col.update_policy_weights_({}),
             lambda: ev.submit(None, 5)]
    for call in calls:
        with pytest.raises(ComponentClosedError, match="after its Ray runtime was shut down"):
            call()
    assert not any(c.is_alive() for c in (rb, col, ev))
    for c in (col, ev):
        c.shutdown(shutdown_ray=True)
    rb.close(shutdown_ray=True)
    assert not ray.is_initialized()
