"""The lifecycle families. Each is a generator of scenarios for one fixture,
one ownership case and the components an implementation has (``comps``, in
the order of ``build.ALL``); ``quick=True`` marks the CI-gate slice (chosen for
what catches bugs: ``ray.shutdown()`` first, faults before teardown).

Component subsets: a scenario written for every component runs with the
ones the implementation has, and its id says so (``~no-evaluator``, see
:func:`subset_variant`); a scenario about a component it lacks does not
exist for it (it is not skipped: there is nothing to run).
"""
from __future__ import annotations

import itertools

from conformance.catalog.build import ALL, ENDLESS_IN_PRACTICE, FAILING_ENV, HANGABLE_ENV, \
    HELPER_ENV, LONG_BATCH_ENV, SLOW_CLOSE_ENV, SLOW_CLOSE_HELPER_ENV, SLOW_ENV, build, op, \
    place_args, requirements, subset_variant, teardowns, warm_up
from conformance.catalog.quick_slots import quick_on
from conformance.ops.verbs import KILL_HOWS
from conformance.ops.scenario import Scenario


def make(family, fixture, owner, variant, ops, *, quick=False, impl_quick=False,
         spec=None, seed=None, built=None):
    """A scenario. ``quick``: in the CI gate for the ``user`` owner; the
    ``impl`` owner joins it only where ownership is the point (``impl_quick``);
    on the local fixture only for the slots ``quick_slots.QUICK_ON_LOCAL`` lists.
    ``built``: the components a scenario written for all of them was built
    with (its variant then names those left out)."""
    ops = tuple(ops)
    quick = quick and (owner == "user" or impl_quick) and quick_on(fixture, family, owner, variant)
    if built is not None:
        variant = subset_variant(variant, built)
    return Scenario(
        family=family, fixture=fixture, owner=owner, variant=variant, ops=ops,
        spec=dict(spec or {}), requires=requirements(ops, spec),
        profiles=("quick", "full") if quick else ("full",), seed=seed,
    )


def _mode(sync: bool) -> str:
    return "sync" if sync else "async"


def _without(perm, comps):
    """A teardown order over ``comps`` and "ray": ``perm`` minus the absent."""
    return tuple(t for t in perm if t == "ray" or t in comps)


#: seconds is_alive() must go on answering False after a death Ray could
#: undo by restarting the actor (SIGKILL, os._exit: an actor created with
#: max_restarts comes back, without its state): a restart took 1.0 and 1.8 s
#: here (a buffer actor, SIGKILL to ping answered, measured)
STAYS_DEAD = 3.0
#: kills Ray may undo by restarting the actor (``ray.kill`` asks for no restart)
RESTARTABLE = ("sigkill", "exit")


def alive_now(comp):
    """is_alive() of a healthy component: True at the first answer (a cached
    True would then hide the death that follows)."""
    return op("check_alive", comp, expect=True)


def early_break(fixture, owner, comps=ALL):
    """Break after 0, 1, 2 batches, then teardown; or drop everything and exit."""
    for sync, k in itertools.product((False, True), (0, 1, 2)):
        ops = [*build(fixture, ("collector",), sync=sync),
               op("iterate", "collector", batches=k), op("teardown", "collector")]
        # async-after-2 too: two batches read into the driver, a healthy run whose
        # Python warnings from the implementation's code show (quiet_when_healthy;
        # mutation analysis: batches.py:36's read-only arrays left uncopied)
        yield make("early_break", fixture, owner, f"{_mode(sync)}-after-{k}", ops,
                   quick=(k == (1 if sync else 0)) or (not sync and k == 2))
    # one collector actor, sync: every round stacks a single actor's batch
    # (users often start with one remote collector; the random walks have
    # one actor but collect async, and a mutant indexing the second of the
    # stacked batches survived every quick scenario: ci/results/mutation)
    ops = [*build(fixture, ("collector",), sync=True), op("iterate", "collector", batches=2),
           op("teardown", "collector")]
    yield make("early_break", fixture, owner, "sync-1-actor-after-2", ops, quick=True,
               spec={"num_collectors": 1})
    # first ready, first served: the first actor steps a very slow env (a batch:
    # 12.8 s), the second CartPole; the fast one's 4 batches come within 4 s, it being asked
    # again the moment its batch was yielded (mutation analysis: collector.py:172
    # and :178 of tree 300f2f5, an async collector that waited for every actor)
    ops = [op("construct", "collector", **place_args(fixture, "collector", None), sync=False,
              per_actor_envs=LONG_BATCH_ENV["env_id"]),
           op("iterate", "collector", batches=4, within=4.0), op("teardown", "collector")]
    yield make("early_break", fixture, owner, "async-slow-actor-after-4", ops, quick=True)
    # total_frames=-1: no target, collect without end (torchrl's default and
    # its docstring's words); a break after 2 batches must get 2
    ops = [*build(fixture, ("collector",)), op("iterate", "collector", batches=2),
           op("teardown", "collector")]
    yield make("early_break", fixture, owner, "endless-after-2", ops, quick=True,
               spec={"total_frames": -1})
    if "buffer" not in comps:
        return
    # check_data before the teardown reads what the buffer holds: the one after
    # must not be fewer (data_kept)
    ops = [*build(fixture, ("buffer", "collector")), op("iterate", "collector", batches=2),
           op("check_data", "buffer"), op("teardown", "collector"), op("check_data", "buffer"),
           op("teardown", "buffer")]
    # the seed bug's own sequence (shared/seeds/000): break, collector.shutdown(), buffer.close()
    yield make("early_break", fixture, owner, "buffer-mode-after-2", ops, quick=True,
               impl_quick=True)
    ops = [*build(fixture, comps), *warm_up(comps), op("iterate", "collector", batches=1),
           op("drop")]
    yield make("early_break", fixture, owner, "drop-and-exit", ops, quick=True,
               impl_quick=True, built=comps)


#: batches of one frame, three of them: the smallest valid frames_per_batch
SMALLEST_BATCHES = {"frames_per_batch": 1, "total_frames": 3}


def exhaustion(fixture, owner, comps=ALL):
    """Iterate to total_frames: the collector shuts itself down, nothing else."""
    for sync in (False, True):
        ops = [*build(fixture, ("collector",), sync=sync), op("exhaust", "collector"),
               op("teardown", "collector"), op("use", "collector", call="iterate")]
        # on the implementation's own runtime too: the teardown at total_frames
        # must not end it (owned_runtime_kept), unasked, as the last holder
        yield make("exhaustion", fixture, owner, f"{_mode(sync)}", ops, quick=not sync,
                   impl_quick=not sync)
    # the smallest arguments the contract allows: batches of one frame, and a
    # budget of 0 (no batch at all: the iteration ends at once); a collector
    # whose count starts off by one, or that never reaches 0, shows only here
    smallest = (("one-frame-batches", SMALLEST_BATCHES), ("zero-budget", {"total_frames": 0}))
    for variant, spec in smallest:
        yield make("exhaustion", fixture, owner, variant, [
            *build(fixture, ("collector",)), op("exhaust", "collector"),
            op("teardown", "collector")], spec=spec, quick=True,
            impl_quick=variant == "zero-budget")  # its end of iteration is the teardown
    if "buffer" not in comps:
        return
    yield make("exhaustion", fixture, owner, "buffer-of-one-row", [
        *build(fixture, ("buffer", "collector")), op("exhaust", "collector"),
        op("check_data", "buffer", at_least=1), op("teardown", "collector"),
        op("check_data", "buffer", at_least=1), op("teardown", "buffer")],
        spec={**SMALLEST_BATCHES, "buffer_capacity": 1}, quick=True)
    # the buffer holds the collector's budget, no more: a batch asked of an actor
    # past total_frames is written, yielded or not (batch_counts)
    ops = [*build(fixture, ("buffer", "collector")), op("exhaust", "collector"),
           op("check_data", "buffer", at_least=512, at_most=512), op("teardown", "collector"),
           op("check_data", "buffer", at_least=512, at_most=512), op("teardown", "buffer")]
    yield make("exhaustion", fixture, owner, "buffer-mode", ops, quick=True, impl_quick=True)


#: the bound a user gives a collector whose thread is inside a long batch: the
#: reference's teardown took 0.60-0.66 s (2026-11-28, 8 runs, both fixtures and
#: owners): the thread's sliced wait sees it in 0.2 s, the graceful step
#: takes half of what is left, then the kill and the release
LONG_BATCH_BOUND = 1.0


def background(fixture, owner, comps=ALL):
    """start() feeds the buffer while the main thread samples; teardown races it."""
    if "buffer" not in comps:
        return
    head = [*build(fixture, ("buffer", "collector")), op("start", "collector"),
            op("wait_frames", "buffer", frames=64), op("sample", "buffer"),
            op("check_data", "buffer")]
    spec = {"total_frames": ENDLESS_IN_PRACTICE}
    # the thread is inside its call (a slow batch) when the race happens
    slow = {**spec, **SLOW_ENV}
    yield make("background", fixture, owner, "stop-from-main", [
        *head, op("teardown", "collector"), op("check_data", "buffer"),
        op("teardown", "buffer")], spec=spec, quick=True, impl_quick=True)
    # the thread reaches the collector's budget and tears the collector down
    # itself, on its own thread (which must not join itself); the user's
    # shutdown() after it is a no-op that finds its actors dead, and the buffer
    # holds the budget's frames (mutation analysis: component.py:281 of tree
    # 300f2f5, a join of the teardown's own thread that raised and skipped the kill)
    yield make("background", fixture, owner, "start-to-budget", [
        *build(fixture, ("buffer", "collector")), op("start", "collector"),
        op("wait_frames", "buffer", frames=128), op("teardown", "collector"),
        op("check_data", "buffer", at_least=128, at_most=128), op("teardown", "buffer")],
        spec={"total_frames": 128}, quick=True)
    yield make("background", fixture, owner, "stop-from-other-thread", [
        *head, op("teardown", "collector", thread="other"), op("check_data", "buffer"),
        op("teardown", "buffer")], spec=spec)
    yield make("background", fixture, owner, "buffer-closed-under-thread", [
        *head, op("teardown", "buffer"), op("teardown", "collector")], spec=spec, quick=True,
        impl_quick=True)
    yield make("background", fixture, owner, "ray-shutdown-under-thread", [
        *head, op("in_ray_call"), op("ray_shutdown"), op("teardown", "collector"),
        op("teardown", "buffer")], spec=slow, quick=True)
    # The thread's batch outlasts any graceful wait of the teardown (12.8 s):
    # shutdown() must still return within its bound, with its thread out of
    # Ray, before Ray goes (the user's ray.shutdown() after it; or the
    # collector's own shutdown_ray=True as the last holder of the runtime it
    # started): ray-project/ray#31145, #48018, #61678
    long = [*build(fixture, ("buffer", "collector")), op("start", "collector"), op("in_ray_call")]
    long_spec = {**spec, **LONG_BATCH_ENV}
    # first a health check while the batch is in flight: a healthy collector
    # busy in a long call is alive (an is_alive() whose ping queues behind the
    # batch answers False: a survivor of the mutation analysis, control.py)
    yield make("background", fixture, owner, "long-batch>teardown>ray", [
        *long, alive_now("collector"), op("teardown", "collector"), op("teardown", "buffer"),
        op("ray_shutdown")],
        spec=long_spec, quick=True)
    # the same under a bound of a second the user gave: the thread, inside its
    # long batch, must see the teardown (its waits are sliced) and the
    # graceful step leave time for the kill; each within its share
    yield make("background", fixture, owner, f"long-batch>teardown-within-{LONG_BATCH_BOUND}s", [
        *long, op("teardown", "collector"), op("teardown", "buffer")],
        spec={**long_spec, "teardown_timeout": LONG_BATCH_BOUND})
    yield make("background", fixture, owner, "long-batch>buffer>collector(shutdown_ray)", [
        *long, op("teardown", "buffer"), op("teardown", "collector", shutdown_ray=True)],
        spec=long_spec, quick=owner == "impl", impl_quick=True)
    # A collector actor dies under the thread: is_alive() says so for good, the
    # user's next call raises the death (never only a log line), the teardown
    # works and the buffer keeps what it got
    yield make("background", fixture, owner, "collector-sigkill-under-thread", [
        *head, alive_now("collector"), op("kill", "collector", how="sigkill"),
        op("check_alive", "collector", expect=False, stays=STAYS_DEAD),
        op("check_error", "collector", call="start", cause="actor"),
        op("check_error", "collector", call="iterate", cause="actor"),
        op("check_data", "buffer"), op("teardown", "collector"), op("check_data", "buffer"),
        op("teardown", "buffer")], spec=spec)
    # The buffer hangs while the thread's batches are being written into it:
    # the collector's teardown, whose writes are stuck in flight, returns
    # within its bound, and so does the buffer's
    yield make("background", fixture, owner, "buffer-hang-under-thread", [
        *build(fixture, ("buffer", "collector")), op("start", "collector"),
        op("wait_frames", "buffer", frames=64), op("kill", "buffer", how="hang"),
        op("in_ray_call"), op("teardown", "collector"), op("teardown", "buffer")],
        spec=spec, quick=True)


def env_error(fixture, owner, comps=ALL):
    """The env raises midway through a batch (from its 100th step on): iterate
    raises it clearly; under start() the user's next calls raise it, chained
    to it, and is_alive() says the collector is done; teardown works."""
    for sync in (False, True):
        # 64-frame batches from 2 actors: the third (async) or the fourth (sync)
        # batch fails
        yield make("env_error", fixture, owner, f"iterate-{_mode(sync)}", [
            *build(fixture, ("collector",), sync=sync),
            op("iterate", "collector", batches=5, cause="env"),
            op("teardown", "collector")], spec=FAILING_ENV)
    if "buffer" not in comps:
        return
    # the first check's bound runs from start(): it covers the actors' start
    # (a constructor may return before them) and their first 100 steps
    yield make("env_error", fixture, owner, "under-thread", [
        *build(fixture, ("buffer", "collector")), op("start", "collector"),
        op("check_error", "collector", call="start", cause="env", within=30.0),
        op("check_error", "collector", call="iterate", cause="env"),
        op("check_alive", "collector", expect=False), op("teardown", "collector"),
        op("check_data", "buffer"), op("teardown", "buffer")],
        spec={"total_frames": ENDLESS_IN_PRACTICE, **FAILING_ENV}, quick=True)
    # The user never calls the collector again: is_alive() turns False and it
    # is torn down, then again. No call raised the error, so the first
    # teardown is the last chance to report it (unraised_error_logged: logged
    # by it, once, at ERROR; two ops, so that a report left to the second
    # call is seen as such)
    yield make("env_error", fixture, owner, "under-thread-unraised", [
        *build(fixture, ("buffer", "collector")), op("start", "collector"),
        op("check_alive", "collector", expect=False, within=30.0),
        op("teardown", "collector"), op("teardown", "collector"), op("check_data", "buffer"),
        op("teardown", "buffer")],
        spec={"total_frames": ENDLESS_IN_PRACTICE, **FAILING_ENV}, quick=True)
    # the same, torn down from two threads at once (a user's finally and a
    # signal handler): the error reported by one of the two calls, once
    yield make("env_error", fixture, owner, "under-thread-unraised-concurrent", [
        *build(fixture, ("buffer", "collector")), op("start", "collector"),
        op("check_alive", "collector", expect=False, within=30.0),
        op("teardown", "collector", concurrent=2), op("check_data", "buffer"),
        op("teardown", "buffer")],
        spec={"total_frames": ENDLESS_IN_PRACTICE, **FAILING_ENV})
    # the same, the collector left as a `with` block ends: the block's exit reports it
    yield make("env_error", fixture, owner, "under-thread-unraised-with-block", [
        *build(fixture, ("buffer", "collector")), op("start", "collector"),
        op("check_alive", "collector", expect=False, within=30.0),
        op("teardown", "collector", via="with"), op("check_data", "buffer"),
        op("teardown", "buffer")],
        spec={"total_frames": ENDLESS_IN_PRACTICE, **FAILING_ENV})


def double_close(fixture, owner, comps=ALL):
    """Every teardown twice, concurrently, and right after construction."""
    for comp in comps:
        used = tuple(c for c in ("buffer", "collector") if c in comps) if comp == "collector" \
            else (comp,)
        # the collector's are written with the buffer beside it: without one
        # their ids say so (the eval worker's absence changes nothing here)
        built = comps if comp == "collector" and "buffer" not in comps else None
        base = build(fixture, used, buffer_mode=False)
        rest = [op("teardown", c) for c in used if c != comp]
        yield make("double_close", fixture, owner, f"{comp}-twice", [
            *base, *warm_up((comp,)), op("teardown", comp, times=2), *rest],
            quick=(comp == "buffer"), built=built)
        yield make("double_close", fixture, owner, f"{comp}-concurrent", [
            *base, *warm_up((comp,)), op("teardown", comp, concurrent=2), *rest],
            quick=(comp == "collector"), built=built)
        yield make("double_close", fixture, owner, f"{comp}-never-used", [
            *base, op("teardown", comp, times=2), *rest], built=built)


def with_block(fixture, owner, comps=ALL):
    """Each component in a ``with`` block, as a user writes it (the
    ``context_manager`` feature): leaving the block is its teardown, judged
    as any (actors dead, what they held back, no raise, within the bound);
    when the block's body raised, that error comes out of the ``with``
    statement, the component torn down all the same; a teardown after the
    block changes nothing. A buffer and the collector writing into it nest,
    as users write them. The collector's on the ``impl`` owner too: the
    block's exit must not end the runtime the implementation started unless
    asked (``owned_runtime_kept``)."""
    # as users nest them: `with RayReplayBuffer(...) as buffer, RayCollector(...,
    # replay_buffer=buffer) as collector:` whose body raises: the collector's
    # block exits first, then the buffer's, the error coming out of each
    if "buffer" in comps:
        yield make("with_block", fixture, owner, "buffer>collector-nested-body-raises", [
            *build(fixture, ("buffer", "collector")), *warm_up(("collector",)),
            op("teardown", "collector", via="with", body_raises=True), op("check_data", "buffer"),
            op("teardown", "buffer", via="with", body_raises=True)], quick=True)
    for comp in comps:
        base = build(fixture, (comp,), buffer_mode=False)
        yield make("with_block", fixture, owner, comp, [
            *base, *warm_up((comp,)), op("teardown", comp, via="with"), op("teardown", comp)],
            quick=(comp == "collector"), impl_quick=True)
        yield make("with_block", fixture, owner, f"{comp}-body-raises", [
            *base, *warm_up((comp,)), op("teardown", comp, via="with", body_raises=True),
            op("teardown", comp)], quick=(comp == "buffer"))


def async_teardown(fixture, owner, comps=ALL):
    """The collector torn down as asyncio code does, by awaiting its
    coroutine teardown (feature ``async_shutdown``, torchrl's name), judged
    as any teardown (actors dead, what they held back, no raise, within the
    bound); on the implementation's runtime, that runtime kept unless asked
    (``owned_runtime_kept``); a ``shutdown()`` after it changes nothing.
    ``-slow-close``: its envs' ``close()`` takes 1.5 s, so a coroutine that
    returns before the teardown finished returns with the actors still
    alive, whatever the machine's load (``async-shutdown-not-awaited`` in
    conformance/adapters/regressions.py)."""
    if "collector" not in comps:
        return
    ops = [*build(fixture, ("collector",)), *warm_up(("collector",)),
           op("teardown", "collector", via="async"), op("teardown", "collector")]
    yield make("async_teardown", fixture, owner, "collector", ops, quick=True, impl_quick=True)
    yield make("async_teardown", fixture, owner, "collector-slow-close", ops,
               spec=SLOW_CLOSE_ENV, quick=True)


ORDER_QUICK = (("ray", "collector", "buffer", "evaluator"),
               ("collector", "ray", "buffer", "evaluator"),
               ("collector", "buffer", "evaluator", "ray"))


def order(fixture, owner, comps=ALL):
    """Every order of the components' teardowns and ray.shutdown() (24 for all three);
    shutdown_ray=True asked by one or by every component; a component built
    right after a teardown that freed its CPUs."""
    names = tuple(c for c in ("collector", "buffer", "evaluator") if c in comps)
    quick_perms = {_without(p, comps) for p in ORDER_QUICK}
    for perm in itertools.permutations((*names, "ray")):
        ops = [*build(fixture, comps), *warm_up(comps), *teardowns(perm)]
        yield make("order", fixture, owner, ">".join(perm), ops, quick=perm in quick_perms,
                   impl_quick=True, built=comps)
    yield from _every_teardown_asks(fixture, owner, comps)
    yield from _built_after_teardown(fixture, owner, comps)
    yield from _ray_shutdown_across_teardown(fixture, owner, comps)
    if "buffer" not in comps:
        return
    rest = [op("teardown", c) for c in ("evaluator", "buffer") if c in comps]
    ops = [*build(fixture, comps), *warm_up(comps), op("check_data", "buffer"),
           op("teardown", "collector", shutdown_ray=True), op("check_data", "buffer"), *rest]
    variant = "collector(shutdown_ray)>" + ">".join(c for c in ("evaluator", "buffer") if c in comps)
    yield make("order", fixture, owner, variant, ops, quick=True, impl_quick=True, built=comps)


def _every_teardown_asks(fixture, owner, comps):
    """Every component asks for shutdown_ray=True: a runtime the
    implementation started ends with the last of them, and nothing of it is
    left (``owned_runtime_ended``); the user's is never ended
    (``ray_not_shut_down_by_non_owner``)."""
    last = tuple(c for c in ("evaluator", "collector", "buffer") if c in comps)
    yield make("order", fixture, owner, ">".join(f"{c}(shutdown_ray)" for c in last), [
        *build(fixture, comps), *warm_up(comps),
        *[op("teardown", c, shutdown_ray=True) for c in last]], built=comps)


#: construct arg: the component's actors take its node's CPUs between them
FILL = {"fill": True}


def _ray_shutdown_across_teardown(fixture, owner, comps):
    """The user's ``ray.shutdown()`` in one thread of the program while
    another tears a component down: a worker thread closes what it used as
    the main thread ends Ray (``teardown_in="thread"``), or the other way
    round (``"main"``). Its envs' ``close()`` takes 1.5 s, so the shutdown
    begins 0.5 s into the teardown. The teardown must not raise (the
    reference's did, ``SystemExit(0)`` from Ray's ``wait`` in the main thread,
    until its ``ray.shutdown`` wrapper waited for a teardown under way), the
    shutdown must end the runtime and no call start another
    (``no_ray_restart``: a call of the teardown made with Ray down starts a
    runtime through Ray's auto-init, a survivor of the mutation analysis,
    ``calls.py:53``); a teardown after it changes nothing."""
    if owner != "user":
        return

    def across(comp, where, spec=SLOW_CLOSE_ENV, **shutdown):
        return dict(ops=[*build(fixture, (comp,)), *warm_up((comp,)),
                         op("ray_shutdown", across_teardown=comp, teardown_in=where, after=0.5,
                            **shutdown),
                         op("teardown", comp)], spec=spec)

    for comp in [c for c in ("evaluator", "collector") if c in comps]:
        for where in ("thread", "main"):
            # quick: the reference's own bug (2026-11-29), about 3 s on multinode
            yield make("order", fixture, owner, f"{comp}>ray(across-its-teardown-in-{where})",
                       **across(comp, where), quick=(comp, where) == ("collector", "main"))
    if "collector" not in comps:
        return
    # on the local fixture, the envs' slow close() then stops a helper process of
    # theirs: a shutdown that does not wait for the teardown under way kills the
    # actors mid-close and leaves the helpers running (no_leftover_process), even
    # where the teardown itself returns cleanly
    if fixture == "local":
        yield make("order", fixture, owner, "collector-helper-env>ray(across-its-teardown-in-main)",
                   **across("collector", "main", SLOW_CLOSE_HELPER_ENV), quick=True)
    # the shutdown through a name bound before the implementation's import: no
    # wrapper of its own can wait for the teardown, and Ray ends under its calls
    yield make("order", fixture, owner,
               "collector>ray-bound-before-import(across-its-teardown-in-main)",
               **across("collector", "main", binding="before-import"), quick=True)


def _built_after_teardown(fixture, owner, comps):
    """Teardown means released: the collector's actors use up its node's
    CPUs exactly; it is torn down, and an eval worker that needs those CPUs
    is built right after, as a user does (``resources_released_at_teardown``
    judges the teardown at its return; the new one must build and work).
    The node's CPUs are known before Ray starts on node_a of the multinode
    fixture, and on the local one when the driver's ray.init starts it."""
    if "evaluator" not in comps or fixture == "external" or (fixture, owner) == ("local", "impl"):
        return
    place = {"collector": "node_a", "evaluator": "node_a"}
    yield make("order", fixture, owner, "collector(fills-node)>evaluator(built-after)", [
        *build(fixture, ("collector",), placement=place, extra={"collector": FILL}),
        op("iterate", "collector", batches=1), op("teardown", "collector"),
        *build(fixture, ("evaluator",), placement=place, extra={"evaluator": FILL}),
        op("submit", "evaluator"), op("poll", "evaluator", timeout=30),
        op("teardown", "evaluator")])
    # the node shared: a collector and an eval worker take half its CPUs each,
    # so Ray's view lists no CPU free at all while both live; the eval worker
    # is torn down beside the working collector and built again on its half.
    # Its teardown must wait for, and only for, its own half shown free: a
    # missing key read as a free CPU or as none makes it return before the
    # release (resources_released_at_teardown) or wait its whole RELEASE_WAIT
    # (teardown_prompt_when_healthy): three survivors of the mutation analysis,
    # measured with standalone runs 2026-11-29 (#27). On the local fixture, with
    # no placement: a node_a resource released with the CPUs would hide both.
    # Quick: about 6 s
    if fixture == "local":
        half = {"fill": 0.5}
        yield make("order", fixture, owner, "collector+evaluator(share-node)>evaluator(built-after)", [
            *build(fixture, ("collector", "evaluator"), extra={"collector": half, "evaluator": half}),
            op("iterate", "collector", batches=1), op("submit", "evaluator"),
            op("poll", "evaluator", timeout=30), op("teardown", "evaluator"),
            op("construct", "evaluator", **half), op("submit", "evaluator"),
            op("poll", "evaluator", timeout=30), op("teardown", "evaluator"),
            op("iterate", "collector", batches=1), op("teardown", "collector")], quick=True)


def killed(fixture, owner, comps=ALL):
    """One actor of a component killed from outside, then teardown. The
    component is asked is_alive() before the fault (True) and after it
    (False; in ``<comp>-<how>>...`` after a death Ray could undo by a
    restart, still False STAYS_DEAD seconds later: the other variants are
    about other things and skip that wait)."""
    for comp, how in itertools.product(comps, KILL_HOWS):
        if how == "remove_node" and fixture != "multinode":
            continue
        placement = {c: ("node_a" if c == comp else "node_b") for c in ALL}
        base = [*build(fixture, comps, placement=placement), *warm_up(comps), alive_now(comp)]
        fault = [op("kill", comp, how=how)]
        if how != "hang":
            stays = {"stays": STAYS_DEAD} if how in RESTARTABLE else {}
            fault.append(op("check_alive", comp, expect=False, **stays))
        quick_first = (how in ("sigkill", "remove_node") and comp != "evaluator") or (
            how == "hang" and comp != "buffer")
        yield make("killed", fixture, owner, f"{comp}-{how}>teardown", [
            *base, *fault, op("teardown", comp),
            *[op("teardown", c) for c in comps if c != comp]],
            quick=quick_first, impl_quick=(how == "hang" and comp == "collector"), built=comps)
        yield make("killed", fixture, owner, f"{comp}-{how}>ray>teardown", [
            *base, *fault, op("ray_shutdown"), *teardowns(comps)],
            quick=(how == "exit" and comp == "buffer"), impl_quick=True, built=comps)
    # The last of the collector's actors (the others kill actor 0): a component
    # that watches or kills only one of its actors is caught here.
    for how in ("sigkill", "ray_kill"):
        placement = {c: ("node_a" if c == "collector" else "node_b") for c in ALL}
        yield make("killed", fixture, owner, f"collector-{how}-last>teardown", [
            *build(fixture, comps, placement=placement), *warm_up(comps), alive_now("collector"),
            op("kill", "collector", how=how, index=-1), op("check_alive", "collector", expect=False),
            *teardowns(_without(("collector", "buffer", "evaluator"), comps))],
            quick=(how == "sigkill"), built=comps)
    # A kill that lands while a call is in flight (ray-project/ray#54260's
    # kill/complete race): a slow batch or episode is running when it lands,
    # checked by kill_landed. The call may raise (clearly); nothing may crash.
    in_flight = {"collector": ([], op("iterate", "collector", batches=2, may_fail=True)),
                 "evaluator": ([op("submit", "evaluator")],
                               op("poll", "evaluator", timeout=30, may_fail=True))}
    for comp, how in itertools.product(("collector", "evaluator"), ("sigkill", "ray_kill")):
        if comp not in comps:
            continue
        before, call = in_flight[comp]
        yield make("killed", fixture, owner, f"{comp}-{how}-in-flight>teardown", [
            *build(fixture, comps), alive_now(comp), *before,
            op("kill", comp, how=how, during=call.verb, after=0.5), call,
            op("kill_landed", comp), op("check_alive", comp, expect=False),
            *teardowns(_without(("collector", "buffer", "evaluator"), comps))],
            spec=SLOW_ENV, quick=(comp, how) == ("collector", "sigkill"), built=comps)
    if "evaluator" in comps:
        yield evaluator_step_hang(fixture, owner)
    yield from short_bound(fixture, owner, comps)
    # Actors the user made restartable (the actor option max_restarts, for
    # fault tolerance): the teardown's kill must be for good (ray.kill's
    # no_restart), or Ray brings them back after it (RESTARTING, then ALIVE:
    # a restart took 1.0-1.8 s here, STAYS_DEAD)
    for comp in comps:
        yield make("killed", fixture, owner, f"{comp}-max_restarts>teardown", [
            *build(fixture, (comp,), extra={comp: {"restarts": 2}}), *warm_up((comp,)),
            op("teardown", comp)], quick=(comp == "collector"))
    for comp in comps:
        yield make("killed", fixture, owner, f"{comp}-never-scheduled>teardown", [
            op("construct", comp, infeasible=True, ready=False),
            op("check_alive", comp, expect=False), op("teardown", comp)],
            quick=(comp == "evaluator"))


def evaluator_step_hang(fixture, owner):
    """The eval episode in flight hangs (its env's step never returns) while
    poll(timeout) waits on it: each poll returns within its timeout, the
    teardown within its bound. A second episode is submitted first (the user
    moves on to a newer checkpoint), so a poll that waits for the pending
    episode, whatever its timeout, meets the hung one. Episodes of 100 slow
    steps (5 s) and a 5 s poll leave the hang seconds to land while an
    episode runs and the poll waits, also on a loaded machine."""
    return make("killed", fixture, owner, "evaluator-step_hang-in-flight>teardown", [
        op("construct", "evaluator"), op("await_actors", "evaluator"), alive_now("evaluator"),
        op("submit", "evaluator"),
        op("poll", "evaluator", timeout=0.5), op("submit", "evaluator"),
        op("kill", "evaluator", how="step_hang", during="poll", after=0.5),
        op("poll", "evaluator", timeout=5.0), op("kill_landed", "evaluator"),
        op("poll", "evaluator", timeout=0.5), op("teardown", "evaluator")],
        spec={**HANGABLE_ENV, "eval_max_steps": 100}, quick=True)


#: the teardown bound the ``short_bound`` scenarios give (``Spec.teardown_timeout``,
#: feature ``teardown_timeout``): long enough for a kill and its release to
#: show (ray.kill to DEAD and the CPUs back: 0.08-0.2 s here), short enough
#: that a teardown's graceful steps, which wait up to 2 s each on a healthy
#: 10 s bound, must give up time to them
SHORT_BOUND = 1.5


#: the bound of the ``short_bound`` scenarios of a healthy component: under a
#: second, which no other scenario gives; a healthy teardown (kill, the
#: actors' end, their CPUs shown back) took 0.08-0.11 s here (2026-11-28,
#: 18 runs of the reference, each component on both fixtures)
TIGHT_BOUND = 0.5


def short_bound(fixture, owner, comps):
    """A hung actor torn down under a short bound the user gave, every
    component built and used as in ``killed``, the others torn down after
    it under the same bound: each teardown returns within it, and still
    with the actors dead and their resources back, the others untouched. A
    teardown that spends its whole bound on the steps before the kill
    (asking a hung actor to close its env, or what it holds) returns in time
    with the actors alive; one that takes a fixed share of the default
    bound overruns this one. Each component healthy, under a bound below a
    second (``TIGHT_BOUND``): built, used, torn down within it."""
    for comp in comps:
        placement = {c: ("node_a" if c == comp else "node_b") for c in ALL}
        yield make("killed", fixture, owner, f"{comp}-hang>teardown-within-{SHORT_BOUND}s", [
            *build(fixture, comps, placement=placement), *warm_up(comps),
            op("kill", comp, how="hang"), op("teardown", comp),
            *[op("teardown", c) for c in comps if c != comp]],
            spec={"teardown_timeout": SHORT_BOUND}, quick=(comp != "buffer"), built=comps)
    # nothing hung, a bound under a second (a user who wants teardown now):
    # the build takes it (a bound is a number of seconds, 0 included) and the
    # teardown meets it with its actors dead and their resources back (on
    # the user's runtime: the bound is the component's, not the runtime's)
    for comp in comps if owner == "user" else ():
        yield make("killed", fixture, owner, f"{comp}-healthy>teardown-within-{TIGHT_BOUND}s", [
            *build(fixture, (comp,)), *warm_up((comp,)), op("teardown", comp)],
            spec={"teardown_timeout": TIGHT_BOUND}, quick=comp == "collector")
    # the same with the buffer's actor taking its node's CPUs: Ray's view of that
    # node then lists no CPU free at all, and a teardown that reads the missing key
    # as free waits for its actor to show as taken until the bound runs out, then
    # kills it with no time left to see its CPUs back (a survivor of the mutation
    # analysis, resources.py:93:41, measured standalone 2026-11-29: 0.51 s and 0 CPU
    # free at the return, against 0.04-0.11 s and 2 free)
    if owner == "user" and "buffer" in comps:
        yield make("killed", fixture, owner,
                   f"buffer(fills-node)-healthy>teardown-within-{TIGHT_BOUND}s", [
                       *build(fixture, ("buffer",), placement={"buffer": "node_a"},
                              extra={"buffer": FILL}),
                       *warm_up(("buffer",)), op("teardown", "buffer")],
                   spec={"teardown_timeout": TIGHT_BOUND})
    if {"buffer", "collector"} <= set(comps):
        # the buffer a collector writes into hangs, then the collector is torn
        # down under the tight bound: whatever it asks of the buffer on its
        # way out (the reference fences off its writer) waits on a call that
        # never returns, and must end with the bound
        yield make("killed", fixture, owner,
                   f"buffer-hang>collector-teardown-within-{TIGHT_BOUND}s", [
                       *build(fixture, ("buffer", "collector")), *warm_up(("collector",)),
                       op("kill", "buffer", how="hang"), op("teardown", "collector"),
                       op("teardown", "buffer")],
                   spec={"teardown_timeout": TIGHT_BOUND}, quick=True, built=comps)
    if "evaluator" in comps:
        # an actor that never answers (never scheduled) under the short bound,
        # and under the tight one: every wait on it must end with the bound
        for bound in (SHORT_BOUND, TIGHT_BOUND):
            yield make("killed", fixture, owner,
                       f"evaluator-never-scheduled>teardown-within-{bound}s", [
                           op("construct", "evaluator", infeasible=True, ready=False),
                           op("teardown", "evaluator")],
                       spec={"teardown_timeout": bound}, quick=bound == TIGHT_BOUND)


def user_restart(fixture, owner, comps=ALL):
    """The user restarts Ray (``ray.shutdown(); ray.init()``) between
    construction and teardown, then tears down in every order: no teardown
    raises, touches the stale handles (Ray 2.50 aborts on them,
    ray-project/ray#59340; 2.55+ raises ActorHandleNotFoundError) or shuts
    down the user's new runtime, even when asked to (``shutdown_ray``)."""
    names = tuple(c for c in ALL if c in comps)
    for perm in itertools.permutations(names):
        ops = [*build(fixture, comps), *warm_up(comps), op("ray_restart"), *teardowns(perm)]
        yield make("restart", fixture, owner, ">".join(perm), ops, quick=perm == names,
                   built=comps)
    # is_alive() of each healthy component, then after the user replaced the
    # runtime its actors lived in: False, within the liveness bound, and the
    # teardowns after it as above (is_alive() asked with no fault: a blind
    # spot of the catalog). A component that pings its stale handles to find
    # out still answers False, on Ray 2.60 and 2.50.1 alike (measured: the
    # mutants of the reference's runtime check, component.py:220, pass this
    # on both); it is a stale handle's ray.kill that aborts the process on
    # 2.50.1 (ray-project/ray#59340: the teardowns of the scenarios above)
    yield make("restart", fixture, owner, "alive>restart>alive", [
        *build(fixture, comps), *warm_up(comps), *[alive_now(c) for c in names],
        op("ray_restart"), *[op("check_alive", c, expect=False) for c in names],
        *teardowns(names)], built=comps)
    rest = [op("teardown", c) for c in names if c != "collector"]
    ops = [*build(fixture, comps), *warm_up(comps), op("ray_restart"),
           op("teardown", "collector", shutdown_ray=True), *rest]
    # quick on the implementation's runtime: its last holder's teardown, asked to
    # end the runtime the implementation started, must spare the user's new one
    # (ray_not_shut_down_by_non_owner; mutation analysis: runtime.py:147's check)
    yield make("restart", fixture, owner,
               "collector(shutdown_ray)>" + ">".join(c for c in names if c != "collector"),
               ops, built=comps, quick=owner == "impl", impl_quick=True)


def use_after_close(fixture, owner, comps=ALL):
    """Every verb after teardown: one clear error, within the bound, no
    restart; the component's repr says open before and closed after
    (``repr_names_state``)."""
    uses = {"collector": ("iterate", "start"), "buffer": ("sample", "extend", "len"),
            "evaluator": ("submit", "poll")}
    for comp, verbs in uses.items():
        if comp not in comps:
            continue
        base = build(fixture, (comp,), buffer_mode=False)
        ops = [*base, op("describe", comp), op("teardown", comp), op("describe", comp),
               *[op("use", comp, call=v) for v in verbs]]
        yield make("use_after_close", fixture, owner, comp, ops, quick=True)
        ops = [*base, op("ray_shutdown"), op("teardown", comp),
               *[op("use", comp, call=v) for v in verbs]]
        # the eval worker's too: its teardown after the user's ray.shutdown() has
        # nothing to warn about (quiet_when_healthy: an unnamed worker's actor ended
        # with the runtime)
        yield make("use_after_close", fixture, owner, f"{comp}-after-ray-shutdown", ops,
                   quick=(comp in ("buffer", "evaluator")), impl_quick=True)
        # No teardown between the user's ray.shutdown() and the calls: the
        # component must see its runtime gone by itself. The one scenario that
        # runs RayComponent._check_open's "Ray went away" branch (measured:
        # no scenario of either profile ran it; mutation analysis,
        # ci/results/mutation/); then the teardown of a component already
        # closed that way.
        ops = [*base, op("ray_shutdown"), *[op("use", comp, call=v) for v in verbs],
               op("teardown", comp)]
        yield make("use_after_close", fixture, owner, f"{comp}-ray-shutdown-no-teardown", ops,
                   quick=(comp == "buffer"))


def named(fixture, owner, comps=ALL):
    """A second driver finds the named eval worker; only the owner ends it."""
    if "evaluator" not in comps:
        return
    peer_ops = [op("construct", "evaluator", connect=True, named=True), op("submit", "evaluator"),
                op("poll", "evaluator", timeout=30), op("teardown", "evaluator")]
    ops = [op("construct", "evaluator", named=True), op("submit", "evaluator"),
           op("peer", ops=[o.to_dict() for o in peer_ops]),
           op("check_alive", "evaluator", expect=True), op("check_name"),
           op("teardown", "evaluator"), op("check_name")]
    yield make("named", fixture, owner, "peer-then-owner", ops, quick=True)
    # a handle on a name nobody created: a clear error, and Ray as it was (on the
    # implementation's runtime: not started, failed_build_leaves_ray_as_found)
    yield make("named", fixture, owner, "connect-to-missing-name", [
        op("construct", "evaluator", connect=True, named=True, fail="missing_name")],
        quick=True, impl_quick=True)
    # Both drivers call a bare ray.init(), as most users do: each gets its own
    # anonymous namespace, and only a worker named in an explicit namespace is
    # found by the second one.
    if owner == "user":
        yield make("named", fixture, owner, "peer-then-owner-bare-init", ops, quick=True,
                   spec={"ray_init": "bare"})


DEFAULT_USES = {
    "buffer": (("extend", {}), ("sample", {})),
    "collector": (("iterate", {"batches": 1}),),
    # poll(0), the non-blocking peek, then a wait for the result, then a peek
    # once it was returned (nothing pending: None)
    "evaluator": (("submit", {}), ("poll", {"timeout": 0}), ("poll", {"timeout": 30}),
                  ("poll", {"timeout": 0})),
}


def defaults(fixture, owner, comps=ALL):
    """Each component built with the implementation's own defaults (no
    resources, no actor options, no timeouts: ``Spec.defaults``), as a user
    copying its docstring would, on the fixture's CPU-only nodes; then used
    and torn down. A component its defaults cannot schedule may fail to
    build, clearly, within its bound and leaving no actor (``may_fail``);
    one that builds must work and tear down as always. With the
    ``documented_defaults`` convention, each actor must hold the documented
    resources, and a build whose documented CPUs the fixture hosts must not
    refuse its own defaults (``oracles.defaults_as_documented``)."""
    spec = {"defaults": True}

    def uses(comp):
        return [op(verb, comp, **args) for verb, args in DEFAULT_USES[comp]]
    for comp in comps:
        yield make("defaults", fixture, owner, comp, [
            op("construct", comp, may_fail=True), *uses(comp), op("teardown", comp)],
            spec=spec, quick=True)  # the buffer's: the one quick extend() from the driver
    built = [op("construct", c, may_fail=True,
                **({"buffer": True} if c == "collector" and "buffer" in comps else {}))
             for c in ALL if c in comps]
    yield make("defaults", fixture, owner, "all", [
        *built, *warm_up(comps), *teardowns(tuple(c for c in ALL if c in comps))],
        spec=spec, built=comps)
    # a busy cluster (``occupy``: the harness holds every CPU of every node): a
    # build whose documented actors need a CPU gives up at its documented ready
    # bound, clearly, and leaves no pending actor that the CPUs freed (``vacate``)
    # would start; one documented to need none builds and works
    # (``ready_bound_as_documented``, ``fails_clearly``). On the user's runtime
    # (the harness's actors need one before the build), never on a user's own
    # cluster (the external fixture). A build that gives up waits its whole
    # bound (the reference's: 30 s, 30.05 s in all, 2026-11-29): only the eval worker's, on
    # multinode, is quick (it catches both variants of the class there)
    if owner == "user" and fixture != "external":
        for comp in comps:
            yield make("defaults", fixture, owner, f"{comp}-cluster-busy", [
                op("occupy"), op("construct", comp, may_fail=True), op("vacate"), *uses(comp),
                op("teardown", comp)], spec=spec, quick=comp == "evaluator")
    # the collector's behaviour left to its own defaults (``Spec.minimal_build``):
    # no total_frames, sync or number of actors, the suite's actor options as
    # always (so it must build): the user's loop takes 3 batches (batch_counts)
    if "collector" in comps:
        yield make("defaults", fixture, owner, "collector-minimal", [
            op("construct", "collector"), op("iterate", "collector", batches=3),
            op("teardown", "collector")], spec={"minimal_build": True}, quick=True)


def seeded(fixture, owner, comps=ALL):
    """A collector built with a seed, iterated, torn down, and built again
    with the same seed (feature ``seed``): both builds yield the same batches
    (``seeded_batches_repeat``), as an experiment rerun from its seed must;
    with seed 7, and with 0 (full). Sync, so that each batch stacks the
    actors in their order (an async batch is whichever actor was ready
    first); 16 frames a batch."""
    if "collector" not in comps:
        return
    build_and_read = [op("construct", "collector", sync=True),
                      op("iterate", "collector", batches=2, digest=True), op("teardown", "collector")]
    yield make("seeded", fixture, owner, "collector-rebuilt", [*build_and_read, *build_and_read],
               spec={"seed": 7, "frames_per_batch": 16}, quick=True)
    # seed 0, the one users pick most: each actor's seed derived from it must be
    # one the env takes (gymnasium refuses a negative seed: a per-actor seed
    # of seed - i fails the build of actor 1, measured 2026-11-29, #27)
    yield make("seeded", fixture, owner, "collector-rebuilt-seed-0",
               [*build_and_read, *build_and_read], spec={"seed": 0, "frames_per_batch": 16})


def construction_failure(fixture, owner, comps=ALL):
    """Bad input: a clear error and no actor left behind. A collector with one
    env id per actor, one of them broken (``one_unknown_env``), is first built
    with every env healthy and torn down: a ``per_actor_envs`` the adapter
    declares but the implementation rejects (say a ValueError for a tuple of
    ids) is then a setup-error, not a clear failure about the broken env.
    Every case is in the quick profile (on multinode, the user's runtime):
    each costs one constructor call (1-4 s), and each argument check left to
    the full profile was a survivor of the mutation analysis (an invalid
    num_collectors, frames_per_batch or capacity accepted; a buffer whose
    placement is dropped; a failed buffer build that leaves its actor:
    ci/results/mutation/answers.txt)."""
    cases = [("collector", "unknown_env"), ("collector", "one_unknown_env"),
             ("evaluator", "unknown_env"),
             ("collector", "invalid:frames_per_batch"), ("collector", "invalid:total_frames"),
             ("collector", "invalid:sync_divisible"), ("collector", "invalid:num_collectors"),
             ("collector", "invalid:fractional_frames_per_batch"),
             ("collector", "invalid:env_ids_count"),
             ("buffer", "invalid:capacity"), ("buffer", "invalid:fractional_capacity"),
             *((c, "invalid:teardown_timeout") for c in ALL)]
    for comp, fail in cases:
        if comp not in comps:
            continue
        ops = [op("construct", comp, fail=fail)]
        if fail == "one_unknown_env":  # the feature shown to work before its failure
            ops = [op("construct", comp, per_actor_envs=True), op("teardown", comp), *ops]
        # on the implementation's runtime: the first build fails with Ray down, and one
        # fails after a build on the runtime it started (failed_build_leaves_ray_as_found)
        yield make("construction_failure", fixture, owner, f"{comp}-{fail.replace(':', '-')}",
                   ops, quick=True, impl_quick=comp == "collector" and fail.endswith("unknown_env"))
    for comp in comps:
        ops = [op("construct", comp, infeasible=True, fail="infeasible"),
               op("teardown", comp)]
        yield make("construction_failure", fixture, owner, f"{comp}-infeasible", ops,
                   spec={"ready_timeout": 3.0}, quick=True)
        # the user's short bounds: a ready bound and a teardown bound of half
        # a second each; the build gives up and undoes itself within both (on
        # the user's runtime: on the implementation's own the build's time
        # includes ray.init, 1.5-6.5 s measured, which no such bound covers)
        if owner == "user":
            yield make("construction_failure", fixture, owner,
                       f"{comp}-infeasible-within-{TIGHT_BOUND}s", ops,
                       spec={"ready_timeout": TIGHT_BOUND, "teardown_timeout": TIGHT_BOUND})
    ops = [*build(fixture, ("collector",)), op("start", "collector", fail="no_buffer"),
           op("teardown", "collector")]
    yield make("construction_failure", fixture, owner, "start-without-buffer", ops)


def call_arguments(fixture, owner, comps=ALL):
    """A call given what it must refuse (a batch of 0 or 2.5 rows, an
    evaluation of 0 or 2.5 steps, a sample of an empty buffer) raises a clear
    error at once (``fails_clearly``: a sample of an empty buffer says it is
    empty), changes nothing and harms nothing: the component stays alive and
    works; the smallest valid argument (one row, one step) works, and a
    step budget is honoured to the step. Quick on multinode, the user's
    runtime: one component each, 3-5 s."""
    if "buffer" in comps:
        yield make("call_arguments", fixture, owner, "buffer-sample", [
            op("construct", "buffer"), op("sample", "buffer", fail="empty"),
            op("extend", "buffer", frames=1), op("sample", "buffer", batch_size=1),
            op("sample", "buffer", batch_size=0, fail="invalid:batch_size"),
            op("sample", "buffer", batch_size=2.5, fail="invalid:batch_size"),
            op("check_data", "buffer"), alive_now("buffer"), op("sample", "buffer", batch_size=4),
            op("teardown", "buffer")], quick=True)
        # one transition, add(): the row sampled back is the one written (data_kept)
        yield make("call_arguments", fixture, owner, "buffer-add", [
            op("construct", "buffer"), op("add", "buffer"), op("check_data", "buffer"),
            op("sample", "buffer", batch_size=1), op("teardown", "buffer")], quick=True)
    if "evaluator" not in comps:
        return
    for steps, name in ((0, "zero"), (2.5, "fractional")):
        yield make("call_arguments", fixture, owner, f"evaluator-submit-{name}-steps", [
            op("construct", "evaluator"),
            op("submit", "evaluator", fail="invalid:eval_max_steps"),
            alive_now("evaluator"), op("teardown", "evaluator")],
            spec={"eval_max_steps": steps}, quick=True)
    # the smallest valid budget: an episode of exactly one step
    yield make("call_arguments", fixture, owner, "evaluator-submit-one-step", [
        op("construct", "evaluator"), op("submit", "evaluator"),
        op("poll", "evaluator", timeout=30), op("teardown", "evaluator")],
        spec={"eval_max_steps": 1}, quick=True)
    # a budget honoured to the step: in an env that never ends an episode (the
    # slow one, 50 ms a step) the evaluation takes exactly eval_max_steps
    # (eval_episode_consistent), not one fewer or more, nor ends at its first
    yield make("call_arguments", fixture, owner, "evaluator-submit-steps-reached", [
        op("construct", "evaluator"), op("submit", "evaluator"),
        op("poll", "evaluator", timeout=30), op("teardown", "evaluator")],
        spec={**SLOW_ENV, "eval_max_steps": 3}, quick=True)
    # the non-blocking peek while an evaluation of about 1 s runs: None at once
    # (calls_within_timeout: a poll(0) that waits for the result is a blocking
    # call in a training loop), then the result, then None (nothing pending)
    yield make("call_arguments", fixture, owner, "evaluator-peek-while-running", [
        op("construct", "evaluator"), op("submit", "evaluator"),
        op("poll", "evaluator", timeout=0), op("poll", "evaluator", timeout=30),
        op("poll", "evaluator", timeout=0), op("teardown", "evaluator")],
        spec={**SLOW_ENV, "eval_max_steps": 20}, quick=True)


def interpreter_exit(fixture, owner, comps=ALL):
    """Components left open: the interpreter exits 0, quietly, within the bound."""
    yield make("exit", fixture, owner, "all-open", [*build(fixture, comps), *warm_up(comps)],
               quick=True, impl_quick=True, built=comps)
    if "buffer" in comps:
        yield make("exit", fixture, owner, "background-running", [
            *build(fixture, ("buffer", "collector")), op("start", "collector"),
            op("wait_frames", "buffer", frames=64), op("in_ray_call")],
            spec={"total_frames": ENDLESS_IN_PRACTICE, **SLOW_ENV}, quick=True,
            impl_quick=True)
    yield make("exit", fixture, owner, "after-ray-shutdown", [
        *build(fixture, comps), *warm_up(comps), op("ray_shutdown")], built=comps)


#: the bound of the slow-closing env's scenarios: the env's close() takes
#: ``conformance.envs.CLOSE_SECONDS`` (1.5 s), under half of it
SLOW_CLOSE_BOUND = 4.0


def env_helpers(fixture, owner, comps=ALL):
    """Envs with a helper process (``build.HELPER_ENV``: a simulator's
    server or renderer, stopped by the env's ``close()``): every component
    used and torn down, each alone and all in the user's usual order; a
    teardown must close the envs its actors hold, so no helper outlives the
    program (``no_leftover_process``, read once the driver has exited). On
    the local fixture only: there the actors' processes, and the helpers
    they start, carry the driver's marker; on the multinode fixture they
    carry the cluster's, and a helper left behind would not be told apart
    from another scenario's."""
    if fixture != "local":
        return
    for comp in ("collector", "evaluator"):
        if comp in comps:
            yield make("env_helper", fixture, owner, comp, [
                *build(fixture, (comp,)), *warm_up((comp,)), op("teardown", comp)],
                spec=HELPER_ENV)
    order = tuple(c for c in ("collector", "evaluator", "buffer") if c in comps)
    yield make("env_helper", fixture, owner, "all", [
        *build(fixture, comps), *warm_up(comps), *teardowns(order)],
        spec=HELPER_ENV, quick=True, built=comps)
    # an env whose close() takes 1.5 s before it stops its helper, under a
    # bound the user gave that has room for it: a teardown that gives the
    # close less than that (a fixed second, a third of the bound, or no
    # wait at all before the kill) kills the actor inside close() and
    # leaves the helper running. And two first teardowns at once (two
    # threads of the user's, as double_close's): the second must wait for
    # the first one's close, not kill the actors under it
    for comp in ("collector", "evaluator"):
        if comp not in comps:
            continue
        spec = {**SLOW_CLOSE_HELPER_ENV, "teardown_timeout": SLOW_CLOSE_BOUND}
        yield make("env_helper", fixture, owner,
                   f"{comp}-slow-close>teardown-within-{SLOW_CLOSE_BOUND:g}s", [
                       *build(fixture, (comp,)), *warm_up((comp,)), op("teardown", comp)],
                   spec=spec, quick=comp == "collector")
        yield make("env_helper", fixture, owner,
                   f"{comp}-slow-close>teardown-concurrent-within-{SLOW_CLOSE_BOUND:g}s", [
                       *build(fixture, (comp,)), *warm_up((comp,)),
                       op("teardown", comp, concurrent=2)],
                   spec=spec, quick=comp == "collector")


def signals(fixture, owner, comps=ALL):
    """A user's Ctrl-C (SIGINT) and a CI cancellation (SIGTERM) sent to the
    driver itself while a call is in flight (the slow env: a batch takes
    3.2 s, an episode 2.5 s): while iterating, while poll() waits, while a
    teardown runs. What the signal raises must come out promptly
    (``interrupt_prompt``). The user either catches the KeyboardInterrupt and
    tears down (``>teardown``: every teardown completes, nothing leaks; one a
    Ctrl-C cut short is finished by calling it again), or the program ends
    with it (``-uncaught``, and SIGTERM: the interpreter exit leaves no
    process, actor or thread; a named worker is detached, so on a cluster
    only a finished teardown ends it). See docs/signals.md."""
    def sig(during, signal="SIGINT", caught=True):
        return op("interrupt", signal=signal, during=during, after=0.5,
                  caught=caught and signal == "SIGINT")

    rest = teardowns(_without(("collector", "buffer", "evaluator"), comps))
    yield make("signals", fixture, owner, "collector-sigint-in-iterate>teardown", [
        *build(fixture, comps), sig("iterate"), op("iterate", "collector", batches=2), *rest],
        spec=SLOW_ENV, built=comps)
    yield make("signals", fixture, owner, "collector-sigint-in-iterate-uncaught", [
        *build(fixture, comps), sig("iterate", caught=False),
        op("iterate", "collector", batches=2)], spec=SLOW_ENV, built=comps)
    yield make("signals", fixture, owner, "collector-sigterm-in-iterate", [
        *build(fixture, comps), sig("iterate", "SIGTERM"),
        op("iterate", "collector", batches=3)], spec=SLOW_ENV, built=comps)
    if "evaluator" not in comps:
        return
    evaluating = [op("construct", "evaluator"), op("submit", "evaluator")]
    named = [op("construct", "evaluator", named=True), op("submit", "evaluator")]
    yield make("signals", fixture, owner, "evaluator-sigint-in-poll>teardown", [
        *evaluating, sig("poll"), op("poll", "evaluator", timeout=30),
        op("teardown", "evaluator")], spec=SLOW_ENV, quick=True)
    yield make("signals", fixture, owner, "evaluator-sigint-in-poll-uncaught", [
        *evaluating, sig("poll", caught=False), op("poll", "evaluator", timeout=30)],
        spec=SLOW_ENV)
    # The teardown's graceful wait for the episode in flight is where it lands.
    # The worker is named, i.e. detached: an unnamed one whose handles a
    # cut-short teardown dropped was ended by Ray in 1 of 4 runs of
    # regression:teardown-done-before-kill (3 of 4: still ALIVE), a detached
    # one is never ended that way.
    # Between the two, is_alive() is False: the component is closed, though its
    # actor lives on until the next teardown call finishes the work
    yield make("signals", fixture, owner, "named-evaluator-sigint-in-teardown>teardown", [
        *named, sig("teardown"), op("teardown", "evaluator"),
        op("check_alive", "evaluator", expect=False), op("teardown", "evaluator")],
        spec=SLOW_ENV, quick=True, impl_quick=True)
    # the user catches the Ctrl-C and ends Ray instead: ray.shutdown() must
    # finish the teardown first (a detached worker outlives the driver's Ray)
    yield make("signals", fixture, owner, "named-evaluator-sigint-in-teardown>ray_shutdown", [
        *named, sig("teardown"), op("teardown", "evaluator"), op("ray_shutdown")],
        spec=SLOW_ENV, quick=True)
    # or the program ends with it: the interpreter exit must finish it
    yield make("signals", fixture, owner, "named-evaluator-sigint-in-teardown-uncaught", [
        *named, sig("teardown", caught=False), op("teardown", "evaluator")], spec=SLOW_ENV,
        quick=True)
    # quick: the only catch of regression:teardown-swallows-sigterm (a SystemExit
    # swallowed in the teardown), about 3 s on multinode
    yield make("signals", fixture, owner, "named-evaluator-sigterm-in-teardown", [
        *named, sig("teardown", "SIGTERM"), op("teardown", "evaluator")], spec=SLOW_ENV,
        quick=True)
    # a Ctrl-C 0.7 s into a collector's teardown while the buffer it writes
    # into hangs (where the reference waits, up to 1 s, for the buffer to
    # fence off its writer): the KeyboardInterrupt comes out, the user tears
    # down again and that finishes it
    if {"buffer", "collector"} <= set(comps):
        yield make("signals", fixture, owner,
                   "collector-sigint-in-teardown-buffer-hung>teardown", [
                       *build(fixture, ("buffer", "collector")), *warm_up(("collector",)),
                       op("kill", "buffer", how="hang"),
                       op("interrupt", signal="SIGINT", during="teardown", after=0.7, caught=True),
                       op("teardown", "collector"), op("teardown", "collector"),
                       op("teardown", "buffer")],
                   quick=True, built=comps)
    # a Ctrl-C 2.25 s into the teardown of an eval worker whose actor never
    # started (the reference gives it 2 s to close its env, then 0.5 s to say
    # what it holds: the signal lands in the second wait)
    if "evaluator" in comps:
        yield make("signals", fixture, owner,
                   "evaluator-never-scheduled-sigint-in-teardown>teardown", [
                       op("construct", "evaluator", infeasible=True, ready=False),
                       op("interrupt", signal="SIGINT", during="teardown", after=2.25,
                          caught=True),
                       op("teardown", "evaluator"), op("teardown", "evaluator")], quick=True)


#: the construct arg of a collector whose weights a scenario sends: it runs
#: conformance.policies.CartPolePolicy, whose weights fix its action
POLICY = {"policy": "module"}
#: the weight forms update_policy_weights_ accepts (conformance.policies.FORMS)
WEIGHT_FORMS = ("module", "tensordict", "dict")


def _acts(batches=1):
    """Iterate, reading each batch's actions per actor (weights_take_effect)."""
    return op("iterate", "collector", batches=batches, read_actions=True)


def weights(fixture, owner, comps=ALL):
    """Policy weights sent to the collector's actors (``update_policy_weights_``,
    feature ``weights``): the collector is built sync with a policy module
    whose weights fix its action, so each batch says which weights each actor
    holds (``weights_take_effect``). Each accepted form, to every actor and to
    some; while start()'s thread feeds the buffer; after teardown (a clear
    closed error); after one of its actors was killed (a clear error naming
    the death, promptly: no hang); a form it does not accept (a clear
    TypeError, nothing changed, no actor harmed).

    Quick: forms-and-workers (every form, every accepted ``workers`` shape:
    most of the weights path of ``impl/``) and collector-sigkill>weights (an
    unacknowledged send), on multinode only. Measured 2026-11-26, reference,
    multinode/user: 6.4 s and 6.0 s (local: 12.0 s and 12.8 s); the actors
    import torch to unpickle the policy: construct took 4.9 to 8.2 s."""
    built = [op("construct", "collector", sync=True, **place_args(fixture, "collector"),
                **POLICY)]
    # every form in turn, to every actor and to some (an index list, one
    # index): each batch after them shows what each actor holds
    yield make("weights", fixture, owner, "forms-and-workers", [
        *built, _acts(),
        op("weights", "collector", form="module", action=1), _acts(2),
        op("weights", "collector", form="tensordict", action=0, workers=[0]), _acts(),
        op("weights", "collector", form="dict", action=0, workers=1), _acts(),
        op("teardown", "collector")], quick=True)
    # a policy as torchrl users write one, a TensorDictModule: called on a
    # TensorDict of the observation, its "action" entry acted on (the built
    # action in every batch: weights_take_effect);
    # and as a plain function returning a Python int, no tensor
    for policy in ("tdmodule", "function"):
        yield make("weights", fixture, owner, f"{policy}-policy", [
            op("construct", "collector", sync=True, **place_args(fixture, "collector"),
               policy=policy), _acts(2), op("teardown", "collector")], quick=True)
    for form in WEIGHT_FORMS:
        yield make("weights", fixture, owner, form, [
            *built, _acts(), op("weights", "collector", form=form, action=1), _acts(2),
            op("teardown", "collector")])
    # a sigkill, the death Ray could undo by a restart, and ray.kill
    for how in ("sigkill", "ray_kill"):
        yield make("weights", fixture, owner, f"collector-{how}>weights", [
            *built, _acts(), alive_now("collector"), op("kill", "collector", how=how),
            op("check_alive", "collector", expect=False),
            op("weights", "collector", form="module", cause="actor"),
            op("teardown", "collector")], quick=(how == "sigkill"))
    yield make("weights", fixture, owner, "invalid-form", [
        *built, _acts(), op("weights", "collector", form="list", fail="invalid:weights"),
        alive_now("collector"), _acts(), op("teardown", "collector")])
    yield make("weights", fixture, owner, "after-teardown", [
        *built, _acts(), op("teardown", "collector"), op("use", "collector", call="weights")])
    if "buffer" not in comps:
        return
    yield make("weights", fixture, owner, "under-thread", [
        *build(fixture, ("buffer", "collector"), extra={"collector": POLICY}),
        op("start", "collector"), op("wait_frames", "buffer", frames=64),
        op("weights", "collector", form="module", action=1), op("check_writes", "collector"),
        op("teardown", "collector"), op("check_data", "buffer"), op("teardown", "buffer")],
        spec={"total_frames": ENDLESS_IN_PRACTICE})


from conformance.catalog.walks import walks  # noqa: E402 - a family like the others

FAMILIES = {
    "early_break": early_break,
    "exhaustion": exhaustion,
    "background": background,
    "double_close": double_close,
    "with_block": with_block,
    "async_teardown": async_teardown,
    "order": order,
    "restart": user_restart,
    "killed": killed,
    "env_error": env_error,
    "use_after_close": use_after_close,
    "named": named,
    "construction_failure": construction_failure,
    "call_arguments": call_arguments,
    "defaults": defaults,
    "seeded": seeded,
    "exit": interpreter_exit,
    "env_helper": env_helpers,
    "signals": signals,
    "weights": weights,
    "walk": walks,
}
