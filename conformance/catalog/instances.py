"""The ``instances`` family: several components of one kind at once.

Two or three collectors writing into one replay buffer (the Ape-X/IMPALA
topology), two buffers each with its own collector, two eval workers (named
apart, or asking for the same name). One instance's teardown, kill or
exhaustion must leave every other instance's actors, writer and data as
they were: ``others_untouched`` names the instance whose actors ended,
``data_kept`` the buffer that lost frames and the collector whose writes
stopped landing (``check_writes``); a second worker asking for a taken name
must fail clearly (``fails_clearly``) and leave the first one working.
Targets name the instances (``collector.2``, see :mod:`conformance.ops.targets`).
"""
from __future__ import annotations

import itertools

from conformance.catalog.build import ALL, ENDLESS_IN_PRACTICE, SLOW_ENV, op, place_args, \
    teardowns
from conformance.catalog.families import make
from conformance.ops.targets import instance, kind_of

#: collectors writing in the background run the slow env with small batches
#: (16 frames take 0.8 s per actor): the buffer grows steadily and never
#: fills up (a full buffer's length stops growing, and check_writes would
#: read that as writes that no longer land)
WRITERS = {**SLOW_ENV, "frames_per_batch": 16, "total_frames": ENDLESS_IN_PRACTICE}
#: three collectors: each order of theirs with the buffer and Ray last, and
#: the buffer or Ray first (all 120 add nothing the two-collector orders miss)
THREE_ORDERS = (*((*p, "buffer", "ray") for p in itertools.permutations(
    ("collector", "collector.2", "collector.3"))),
    ("buffer", "collector", "collector.2", "collector.3", "ray"),
    ("ray", "collector", "collector.2", "collector.3", "buffer"))
#: two buffers, each with its collector: a careful user's order, each buffer
#: closed under its own writer, one pair after the other, both buffers first
TWO_BUFFER_ORDERS = (
    ("collector", "collector.2", "buffer", "buffer.2"),
    ("collector", "collector.2", "buffer.2", "buffer"),
    ("buffer", "collector", "buffer.2", "collector.2"),
    ("buffer.2", "buffer", "collector.2", "collector"),
    ("collector", "buffer", "collector.2", "buffer.2"),
    ("buffer", "buffer.2", "collector", "collector.2"))


def collectors(n: int) -> tuple[str, ...]:
    return tuple(instance("collector", k) for k in range(1, n + 1))


def construct(fixture: str, target: str, **args):
    """A construct op on the kind's node of the multinode fixture."""
    extra = {"sync": False} if kind_of(target) == "collector" else {}
    return op("construct", target, **place_args(fixture, kind_of(target)), **extra, **args)


def teardowns_checked(order, buffers) -> list:
    """Teardowns in ``order`` ("ray": the user's ray.shutdown()); after each,
    while Ray is up, a reading of every buffer still open: what it held must
    stay (data_kept)."""
    out, open_buffers, ray_up = [], list(buffers), True
    for t in order:
        out += teardowns((t,))
        if t == "ray":
            ray_up = False
            continue
        if t in open_buffers:
            open_buffers.remove(t)
        if ray_up:
            out += [op("check_data", b) for b in open_buffers]
    return out


def _one_buffer(fixture, n, **per_target):
    """A buffer and ``n`` collectors writing into it (``per_target``: an
    instance's own construct arguments)."""
    return [construct(fixture, "buffer"),
            *[construct(fixture, c, buffer=True, **per_target.get(c, {})) for c in collectors(n)]]


def writers_into_one_buffer(fixture, owner):
    """Two and three collectors into one buffer, torn down in every order."""
    orders = [(2, p) for p in itertools.permutations(("collector", "collector.2", "buffer", "ray"))]
    orders += [(3, p) for p in THREE_ORDERS]
    for n, order in orders:
        ops = [*_one_buffer(fixture, n),
               *[op("iterate", c, batches=1) for c in collectors(n)], op("check_data", "buffer"),
               *teardowns_checked(order, ("buffer",))]
        # quick: the first order, two collectors torn down one after the other
        # while the other holds its CPUs (mutation analysis: resources.py:50 and :59
        # of tree 300f2f5, a release wait misreading what the other still holds)
        yield make("instances", fixture, owner, f"{n}-collectors>{'>'.join(order)}", ops,
                   quick=(n, order) == (2, ("collector", "collector.2", "buffer", "ray")))


def _started(fixture, n):
    """``n`` collectors writing into one buffer from their background threads."""
    return [*_one_buffer(fixture, n), *[op("start", c) for c in collectors(n)],
            op("wait_frames", "buffer", frames=32), op("check_data", "buffer")]


def started_writers(fixture, owner):
    """Collectors writing at once: one stops, is killed, or is exhausted; each
    other one still writes into the buffer, which keeps what it holds."""
    for n, stopped in ((2, "collector"), (2, "collector.2"), (3, "collector.2")):
        others = [c for c in collectors(n) if c != stopped]
        yield make("instances", fixture, owner, f"{n}-collectors-started>stop-{stopped}", [
            *_started(fixture, n), op("teardown", stopped), op("check_data", "buffer"),
            *[op("check_writes", c) for c in others], *[op("teardown", c) for c in others],
            op("check_data", "buffer"), op("teardown", "buffer")],
            spec=WRITERS, quick=(n, stopped) == (2, "collector"))
    for how in ("sigkill", "ray_kill"):
        yield make("instances", fixture, owner, f"2-collectors-started>collector-{how}", [
            *_started(fixture, 2), op("kill", "collector", how=how),
            op("check_alive", "collector", expect=False), op("check_data", "buffer"),
            op("check_writes", "collector.2"), op("check_alive", "collector.2", expect=True),
            op("teardown", "collector"), op("check_data", "buffer"),
            op("check_writes", "collector.2"), op("teardown", "collector.2"),
            op("teardown", "buffer")], spec=WRITERS)
    # collector reaches its total_frames (and tears itself down) in the main
    # thread while collector.2, endless, writes from its own
    endless = {"collector.2": {"total_frames": ENDLESS_IN_PRACTICE}}
    yield make("instances", fixture, owner, "exhaust-collector-while-collector.2-writes", [
        *_one_buffer(fixture, 2, **endless), op("start", "collector.2"),
        op("wait_frames", "buffer", frames=16), op("check_data", "buffer"),
        op("exhaust", "collector"), op("check_data", "buffer", at_least=64),
        op("check_writes", "collector.2"), op("teardown", "collector"),
        op("teardown", "collector.2"), op("check_data", "buffer", at_least=64),
        op("teardown", "buffer")], spec={**WRITERS, "total_frames": 64})


def _two_buffers(fixture):
    return [construct(fixture, "buffer"), construct(fixture, "buffer.2"),
            construct(fixture, "collector", buffer=True),
            construct(fixture, "collector.2", buffer="buffer.2")]


def two_buffers(fixture, owner):
    """Two buffers, each with its own collector: one buffer's close (or its
    collector's teardown) must not touch the other's data or writer."""
    both = ("buffer", "buffer.2")
    for order in TWO_BUFFER_ORDERS:
        yield make("instances", fixture, owner, f"2-buffers>{'>'.join(order)}", [
            *_two_buffers(fixture), op("iterate", "collector", batches=1),
            op("iterate", "collector.2", batches=1), *[op("check_data", b) for b in both],
            *teardowns_checked(order, both)])
    yield make("instances", fixture, owner, "2-buffers-started>close-buffer", [
        *_two_buffers(fixture), op("start", "collector"), op("start", "collector.2"),
        *[op("wait_frames", b, frames=16) for b in both], *[op("check_data", b) for b in both],
        op("teardown", "buffer"), op("check_data", "buffer.2"), op("check_writes", "collector.2"),
        op("teardown", "collector"), op("teardown", "collector.2"),
        op("check_data", "buffer.2"), op("teardown", "buffer.2")], spec=WRITERS)


def two_evaluators(fixture, owner):
    """Two eval workers: torn down in every order; named apart, one's
    teardown frees its name only; asking for the same name, the second
    fails clearly and the first is untouched, still working and owned."""
    pair = ("evaluator", "evaluator.2")
    for order in itertools.permutations((*pair, "ray")):
        yield make("instances", fixture, owner, f"2-evaluators>{'>'.join(order)}", [
            *[construct(fixture, e) for e in pair], *[op("submit", e) for e in pair],
            *teardowns(order)])
    names = {"evaluator": True, "evaluator.2": "2"}
    for stopped in pair:
        other = pair[1 - pair.index(stopped)]
        yield make("instances", fixture, owner, f"2-named-evaluators>stop-{stopped}", [
            *[construct(fixture, e, named=names[e]) for e in pair],
            *[op("submit", e) for e in pair],
            *[op("check_name", named=names[e]) for e in pair],
            op("teardown", stopped), op("check_name", named=names[stopped]),
            op("check_name", named=names[other]), op("check_alive", other, expect=True),
            op("submit", other), op("poll", other, timeout=30), op("teardown", other),
            op("check_name", named=names[other])])
    yield make("instances", fixture, owner, "evaluator-same-name", [
        construct(fixture, "evaluator", named=True),
        construct(fixture, "evaluator.2", named=True, fail="name_taken"),
        # a no-op when its construction failed; the first one must be untouched by it
        op("teardown", "evaluator.2"), op("check_alive", "evaluator", expect=True),
        op("submit", "evaluator"), op("poll", "evaluator", timeout=30), op("check_name"),
        # on the implementation's runtime too: the failed construction must not
        # end the runtime the first worker holds (owned_runtime_kept)
        op("teardown", "evaluator"), op("check_name")], quick=True, impl_quick=True)


def instances(fixture, owner, comps=ALL):
    """Several instances of a component at once (see the module docstring)."""
    if "buffer" in comps:
        yield from writers_into_one_buffer(fixture, owner)
        yield from started_writers(fixture, owner)
        yield from two_buffers(fixture, owner)
    if "evaluator" in comps:
        yield from two_evaluators(fixture, owner)
