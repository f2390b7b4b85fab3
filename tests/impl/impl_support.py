"""Helpers for tests/impl, importable in Ray workers too.

No torch import at module level: the eval worker test checks that
``init_fn`` runs before torch is imported in the actor process.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable

import psutil
import ray


# The readiness wait every test's component gets unless the test is about that
# wait (the reference's default is 30 s). On CI (stop 37, 2026-11-27), beside
# the waits_for_deadline lane and the RLlib/Tianshou venv builds, two tests
# failed with ReadinessTimeout: 0.5-CPU eval and collector actors of an idle
# 4-CPU cluster were not ready within 30 s. A slow actor start is not what
# these tests judge; a start that never comes still fails, after this long.
READY_TIMEOUT = 120.0


def ray_temp_dir() -> str:
    return f"/tmp/rlc-impl-{os.getpid()}"


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def threads_since(before: set) -> str:
    """Name and current stack of every thread not in ``before`` ('' if none):
    the message of a failed no-leftover-thread assertion."""
    import threading
    import traceback

    frames = sys._current_frames()
    out = []
    for t in threading.enumerate():
        if t not in before:
            stack = "".join(traceback.format_stack(frames[t.ident])) if t.ident in frames else ""
            out.append(f"thread {t.name!r} (daemon={t.daemon}):\n{stack}")
    return "\n".join(out)


def timed(fn: Callable, *args, **kwargs) -> float:
    start = time.monotonic()
    fn(*args, **kwargs)
    return time.monotonic() - start


def live_actors() -> list[dict]:
    """Actors of this driver's job that are not DEAD (GCS actor table)."""
    job = ray._private.worker.global_worker.current_job_id.hex()
    return [
        {k: a[k] for k in ("ActorClassName", "State", "Name", "Pid")}
        for a in ray._private.state.actors().values()
        if a["JobID"] == job and a["State"] != "DEAD"
    ]


def actor_state(handle) -> str:
    return ray._private.state.state.actor_table(handle._actor_id.hex())["State"]


def ray_processes() -> list[psutil.Process]:
    """Processes of the Ray this test process started: its descendants, and
    any process (also orphaned ones) whose command line names its temp dir."""
    me = psutil.Process()
    # Descendants that are Ray's (workers "ray::...", binaries and agents under
    # site-packages/ray/); other children, e.g. orphans adopted by a subreaper
    # set up by another test module in this worker, are not ours to judge.
    found = {p.pid: p for p in me.children(recursive=True) if _is_ray(p)}
    for p in psutil.process_iter(["cmdline"]):
        if ray_temp_dir() in " ".join(p.info["cmdline"] or ()):
            found.setdefault(p.pid, p)
    found.pop(me.pid, None)
    return [p for p in found.values() if _running(p)]


def _is_ray(p: psutil.Process) -> bool:
    try:
        cmd = " ".join(p.cmdline())
    except psutil.Error:
        return False
    return cmd.startswith("ray::") or "/ray/" in cmd


def _running(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def assert_no_ray_processes(timeout: float = 15.0) -> None:
    """Fail if Ray processes this test process started outlive ray.shutdown();
    kill them (by pid, they are ours) so that later tests are not affected."""
    if wait_until(lambda: not ray_processes(), timeout, interval=0.2):
        return
    left = ray_processes()
    names = [(p.pid, " ".join(p.cmdline()[:2])) for p in left]
    for p in left:
        try:
            p.kill()
        except psutil.Error:
            pass
    raise AssertionError(f"Ray processes left behind: {names}")


# -- callables sent to actors (pickled by reference) --------------------------

def linear_policy(bias: tuple[float, float] = (1.0, 0.0)):
    """A deterministic TensorDictModule for CartPole: argmax(0 @ obs + bias)."""
    import torch
    from tensordict.nn import TensorDictModule, TensorDictSequential

    linear = torch.nn.Linear(4, 2)
    with torch.no_grad():
        linear.weight.zero_()
        linear.bias.copy_(torch.tensor(bias))
    return TensorDictSequential(
        TensorDictModule(linear, in_keys=["observation"], out_keys=["logits"]),
        TensorDictModule(_argmax, in_keys=["logits"], out_keys=["action"]),
    )


def _argmax(logits):
    return logits.argmax(-1)


def always_one(observation):
    """A plain callable policy on the observation tensor."""
    return 1


def cartpole():
    import gymnasium as gym

    return gym.make("CartPole-v1")


class BrokenCartPole:
    """create_env_fn / env_maker: CartPole whose step ``at`` (and every later
    one) raises (``how="raise"``: a crashed simulator) or never returns
    (``how="hang"``: a stuck one, until the actor is killed)."""

    def __init__(self, at: int, how: str):
        self.at, self.how = at, how

    def __call__(self):
        import gymnasium as gym

        at, how = self.at, self.how

        class Broken(gym.Wrapper):
            steps = 0

            def step(self, action):
                self.steps += 1
                while self.steps >= at and how == "hang":
                    time.sleep(3600)
                if self.steps >= at:
                    raise RuntimeError(f"simulator crashed at step {self.steps}")
                return self.env.step(action)

        return Broken(gym.make("CartPole-v1"))


def record_torch_imported():
    """init_fn: remember whether torch was imported before it ran."""
    os.environ["IMPL_TEST_TORCH_BEFORE_INIT"] = str("torch" in sys.modules)


def linear_module_policy(env):
    """policy_maker: a plain nn.Module on observations, argmax of a linear."""
    import torch

    class Policy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 2)

        def forward(self, obs):
            return self.linear(obs).argmax(-1)

    return Policy()


def constant_policy_maker(env):
    return always_one


@ray.remote(num_cpus=0)
def write_through(client, rows: int) -> int:
    """A Ray task writing ``rows`` rows through a replay buffer client."""
    import torch
    from tensordict import TensorDict

    client.extend(TensorDict(x=torch.arange(rows, dtype=torch.float32), batch_size=[rows]))
    return len(client)


@ray.remote(num_cpus=0)
class Sentinel:
    """An actor the user owns; components must never kill it."""

    def ping(self) -> str:
        return "pong"
