"""Known-buggy variants of the reference: ``--impl regression:<id>``.

Each variant subclasses one reference component and reintroduces one bug
seen in the wild, as faithfully as the reference allows. ``catches`` lists
quick-profile scenarios expected to fail on it; the project's own tests
check that they do, and that the reference passes them (the suite's
detection power is itself under test).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import ray

from conformance.adapters.reference import ReferenceAdapter


@dataclass(frozen=True)
class Regression:
    id: str
    description: str
    source: str
    catches: tuple[str, ...]
    overrides: dict  # component kind -> function(reference class) -> buggy class


def _seed000_collector(base):
    class Collector(base):
        def shutdown(self, timeout=None, shutdown_ray=False):
            super().shutdown(timeout)
            ray.shutdown()  # the old torchrl RayCollector.shutdown(): kills every actor

    return Collector


def _seed000_buffer(base):
    class Buffer(base):
        def close(self, timeout=None, shutdown_ray=False):
            handles = list(self._actors)
            super().close(timeout)
            for h in handles:
                ray.kill(h)  # old RayReplayBuffer.close(): no guard for a dead runtime

    return Buffer


def _restart_buffer(base):
    class Buffer(base):
        def close(self, timeout=None, shutdown_ray=False):
            handles = list(self._actors)
            super().close(timeout)
            for h in handles:
                try:
                    ray.kill(h)  # a stale handle: Ray auto-starts a new runtime
                except Exception:
                    pass

    return Buffer


def _liveness_never_dead(base):
    class Component(base):
        def is_alive(self):
            return not self._closed_reason  # never asks the actors (NexRL's shape)

    return Component


def _close_not_idempotent(base):
    class Buffer(base):
        def close(self, timeout=None, shutdown_ray=False):
            if self._closed_reason:
                raise RuntimeError("RayReplayBuffer: actor already killed")
            super().close(timeout, shutdown_ray)

    return Buffer


def _unused_teardown_raises(base):
    class Collector(base):
        def __iter__(self):
            self._iterated = True
            return super().__iter__()

        def shutdown(self, timeout=None, shutdown_ray=False):
            if not getattr(self, "_iterated", False):
                # like torchrl's early versions: state set only by iteration
                return self._iteration_state.close()
            super().shutdown(timeout, shutdown_ray)

    return Collector


def _abort_on_close(base):
    class Buffer(base):
        def close(self, timeout=None, shutdown_ray=False):
            if not ray.is_initialized():
                os.abort()  # stands in for Ray 2.50's C++ "Check failed" abort
            super().close(timeout, shutdown_ray)

    return Buffer


def _eval_unbounded_shutdown(base):
    class Evaluator(base):
        def shutdown(self, timeout=None, shutdown_ray=False):
            if self._actors and ray.is_initialized():
                # torchrl RayEvalWorker.shutdown(): ray.get with no timeout
                ray.get(self._actors[0].close_env.remote())
            super().shutdown(timeout, shutdown_ray)

    return Evaluator


REGRESSIONS = {r.id: r for r in (
    Regression(
        "seed000-collector-shuts-down-ray",
        "collector.shutdown() calls ray.shutdown(), killing the buffer it does not "
        "own; buffer.close() then kills a stale handle",
        "shared/seeds/000 (torchrl RayCollector + RayReplayBuffer, fixed by shutdown_ray=False)",
        ("order/local/user/collector>buffer>evaluator>ray",
         "exhaustion/local/user/buffer-mode"),
        {"collector": _seed000_collector, "buffer": _seed000_buffer},
    ),
    Regression(
        "stale-handle-restarts-ray",
        "buffer.close() calls ray.kill on its handle after ray.shutdown(): Ray starts "
        "a new runtime silently (2.60) or aborts (2.50)",
        "shared/ray-facts.md, 'Using handles after ray.shutdown()'",
        ("order/local/user/ray>collector>buffer>evaluator",),
        {"buffer": _restart_buffer},
    ),
    Regression(
        "liveness-never-dead",
        "is_alive() reports the component's own flag and never notices a dead actor",
        "shared/seeds/001 (NexRL check_module_liveness)",
        ("killed/local/user/buffer-sigkill>teardown",),
        {"buffer": _liveness_never_dead, "collector": _liveness_never_dead},
    ),
    Regression(
        "close-not-idempotent",
        "a second buffer.close() raises",
        "torchrl RayReplayBuffer.close() before the fix (delattr, then AttributeError)",
        ("double_close/local/user/buffer-twice",),
        {"buffer": _close_not_idempotent},
    ),
    Regression(
        "unused-teardown-raises",
        "collector.shutdown() of a collector never iterated raises AttributeError",
        "a teardown that assumes iteration state exists",
        ("early_break/local/user/async-after-0",),
        {"collector": _unused_teardown_raises},
    ),
    Regression(
        "abort-on-close",
        "buffer.close() after ray.shutdown() aborts the process (the crash of seed 000 "
        "on Ray 2.50, reproduced with os.abort on any Ray)",
        "shared/seeds/000, Ray 2.50 'Check failed: it != actor_handles_.end()'",
        ("order/local/user/ray>collector>buffer>evaluator",),
        {"buffer": _abort_on_close},
    ),
    Regression(
        "eval-shutdown-unbounded",
        "eval worker shutdown() waits for the actor's env close with no timeout: a hung "
        "actor hangs the teardown forever",
        "shared/seeds/004 (torchrl RayEvalWorker.shutdown)",
        ("killed/local/user/evaluator-hang>teardown",),
        {"evaluator": _eval_unbounded_shutdown},
    ),
)}


def ids() -> list[str]:
    return sorted(REGRESSIONS)


class RegressionAdapter(ReferenceAdapter):
    """The reference adapter building the buggy classes of one regression."""

    def __init__(self, regression: Regression):
        super().__init__()
        self.regression = regression
        self.name = f"regression:{regression.id}"
        impl = self.impl
        bases = {"collector": impl.RayCollector, "buffer": impl.RayReplayBuffer,
                 "evaluator": impl.RayEvalWorker}
        self.classes = {k: regression.overrides.get(k, lambda b: b)(b) for k, b in bases.items()}

    def make_buffer(self, spec):
        return self._with("buffer", super().make_buffer, spec)

    def make_collector(self, spec, buffer=None):
        return self._with("collector", super().make_collector, spec, buffer)

    def make_evaluator(self, spec):
        return self._with("evaluator", super().make_evaluator, spec)

    def _with(self, kind, build, *args):
        obj = build(*args)
        obj.__class__ = self.classes[kind]  # same state, buggy methods
        return obj


def make(regression_id: str) -> RegressionAdapter:
    return RegressionAdapter(REGRESSIONS[regression_id])
