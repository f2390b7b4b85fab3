"""The ``sweep`` family: construct -> use -> teardown, then construct again
in the same driver process, as a hyper-parameter sweep's loop does.

Generation 2's components are new instances (``collector.2``, see
:mod:`conformance.ops.targets`). Nothing of generation 1 may reach generation 2:
no actor or thread left between them (``check_clean``, judged by
``no_leftover_actor`` and ``no_leftover_thread``), the name of a named eval
worker free for the next one (``name_freed``; generation 2 asks for the same
name), a buffer kept across generations still taking the new collector's
writes (``data_kept``: the first collector's fenced writer must not fence
the second), and the runtime: on the ``impl`` owner, generation 1 ends with
``shutdown_ray=True``, so generation 2 starts Ray again, and a runtime the
user starts between two generations is the user's, whatever the library
started before (``ray_not_shut_down_by_non_owner``).
"""
from __future__ import annotations

from conformance.catalog.build import ALL, as_instance, build, op, warm_up
from conformance.catalog.families import make
from conformance.catalog.instances import WRITERS
from conformance.ops.scenario import Op


def generation(fixture, owner, comps) -> list:
    """Build every component, use each, tear them down (the writer last, so
    that on the ``impl`` owner its ``shutdown_ray=True`` ends Ray)."""
    last = {"shutdown_ray": True} if owner == "impl" else {}
    return [*build(fixture, comps), *warm_up(comps),
            *([op("check_data", "buffer")] if "buffer" in comps else []),
            *[op("teardown", c) for c in ("evaluator", "buffer") if c in comps],
            op("teardown", "collector", **last)]


def sweep(fixture, owner, comps=ALL):
    """Two generations of components in one driver (see the module docstring)."""
    first = generation(fixture, owner, comps)
    yield make("sweep", fixture, owner, "all", [*first, op("check_clean"),
                                                 *as_instance(first, 2)], built=comps)
    if "buffer" in comps:
        # the buffer lives on; generation 2's collector writes into it
        pair = build(fixture, ("buffer", "collector"))
        yield make("sweep", fixture, owner, "keep-buffer", [
            *pair, op("start", "collector"), op("wait_frames", "buffer", frames=16),
            op("check_data", "buffer"), op("teardown", "collector"), op("check_data", "buffer"),
            Op("construct", "collector.2", pair[1].args), op("start", "collector.2"),
            op("check_writes", "collector.2"), op("teardown", "collector.2"),
            op("check_data", "buffer"), op("teardown", "buffer")], spec=WRITERS)
    if "evaluator" in comps:
        named = [op("construct", "evaluator", named=True), op("submit", "evaluator"),
                 op("poll", "evaluator", timeout=30), op("check_name"),
                 op("teardown", "evaluator"), op("check_name")]
        yield make("sweep", fixture, owner, "named", [*named, op("check_clean"),
                                                       *as_instance(named, 2)])
    if owner == "impl":
        # the library started Ray for generation 1 and shut it down; the user
        # starts it for generation 2: that runtime is the user's
        ops = [*build(fixture, ("collector",)), op("iterate", "collector", batches=1),
               op("teardown", "collector", shutdown_ray=True), op("ray_restart")]
        yield make("sweep", fixture, owner, "impl-then-user", [
            *ops, *as_instance(ops[:3], 2)], quick=True, impl_quick=True)
