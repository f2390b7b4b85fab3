"""The ``built_in_thread`` family: components built from a thread of the user's that ends.

A program that overlaps its components' start-up (each build waits for its
actors) builds them in a thread pool or with ``asyncio.to_thread``; such a
worker thread ends when its pool or loop is shut down, often right after the
builds. The components must outlive that thread, and so must a Ray runtime a
build started in it. On Linux that takes care: Ray starts its processes (the
GCS, the raylet) with ``PR_SET_PDEATHSIG``, which the kernel sends when the
*thread* that started them ends, not the process (prctl(2)). Measured with
Ray 2.60.0 (2026-11-29): ``ray.init()`` in a ``threading.Thread`` that then
returned, and the driver's next Ray call hung 60 s ("Failed to connect to
GCS within 60 seconds") before the process exited 1.

So the bug lives on the implementation's own runtime on the local fixture
(``impl``: its constructor starts Ray there). On a runtime the user started,
or on the multinode fixture's cluster (the constructor's ``ray.init``
connects and starts no process), the thread's build is held to everything a
build in the main thread is held to.
"""
from __future__ import annotations

from conformance.catalog.build import ALL, LONG_BATCH_ENV, build, op, teardowns, warm_up
from conformance.catalog.families import make
from conformance.ops.scenario import Op


def _in_thread(ops) -> list[Op]:
    """The construct ops of ``ops``, each built from a thread that then ends."""
    return [Op(o.verb, o.target, {**o.args, "thread": True}) if o.verb == "construct" else o
            for o in ops]


def _ending_ray(ops) -> list[Op]:
    """``ops`` with the last teardown asking to end Ray (``shutdown_ray``), as a
    program done with Ray does: a thread the implementation keeps for as long
    as the runtime it started (one way to outlive the build's thread) must
    then end with it (``no_leftover_thread``, ``owned_runtime_ended``)."""
    last = ops[-1]
    return [*ops[:-1], Op(last.verb, last.target, {**last.args, "shutdown_ray": True})]


def built_in_thread(fixture, owner, comps=ALL):
    """Each component built from an ending thread, used and torn down from the
    main thread; all of them, one thread each (quick: the implementation's own
    runtime on local is the bug's home, the user's on multinode the common case);
    on the implementation's runtime, also with that runtime ended at the end
    (``shutdown_ray``: an implementation without it skips only that one), and
    ended by the user's ``ray.shutdown()`` after the teardowns (``all>ray``), and
    used for longer than a start-up's waits (``collector-long-batch``)."""
    order = tuple(c for c in ("collector", "buffer", "evaluator") if c in comps)
    for comp in comps:
        yield make("built_in_thread", fixture, owner, comp, [
            *_in_thread(build(fixture, (comp,))), *warm_up((comp,)), *teardowns((comp,))])
    if len(comps) > 1:
        # every component at once, each from its thread (a thread pool's map over the
        # constructors, to overlap their actors' start-up): on the implementation's
        # runtime, every constructor finds Ray down at the same moment
        at_once = [Op(o.verb, o.target, {**o.args, "wait": False})
                   for o in _in_thread(build(fixture, comps, buffer_mode=False))]
        yield make("built_in_thread", fixture, owner, "all-at-once", [
            *at_once, *(op("join_build", o.target) for o in at_once), *warm_up(comps),
            *teardowns(order)], quick=True, impl_quick=fixture == "local", built=comps)
    everything = [*_in_thread(build(fixture, comps)), *warm_up(comps)]
    yield make("built_in_thread", fixture, owner, "all", [*everything, *teardowns(order)],
               quick=True, impl_quick=fixture == "local", built=comps)
    if owner == "impl":
        yield make("built_in_thread", fixture, owner, "all(shutdown_ray)",
                   [*everything, *_ending_ray(teardowns(order))], built=comps)
        # a program that goes on using the runtime for longer than any wait of
        # its start-up (one 64-frame batch of 0.2 s steps, 12.8 s:
        # conformance.envs.LONG_STEP_SECONDS): a runtime kept only for a while
        # (a keeper that gives up, a pool worker reaped when idle) dies under it
        if "collector" in comps:
            yield make("built_in_thread", fixture, owner, "collector-long-batch", [
                *_in_thread(build(fixture, ("collector",))),
                op("iterate", "collector", batches=1), op("teardown", "collector")],
                spec=LONG_BATCH_ENV)
        # the user ends the runtime the implementation started, with ray.shutdown(),
        # which waits at most a second for each process Ray started
        # (ray/_private/node.py): what kept that runtime past the build's thread
        # must not end before they all exited (its end SIGKILLs what is left,
        # PR_SET_PDEATHSIG: no_leftover_process), and must end with them
        # (no_leftover_thread)
        yield make("built_in_thread", fixture, owner, "all>ray",
                   [*everything, *teardowns((*order, "ray"))], quick=True,
                   impl_quick=fixture == "local", built=comps)
        # the same end through a name bound before the implementation's import
        # (`from ray import shutdown` in a module imported first): no wrapper of the
        # implementation's runs, so what kept the runtime must see its end by itself
        # and end too, within the liveness bound (the op waits that long for it).
        # Quick on multinode (no local slot): a keeper runs there too (the build's
        # ray.init connects from it), and what it must notice is the same
        yield make("built_in_thread", fixture, owner, "all>ray(bound-before-import)",
                   [*everything, *teardowns(order), op("ray_shutdown", binding="before-import")],
                   quick=True, impl_quick=True, built=comps)
