"""The teardown contract, for each of the three components, on a shared Ray:
idempotent, thread-safe, bounded, silent, after any kind of actor death,
and followed by ComponentClosedError on every other method."""

import asyncio
import os
import signal
import threading
import time

import pytest
import ray
import torch
from tensordict import TensorDict

from impl import ComponentClosedError, RayCollector, RayEvalWorker, RayReplayBuffer, ReadinessTimeout
from impl_support import READY_TIMEOUT, BrokenCartPole, actor_state, constant_policy_maker, live_actors, \
    timed, wait_until

pytestmark = pytest.mark.usefixtures("ray_session")

KINDS = ["collector", "buffer", "eval"]
SMALL = {"num_cpus": 0.5}
INFEASIBLE = {"resources": {"not_a_resource": 1}}
ROW = TensorDict(x=torch.zeros(3), batch_size=[3])


def make(kind, track, resources=SMALL, **kwargs):
    kwargs.setdefault("ready_timeout", READY_TIMEOUT)
    if kind == "collector":
        c = RayCollector("CartPole-v1", frames_per_batch=32, num_collectors=2, remote_configs=resources, **kwargs)
    elif kind == "buffer":
        c = RayReplayBuffer(100, batch_size=4, remote_config=resources, **kwargs)
    else:
        c = RayEvalWorker(None, "CartPole-v1", constant_policy_maker, **{"num_cpus": 0.5, **resources}, **kwargs)
    return track(c)


def teardown(c, **kwargs):
    (c.close if isinstance(c, RayReplayBuffer) else c.shutdown)(**kwargs)


def actors(c):
    return list(c._actors)


# Every public method but teardown and is_alive, as (name, call).
CALLS = {
    "collector": [
        ("iterator", lambda c: c.iterator()),
        ("iterator", lambda c: next(iter(c))),
        ("start", lambda c: c.start()),
        ("update_policy_weights_", lambda c: c.update_policy_weights_({})),
    ],
    "buffer": [
        ("extend", lambda c: c.extend(ROW)),
        ("add", lambda c: c.add(ROW[0])),
        ("sample", lambda c: c.sample()),
        ("__len__", lambda c: len(c)),
        ("write_count", lambda c: c.write_count),
        ("client", lambda c: c.client()),
    ],
    "eval": [
        ("submit", lambda c: c.submit(None, 10)),
        ("poll", lambda c: c.poll()),
    ],
}


def assert_closed(c, kind, closed_by):
    name = type(c).__name__
    for method, call in CALLS[kind]:
        with pytest.raises(ComponentClosedError) as info:
            call(c)
        assert str(info.value).startswith(f"{name} is closed: {method}() called after {closed_by}")
    assert not c.is_alive()


def assert_dead(handles):
    assert wait_until(lambda: all(actor_state(h) == "DEAD" for h in handles), timeout=3)


@pytest.mark.parametrize("kind", KINDS)
def test_teardown_is_idempotent_and_thread_safe(kind, track):
    c = make(kind, track)
    handles = actors(c)
    assert c.is_alive()
    errors, durations = [], []

    def run():
        try:
            durations.append(timed(teardown, c))
        except BaseException as exc:  # pragma: no cover - the contract says never
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(15)
    assert not errors and len(durations) == 2 and max(durations) < 10
    for _ in range(3):
        assert timed(teardown, c, shutdown_ray=True) < 0.5
    assert ray.is_initialized()  # a user-started Ray is never shut down
    assert_dead(handles)
    assert_closed(c, kind, "shutdown()" if kind != "buffer" else "close()")


@pytest.mark.parametrize("kind", KINDS)
def test_teardown_returns_with_its_actors_dead_and_their_cpus_free(kind, track):
    def free():
        return ray.available_resources().get("CPU", 0.0)

    assert wait_until(lambda: free() == 4.0, 10)  # what earlier tests held is back
    c = make(kind, track)
    handles = actors(c)
    assert wait_until(lambda: free() == 4.0 - 0.5 * len(handles), 10)  # the view shows them
    teardown(c)
    # read at once: ray.kill is asynchronous, the teardown waited for both
    assert [actor_state(h) for h in handles] == ["DEAD"] * len(handles)
    assert free() == 4.0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cause", ["ray.kill", "SIGKILL", "os._exit"])
def test_teardown_after_an_actor_died(kind, cause, track):
    c = make(kind, track)
    handles = actors(c)
    victim = handles[0]
    if cause == "ray.kill":
        ray.kill(victim)
    elif cause == "SIGKILL":
        os.kill(ray.get(victim.ping.remote()), signal.SIGKILL)
    else:
        victim.__ray_call__.remote(lambda self: os._exit(1))
    assert wait_until(lambda: not c.is_alive(), timeout=5)
    assert timed(teardown, c) < 5
    assert_closed(c, kind, "shutdown()" if kind != "buffer" else "close()")
    assert_dead(handles)


@pytest.mark.parametrize("kind", KINDS)
def test_teardown_of_a_hung_actor_respects_the_bound(kind, track):
    c = make(kind, track)
    handles = actors(c)
    handles[0].__ray_call__.remote(lambda self: time.sleep(600))
    time.sleep(0.2)
    assert c.is_alive()  # hung, not dead: liveness pings use their own thread
    assert timed(teardown, c, timeout=3) < 4
    assert_dead(handles)


def test_poll_and_teardown_keep_their_bounds_while_the_episode_in_flight_hangs(track):
    worker = track(RayEvalWorker(None, BrokenCartPole(at=5, how="hang"), constant_policy_maker,
                                 num_cpus=0.5, ready_timeout=READY_TIMEOUT))
    handles = actors(worker)
    worker.submit(None, 50)
    for timeout in (0.0, 0.5, 1.0):
        assert timed(worker.poll, timeout) < timeout + 0.3
    assert worker.poll(0.5) is None
    assert timed(teardown, worker, timeout=3) < 4
    assert_dead(handles)


def test_collector_teardown_keeps_its_bound_while_its_writes_hang_in_the_buffer(track):
    rb = make("buffer", track)
    col = make("collector", track, replay_buffer=rb)
    col.start()
    assert wait_until(lambda: rb.write_count >= 32, timeout=30)
    actors(rb)[0].__ray_call__.remote(lambda self: time.sleep(600))  # the buffer hangs
    handles = actors(col)
    assert timed(teardown, col, timeout=3) < 4  # its thread's and actors' writes are stuck
    assert_dead(handles)
    assert timed(teardown, rb, timeout=3) < 4


@pytest.mark.parametrize("kind", KINDS)
def test_never_scheduled_actor_is_not_alive_and_tears_down(kind, track):
    c = make(kind, track, resources=INFEASIBLE, ready_timeout=None)
    start = time.monotonic()
    assert not c.is_alive()
    assert time.monotonic() - start < 5
    assert timed(teardown, c) < 5
    assert wait_until(lambda: not live_actors(), timeout=3)
    assert_closed(c, kind, "shutdown()" if kind != "buffer" else "close()")


@pytest.mark.parametrize("kind", KINDS)
def test_infeasible_resources_fail_construction_and_leave_no_actor(kind, track):
    start = time.monotonic()
    with pytest.raises(ReadinessTimeout, match="not_a_resource"):
        make(kind, track, resources=INFEASIBLE, ready_timeout=1.5)
    assert time.monotonic() - start < 8
    assert wait_until(lambda: not live_actors(), timeout=3)


@pytest.mark.parametrize("kind", ["collector", "eval"])  # the buffer has no env to close
def test_a_build_that_gave_up_undoes_itself_without_waiting_on_never_started_actors(kind, track):
    """The undo asks a never-started actor neither to close its env nor what it
    holds (both would queue behind a creation that never runs: 2.5 s before)."""
    start = time.monotonic()
    with pytest.raises(ReadinessTimeout):
        make(kind, track, resources=INFEASIBLE, ready_timeout=1.0)
    took = time.monotonic() - start
    assert took < 1.0 + 0.9, f"the failed build took {took:.2f}s to give up and undo itself (ready_timeout 1 s)"
    assert wait_until(lambda: not live_actors(), timeout=3)


def blocked_call(kind, c):
    if kind == "collector":
        return lambda: next(iter(c))
    if kind == "buffer":
        return c.sample
    c.submit(None, 10)
    return lambda: c.poll(timeout=None)


@pytest.mark.parametrize("kind", KINDS)
def test_call_blocked_in_another_thread_gets_component_closed_error(kind, track):
    c = make(kind, track)
    if kind == "buffer":
        c.extend(ROW)
    handles = actors(c)
    for h in handles:
        h.__ray_call__.remote(lambda self: time.sleep(600))
    call, outcome = blocked_call(kind, c), []

    def run():
        try:
            outcome.append(call())
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.5)
    assert thread.is_alive() and not outcome  # blocked behind the hung call
    assert timed(teardown, c, timeout=3) < 4
    thread.join(5)
    assert not thread.is_alive()
    assert isinstance(outcome[0], ComponentClosedError), outcome
    assert_dead(handles)


@pytest.mark.parametrize("kind", KINDS)
def test_context_manager_tears_down_on_exit(kind, track):
    with make(kind, track) as c:
        assert c.is_alive()
        handles = actors(c)
    assert_dead(handles)
    assert_closed(c, kind, "shutdown()" if kind != "buffer" else "close()")


def test_collector_async_shutdown_with_in_flight_batches(track):
    c = make("collector", track)
    handles = actors(c)
    for i, _ in enumerate(c):
        if i == 2:
            break  # the actors are already collecting the next batches
    assert c._pending
    start = time.monotonic()
    asyncio.run(c.async_shutdown(timeout=5))
    assert time.monotonic() - start < 5
    assert_dead(handles)
    assert_closed(c, "collector", "shutdown()")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("then", ["shutdown again", "the exit hook"])
def test_an_interrupted_teardown_lets_the_interrupt_out_and_its_work_is_finished_later(
        kind, then, track, monkeypatch):
    """A Ctrl-C inside shutdown()/close() comes out of it, and the teardown's
    work is not lost: the next call (or the interpreter exit's hook) kills
    what the interrupted one did not (docs/signals.md)."""
    from impl import calls, component

    c = make(kind, track)
    handles = actors(c)
    kill = calls.kill

    def interrupted(handle):
        monkeypatch.setattr(calls, "kill", kill)  # Ctrl-C once, at the first kill
        raise KeyboardInterrupt

    monkeypatch.setattr(calls, "kill", interrupted)
    with pytest.raises(KeyboardInterrupt):
        teardown(c)
    assert [actor_state(h) for h in handles] == ["ALIVE"] * len(handles)
    if then == "shutdown again":
        assert timed(teardown, c) < 5
    else:
        component._stop_background_work("the interpreter exit")
    assert_dead(handles)
    assert_closed(c, kind, "shutdown()" if kind != "buffer" else "close()")


@pytest.mark.parametrize("code, ray_up, raised", [
    (0, False, False),  # Ray's notice to a call blocked as another thread ended the runtime
    (0, True, True),  # Ray still up: a SystemExit(0) of the program's own, let out
    (15, False, True),  # Ray's SIGTERM handler exits with 15: let out, Ray up or not
    (1, True, True),  # a SIGTERM inside a blocking call
])
def test_teardown_lets_a_signal_s_system_exit_out_in_the_main_thread_not_ray_s_notice(
        code, ray_up, raised, monkeypatch):
    """``calls.swallow`` in the main thread: a SystemExit is the program's
    end, unless it is the ``SystemExit(0)`` Ray raises in a call blocked while
    another thread shut the runtime down (measured, Ray 2.60.0: the runtime is
    already down then). Re-raised, it ended the user's program with status 0
    (order/*/user/collector>ray-bound-before-import(across-its-teardown-in-main))."""
    from impl import calls

    monkeypatch.setattr(ray, "is_initialized", lambda: ray_up)
    exc = SystemExit(code)
    if raised:
        with pytest.raises(SystemExit) as info:
            calls.swallow(exc)
        assert info.value is exc
    else:
        assert calls.swallow(exc) is None


def test_a_shutdown_waits_once_for_a_component_that_works_and_closes(monkeypatch):
    """``_stop_background_work`` (the ``ray.shutdown`` wrapper's, and the
    interpreter exit's) takes each component once, though a collector whose
    thread works and whose teardown is under way is in two of its sets: two
    waits would double its bound. The copy is taken under the sets' lock."""
    import weakref

    from impl import component

    class Closing:
        _closing_thread = None  # another thread's teardown, as far as this call knows
        _shutdown_timeout = 1.0

        def __init__(self):
            self.waits = []

        def _teardown(self, timeout, shutdown_ray, reason):
            self.waits.append((timeout, shutdown_ray, reason))

    one = Closing()
    working, closing = weakref.WeakSet([one]), weakref.WeakSet([one])
    monkeypatch.setattr(component, "_WORKING", working)
    monkeypatch.setattr(component, "_CLOSING", closing)
    monkeypatch.setattr(component, "_INTERRUPTED", set())
    component._stop_background_work("ray.shutdown()")
    assert one.waits == [(1.0, False, "ray.shutdown()")]
