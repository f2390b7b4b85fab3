"""Known-buggy variants of the reference: ``--impl regression:<id>``.

Each variant subclasses one reference component and reintroduces one bug
seen in the wild, as faithfully as the reference allows. ``catches`` names,
per catching scenario, the verdict and the failing oracles expected (on both
fixtures and, where the bug applies, both owners); the project's own tests
check each, and that the reference passes those scenarios: a variant that
fails for another reason (say a TypeError in its override) is not "caught".
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import ray

from conformance.adapters.reference import ReferenceAdapter


@dataclass(frozen=True)
class Catch:
    """A scenario that catches a variant, and how.

    ``scenario``: an id whose fixture (and owner) may be ``*``: local and
    multinode (user and impl). ``oracles``: every oracle that fails, exactly;
    ``may_also``: oracles that fail in some runs and not others (measured:
    e.g. processes a killed hung driver leaves, a thread that ends by itself
    before the final probe)."""

    scenario: str
    verdict: str
    oracles: tuple
    may_also: tuple = ()
    #: oracles that may answer unknown in this run (measured: e.g. the GCS of
    #: a runtime the buggy thread started while Ray shut down does not answer)
    may_be_unknown: tuple = ()

    def ids(self, cross: bool = True) -> list[str]:
        """The scenario ids: every fixture with every owner (``cross``), or
        each fixture once with the owners taken in turn (local/user,
        multinode/impl): both fixtures and both owners, in half the runs."""
        family, fixture, owner, variant = self.scenario.split("/", 3)
        fixtures = ("local", "multinode") if fixture == "*" else (fixture,)
        owners = ("user", "impl") if owner == "*" else (owner,)
        if cross:
            return [f"{family}/{fx}/{ow}/{variant}" for fx in fixtures for ow in owners]
        return [f"{family}/{fx}/{owners[k % len(owners)]}/{variant}"
                for k, fx in enumerate(fixtures)]


@dataclass(frozen=True)
class Regression:
    id: str
    description: str
    source: str
    catches: tuple  # of Catch
    overrides: dict  # component kind -> function(reference class) -> buggy class
    #: the fixtures a catch is claimed on (every run there, measured); another
    #: fixture is left out only with the measured reason in the catch's comment
    fixtures: tuple = ("local", "multinode")


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


def _blind_to_ray_gone(base):
    class Buffer(base):
        def _check_open(self, method):
            # only its own teardown closes it: a runtime the user shut down
            # goes unnoticed (the mutant of RayComponent._check_open that
            # survived every scenario: ci/results/mutation/)
            if self._closed_reason is not None:
                from impl.errors import ComponentClosedError

                raise ComponentClosedError(type(self).__name__, method, self._closed_reason)

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


def _kills_stale_handles(base):
    class Buffer(base):
        def close(self, timeout=None, shutdown_ray=False):
            handles = list(self._actors)
            super().close(timeout, shutdown_ray)
            for h in handles:
                # "make sure they are gone": no check that the handles belong to
                # the runtime that is up now (after a restart they do not)
                ray.kill(h)

    return Buffer


def _retries_dead_actor(base):
    class Collector(base):
        def _fetch(self, refs, method):
            from impl.errors import ComponentClosedError

            while True:
                try:
                    return super()._fetch(refs, method)
                except ComponentClosedError:
                    raise
                except Exception:  # "transient": fetch the same batch again, forever
                    self._stop_event.wait(0.05)

    return Collector


def _always_detached(base):
    class Evaluator(base):
        def __init__(self, *args, **kwargs):
            # detached "so that other drivers can use it", named or not: on a
            # cluster it outlives a driver that exits without shutdown()
            super().__init__(*args, **{"lifetime": "detached", **kwargs})

    return Evaluator


def _liveness_never_dead(base):
    class Component(base):
        def is_alive(self):
            return not self._closed_reason  # never asks the actors (NexRL's shape)

    return Component


def _liveness_first_actor_only(base):
    class Component(base):
        def is_alive(self):
            from impl import calls

            if self._closed_reason or not self._actors:
                return False
            try:  # pings its first actor only: the others may be dead
                return calls.get(calls.call(self._actors[0], "ping"), timeout=self.ping_timeout) is not None
            except Exception:
                return False

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


def _background_shutdown_noop(base):
    class Collector(base):
        def shutdown(self, timeout=None, shutdown_ray=False):
            if self._thread is not None:
                return  # "the background thread cleans up by itself" - it never does
            super().shutdown(timeout, shutdown_ray)

    return Collector


def _closed_buffer_index_error(base):
    class Buffer(base):
        def sample(self, batch_size=None):
            from impl import calls

            # no closed check: the handle list is empty after close() -> IndexError
            return calls.get(calls.call(self._actors[0], "sample", batch_size or 4))

    return Buffer


def _from_name_owns_actor(base):
    class Evaluator(base):
        @classmethod
        def from_name(cls, *args, **kwargs):
            worker = super().from_name(*args, **kwargs)
            worker._owns_actors = True  # a borrowed handle that kills the owner's actor
            return worker

    return Evaluator


def _named_worker_never_killed(base):
    class Evaluator(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if self.name is not None:
                # "a named worker is shared with other drivers": its owner's
                # shutdown() only drops the handle, as a from_name handle's does
                self._owns_actors = False

    return Evaluator


def _named_in_driver_namespace(base):
    class Evaluator(base):
        def __init__(self, *args, namespace=None, **kwargs):
            # the name goes into the creating driver's namespace, whatever is asked
            super().__init__(*args, namespace=None, **kwargs)

        @classmethod
        def from_name(cls, name, namespace=None, **kwargs):
            return super().from_name(name, None, **kwargs)  # looked up in the caller's

    return Evaluator


_KEPT_ALIVE: list = []  # a module-level registry, as a buggy library's cache or thread would hold


def _construct_leaks_actors(base):
    class Component(base):
        def _abort_construction(self):
            # Keeps the actors it created referenced (Ray would reap unreferenced
            # ones), then forgets them, so nobody kills them.
            _KEPT_ALIVE.extend(self._actors)
            self._actors = []
            super()._abort_construction()

    return Component


def _start_flush_thread(actor):
    """Runs inside the buffer's actor (``__ray_call__``): a non-daemon thread,
    as a write-behind cache or a metrics flusher would start."""
    stop = threading.Event()
    threading.Thread(target=lambda: stop.wait(3600.0), name="flush", daemon=False).start()
    actor._rlc_flush_stop = stop


def _graceful_exit_zombie(base):
    class Buffer(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            from impl import calls

            calls.get([calls.call(h, "__ray_call__", _start_flush_thread) for h in self._actors])

        def _kill_actors(self, deadline):
            from impl import calls

            actors, self._actors = self._actors, []
            for handle in actors:
                # "let the actor exit cleanly" instead of ray.kill: Ray reports
                # it DEAD at once, and its process waits for the non-daemon
                # thread forever (measured on Ray 2.60: still running 10 s later)
                calls.call(handle, "__ray_terminate__")

    return Buffer


def _waits_for_batch_in_flight(base):
    class Collector(base):
        def _wait(self, refs, method, num_returns=1, timeout=None):
            from impl import calls

            # one blocking wait per batch: the stop flag is looked at between
            # batches only
            return calls.wait(refs, num_returns=num_returns, timeout=timeout)[0]

        def _join_thread(self, deadline):
            if self._thread is not None and self._thread is not threading.current_thread():
                self._thread.join()  # "let the batch in flight finish": no bound

    return Collector


def _exit_hangs(base):
    class Collector(base):
        def start(self):
            super().start()
            # a non-daemon worker thread that only shutdown() stops: the
            # interpreter waits for it at exit
            self._keepalive_stop = threading.Event()
            self._keepalive = threading.Thread(target=self._keepalive_stop.wait,
                                               name="RayCollector-keepalive")
            self._keepalive.start()

        def shutdown(self, *args, **kwargs):
            super().shutdown(*args, **kwargs)
            if getattr(self, "_keepalive_stop", None) is not None:
                self._keepalive_stop.set()

    return Collector


def _background_unguarded(base):
    class Collector(base):
        def _start_background(self, target, name):
            # Not registered: neither ray.shutdown() nor the interpreter exit
            # stops this thread before Ray's core worker goes away.
            with self._lock:
                if self._thread is not None:
                    return
                self._thread = threading.Thread(target=target, name=name, daemon=True)
            self._thread.start()

        def _collect_in_background(self):
            actors = list(self._actors)
            while not self._stop_event.is_set():
                try:  # Ray's public API, as a library calls it: it auto-starts Ray
                    ray.get([a.next_to_buffer.remote() for a in actors])
                except BaseException:  # "transient" errors, SystemExit from Ray's shutdown too
                    if self._closed_reason is not None:
                        return
                    self._stop_event.wait(0.1)

    return Collector


def _sequential_close(base):
    class Collector(base):
        def _before_kill(self, actors, deadline):
            from impl import calls

            for handle in actors:  # one close RPC at a time, each waited for in full
                try:
                    calls.wait([calls.call(handle, "update_policy_weights_", None)], timeout=30.0)
                except BaseException:
                    pass

    return Collector


REGRESSIONS = {r.id: r for r in (
    Regression(
        "seed000-collector-shuts-down-ray",
        "collector.shutdown() calls ray.shutdown(), killing the buffer it does not "
        "own; buffer.close() then kills a stale handle",
        "shared/seeds/000 (torchrl RayCollector + RayReplayBuffer, fixed by shutdown_ray=False)",
        (Catch("order/*/user/collector>buffer>evaluator>ray", "fail",
               ("no_ray_restart", "others_untouched", "ray_not_shut_down_by_non_owner",
                "teardown_never_raises")),
         Catch("order/*/impl/collector>buffer>evaluator>ray", "fail",
               ("no_ray_restart", "others_untouched", "teardown_never_raises")),
         Catch("exhaustion/*/user/buffer-mode", "fail",
               ("data_kept", "others_untouched", "ray_not_shut_down_by_non_owner")),
         Catch("exhaustion/*/impl/buffer-mode", "fail", ("data_kept", "others_untouched"))),
        {"collector": _seed000_collector, "buffer": _seed000_buffer},
    ),
    Regression(
        "stale-handle-restarts-ray",
        "buffer.close() calls ray.kill on its handle after ray.shutdown(): Ray starts "
        "a new runtime silently (2.60) or aborts (2.50)",
        "shared/ray-facts.md, 'Using handles after ray.shutdown()'",
        (Catch("order/*/*/ray>collector>buffer>evaluator", "fail", ("no_ray_restart",)),),
        {"buffer": _restart_buffer},
    ),
    Regression(
        "blind-to-ray-gone",
        "the buffer does not notice that the user shut Ray down under it: its calls go to "
        "Ray through handles of a runtime that is gone instead of raising a closed error",
        "mutation analysis of the reference (ci/results/mutation/: RayComponent._check_open's "
        "runtime check, executed by no scenario before use_after_close/*/*/*-ray-shutdown-no-teardown)",
        (Catch("use_after_close/*/*/buffer-ray-shutdown-no-teardown", "fail",
               ("use_after_close_clear_error",)),),
        {"buffer": _blind_to_ray_gone},
    ),
    Regression(
        "kills-stale-handles",
        "buffer.close() kills its actor handles without checking that they belong to the "
        "running Ray runtime: after the user restarted Ray it raises (2.60) or aborts (2.50)",
        "ray-project/ray#59340 (ray.kill on a handle from an earlier session)",
        (Catch("restart/*/*/buffer>collector>evaluator", "fail", ("teardown_never_raises",)),),
        {"buffer": _kills_stale_handles},
    ),
    Regression(
        "retries-dead-actor",
        "the collector retries a batch whose actor died, forever: a kill that lands while "
        "a batch is in flight hangs the user's loop",
        "retry-on-error loops around ray.get (ray-project/ray#54260 for the kill/complete race)",
        (Catch("killed/*/*/collector-sigkill-in-flight>teardown", "hang", ("no_hang",),
               may_also=("no_leftover_process",)),),
        {"collector": _retries_dead_actor},
    ),
    Regression(
        "eval-worker-always-detached",
        "the eval worker's actor is detached even without a name: a connected driver that "
        "exits with it open leaves it running on the cluster for good",
        "detached actors outlive their driver (shared/ray-facts.md, 'Ownership and lifetimes')",
        # a connected driver exists on the multinode fixture only: on local
        # the runtime, and every actor in it, ends with the driver
        (Catch("exit/multinode/*/all-open", "fail", ("no_actor_outlives_driver",)),),
        {"evaluator": _always_detached},
        fixtures=("multinode",),
    ),
    Regression(
        "liveness-never-dead",
        "is_alive() reports the component's own flag and never notices a dead actor",
        "shared/seeds/001 (NexRL check_module_liveness)",
        (Catch("killed/*/*/buffer-sigkill>teardown", "fail", ("liveness_reports_death",)),
         # each fixture and owner has its own walk for a seed; seed 4's kills
         # and checks liveness on three of them
         Catch("walk/*/user/seed-4", "fail", ("liveness_reports_death",)),
         Catch("walk/multinode/impl/seed-4", "fail", ("liveness_reports_death",))),
        {"buffer": _liveness_never_dead, "collector": _liveness_never_dead,
         "evaluator": _liveness_never_dead},
    ),
    Regression(
        "liveness-first-actor-only",
        "is_alive() pings only the component's first actor: the death of any other goes unseen",
        "a liveness check written for one actor, used on a multi-actor component",
        (Catch("killed/*/*/collector-sigkill-last>teardown", "fail", ("liveness_reports_death",)),),
        {"collector": _liveness_first_actor_only},
    ),
    Regression(
        "close-not-idempotent",
        "a second buffer.close() raises",
        "torchrl RayReplayBuffer.close() before the fix (delattr, then AttributeError)",
        (Catch("double_close/*/*/buffer-twice", "fail", ("teardown_never_raises",)),),
        {"buffer": _close_not_idempotent},
    ),
    Regression(
        "unused-teardown-raises",
        "collector.shutdown() of a collector never iterated raises AttributeError",
        "a teardown that assumes iteration state exists",
        (Catch("early_break/*/*/async-after-0", "fail", ("teardown_never_raises",)),),
        {"collector": _unused_teardown_raises},
    ),
    Regression(
        "abort-on-close",
        "buffer.close() after ray.shutdown() aborts the process (the crash of seed 000 "
        "on Ray 2.50, reproduced with os.abort on any Ray)",
        "shared/seeds/000, Ray 2.50 'Check failed: it != actor_handles_.end()'",
        (Catch("order/*/*/ray>collector>buffer>evaluator", "crash", ("no_crash",)),),
        {"buffer": _abort_on_close},
    ),
    Regression(
        "eval-shutdown-unbounded",
        "eval worker shutdown() waits for the actor's env close with no timeout: a hung "
        "actor hangs the teardown forever",
        "shared/seeds/004 (torchrl RayEvalWorker.shutdown)",
        (Catch("killed/*/*/evaluator-hang>teardown", "hang", ("no_hang",),
               may_also=("no_leftover_process",)),),
        {"evaluator": _eval_unbounded_shutdown},
    ),
    Regression(
        "background-shutdown-noop",
        "collector.shutdown() returns at once while the background thread runs, "
        "leaving the thread and the actors running",
        "a teardown that delegates to a background thread which never checks for it",
        (Catch("background/*/*/stop-from-main", "fail",
               ("no_leftover_actor", "own_actors_dead_after_teardown", "threads_joined"),
               may_also=("no_leftover_thread",)),),
        {"collector": _background_shutdown_noop},
    ),
    Regression(
        "closed-buffer-index-error",
        "buffer.sample() after close() raises IndexError instead of a closed error",
        "torchrl RayReplayBuffer after close(): delattr(_rb), then AttributeError on use",
        (Catch("use_after_close/*/*/buffer", "fail", ("use_after_close_clear_error",)),),
        {"buffer": _closed_buffer_index_error},
    ),
    Regression(
        "from-name-owns-actor",
        "a from_name handle's shutdown() kills the named actor it does not own",
        "torchrl RayEvalWorker.shutdown() kills the actor for every handle",
        (Catch("named/*/*/peer-then-owner", "fail", ("liveness_reports_death", "name_freed")),),
        {"evaluator": _from_name_owns_actor},
    ),
    Regression(
        "named-worker-outlives-owner",
        "the owner's shutdown() of a named eval worker only drops its handle: the detached "
        "actor and its name live on after every driver exited (on a cluster, for good)",
        "a named worker treated as shared by every handle (cf. torchrl RayEvalWorker, whose "
        "handles all kill it: from-name-owns-actor)",
        # on a cluster that outlives the driver the detached worker is also
        # still there after its exit (measured on both owners, 2026-11-23;
        # removed by the harness afterwards, conformance.cleanup)
        (Catch("named/local/*/peer-then-owner", "fail",
               ("name_freed", "no_leftover_actor", "own_actors_dead_after_teardown")),
         Catch("named/multinode/*/peer-then-owner", "fail",
               ("name_freed", "no_actor_outlives_driver", "no_leftover_actor",
                "own_actors_dead_after_teardown"))),
        {"evaluator": _named_worker_never_killed},
    ),
    Regression(
        "named-in-driver-namespace",
        "a named eval worker is registered in the creating driver's namespace and looked "
        "up in the caller's: a second driver that called a bare ray.init() never finds it",
        "torchrl RayEvalWorker(name=...) and from_name(name) take no namespace",
        (Catch("named/*/user/peer-then-owner-bare-init", "fail", ("peer_ok",)),),
        {"evaluator": _named_in_driver_namespace},
    ),
    Regression(
        "construct-leaks-actors",
        "a failing constructor neither kills the actors it already created nor lets go of them",
        "a constructor without cleanup on error",
        # user owner only: an implementation that started Ray shuts it down
        # when its constructor fails, and the leaked actors go with it
        (Catch("construction_failure/*/user/collector-one_unknown_env", "fail",
               ("fails_clearly",)),),
        {"collector": _construct_leaks_actors, "evaluator": _construct_leaks_actors},
    ),
    Regression(
        "sequential-close-rpcs",
        "collector.shutdown() sends each actor a close RPC and waits for it (30 s command "
        "timeout) before the next: one hung actor blocks teardown past its bound",
        "pytorch/rl#4017 (Ray learner ranks closed one after another)",
        (Catch("killed/*/*/collector-hang>teardown", "fail", ("teardown_within_bound",)),),
        {"collector": _sequential_close},
    ),
    Regression(
        "background-thread-unguarded",
        "start()'s thread is not stopped before ray.shutdown() or the interpreter exit "
        "and retries its public Ray calls through the errors they raise then: its next "
        "call starts a new Ray runtime from the thread",
        "ray-project/ray#31145, #48018, #61678 (a thread inside a Ray call at shutdown)",
        # measured: local fails every run (6 of 6), multinode 3 of 6 (there
        # the thread's reconnection races the teardown that follows), so the
        # catch is claimed on local only
        (Catch("background/local/*/ray-shutdown-under-thread", "fail", (),
               may_also=("no_ray_restart", "no_leftover_process", "threads_joined",
                         "no_leftover_thread"),
               may_be_unknown=("no_leftover_actor",)),),
        {"collector": _background_unguarded},
        fixtures=("local",),
    ),
    Regression(
        "graceful-exit-zombie",
        "buffer.close() ends its actor with the graceful __ray_terminate__ instead of "
        "ray.kill, and the actor runs a non-daemon thread: Ray reports the actor DEAD while "
        "its worker process runs on",
        "ray-project/ray#52322 (actors Ray reports DEAD whose processes still run)",
        (Catch("double_close/*/*/buffer-twice", "fail", ("no_leftover_process",)),),
        {"buffer": _graceful_exit_zombie},
    ),
    Regression(
        "waits-for-batch-in-flight",
        "collector.shutdown() lets the background thread finish the batch in flight (one "
        "blocking wait per batch, an unbounded join): a batch longer than the bound makes "
        "the teardown overrun it",
        "a graceful stop that waits for the worker's current item (torchrl 0.14.1 bounds its "
        "join at 5 s and leaves the thread running instead: see ci/results/torchrl)",
        (Catch("background/*/*/long-batch>teardown>ray", "fail", ("teardown_within_bound",)),),
        {"collector": _waits_for_batch_in_flight},
    ),
    Regression(
        "exit-hangs-on-thread",
        "start() also starts a non-daemon thread that only shutdown() stops: an "
        "interpreter exit with the collector open never finishes",
        "a non-daemon background thread",
        (Catch("exit/*/*/background-running", "hang", ("no_hang",),
               may_also=("no_leftover_process",)),),
        {"collector": _exit_hangs},
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

    def _component_classes(self) -> dict:
        classes = super()._component_classes()
        for kind, override in self.regression.overrides.items():
            base = classes[kind]
            cls = override(base)
            cls.__name__ = cls.__qualname__ = base.__name__  # errors name RayCollector, not Component
            classes[kind] = cls
        return classes


def make(regression_id: str) -> RegressionAdapter:
    return RegressionAdapter(REGRESSIONS[regression_id])
