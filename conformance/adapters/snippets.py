"""Helpers for an adapter's standalone-script snippets (``Adapter.script_lines``).

An adapter writes the body lines of its operations against its
implementation's API; these build the common shapes: the component verbs of
a torchrl-like API, a teardown from one or more threads, a liveness poll, a
constructor call, and a module-level function's source for the header.
They only build text: no Ray, no harness.
"""
from __future__ import annotations

import inspect
import textwrap
from typing import TYPE_CHECKING

from conformance.ops.verbs import WRITES_MORE, WRITES_WAIT

if TYPE_CHECKING:  # annotations only
    from conformance.adapter import Spec
    from conformance.ops.scenario import Op

#: The variable a snippet uses for the named eval worker's name (a CLI argument).
ACTOR_NAME = "ACTOR_NAME"


def call_expr(call: str, spec: Spec, submit: str | None = None) -> str | None:
    """The expression of one component verb, as ``use`` and the verbs call it
    (``conformance.ops.verbs.USE_VERBS``) through a torchrl-like API."""
    return {
        "iterate": "next(iter(collector))",
        "start": "collector.start()",
        "sample": "buffer.sample(4)",
        "extend": "buffer.extend(_batch(4))",
        "len": "len(buffer)",
        "submit": submit,
        "poll": "evaluator.poll(0.5)",
    }.get(call)


def default_lines(op: Op, spec: Spec, *, submit: str | None = None,
                  length: str = "len(buffer)") -> list[str] | None:
    """Body lines of the component verbs for a torchrl-like API (the defaults
    of :class:`conformance.adapter.Adapter`): ``iter(collector)``,
    ``collector.start()``, ``buffer.sample/extend``, ``len(buffer)``,
    ``evaluator.submit/poll``. ``submit`` is the adapter's submit call.
    None for a verb this does not cover."""
    a = op.args
    if op.verb == "iterate":
        k = int(a.get("batches", 1))
        if k <= 0:
            return ["# batches=0: the collector is never iterated",
                    "return '0 batches'"]
        note = ([f"# the env fails midway ({a['cause']}): this must raise, naming it"]
                if a.get("cause") else [])
        return [*note, "n = 0",
                "for _ in collector:",
                "    n += 1",
                f"    if n >= {k}:",
                "        break  # an early break, as a user's loop does",
                "return f'{n} batches'"]
    if op.verb == "exhaust":
        return ["n = 0",
                f"for _ in collector:  # until total_frames={spec.total_frames}",
                "    n += 1",
                "return f'{n} batches'"]
    if op.verb == "start":
        note = f"  # expected to fail: {a['fail']}" if a.get("fail") else ""
        return [f"collector.start(){note}"]
    if op.verb == "wait_frames":
        want, limit = int(a.get("frames", 1)), float(a.get("timeout", 60))
        return ["t0 = time.monotonic()",
                f"n = {length}",
                f"while n < {want}:",
                f"    if time.monotonic() - t0 > {limit}:",
                f"        raise TimeoutError(f'buffer holds {{n}} frames after {limit}s, wanted {want}')",
                "    time.sleep(0.05)",
                f"    n = {length}",
                "return f'{n} frames'"]
    if op.verb == "sample":
        return [f"data = buffer.sample({int(a.get('batch_size', 8))})",
                "return f'numel={data.numel()}'"]
    if op.verb == "extend":
        return [f"buffer.extend(_batch({int(a.get('frames', 8))}))"]
    if op.verb == "submit":
        return None if submit is None else [submit]
    if op.verb == "poll":
        return [f"result = evaluator.poll({float(a.get('timeout', 0))})",
                "return 'ready' if result is not None else 'not ready'"]
    if op.verb == "check_writes":  # the op's lines bind ``buffer`` to the one it writes into
        more = int(a.get("more", WRITES_MORE))
        limit = float(a.get("timeout", WRITES_WAIT))
        return ["t0 = time.monotonic()",
                f"start = n = {length}",
                f"while n < start + {more} and time.monotonic() - t0 < {limit}:",
                "    time.sleep(0.05)",
                f"    n = {length}",
                f"return f'the buffer grew by {{n - start}} frames in "
                f"{{time.monotonic() - t0:.1f}}s ({more} wanted: the collector still writes)'"]
    if op.verb == "check_data":
        at_least = int(a.get("at_least", 1))
        return [f"n = {length}",
                f"return f'{{n}} frames (the buffer held at least {at_least} before)'"]
    if op.verb == "check_error":
        expr = call_expr(a["call"], spec, submit)
        if expr is None:
            return None
        within = float(a.get("within", 5.0))
        return [f"# the {a.get('cause')} failure behind it must reach this call: it raises "
                f"(within {within}s), clearly, chained to that cause",
                "t0 = time.monotonic()",
                f"while time.monotonic() - t0 < {within}:",
                f"    {expr}",
                "    time.sleep(0.1)",
                "return 'returned without raising: the error was not surfaced'"]
    if op.verb == "use":
        expr = call_expr(a["call"], spec, submit)
        if expr is None:
            return None
        if a["call"] == "len":
            expr = length
        return ["# after teardown: the contract wants a clear 'closed' error, at once",
                f"return repr({expr})"]
    return None


def teardown_lines(call: str, op: Op) -> list[str]:
    """A teardown call, ``times`` times, from the main thread, another thread or
    ``concurrent`` threads at once (as ``conformance.ops.verbs.teardown``)."""
    a = op.args
    times, concurrent = int(a.get("times", 1)), int(a.get("concurrent", 1))
    thread = a.get("thread", "main")
    if times == 1 and concurrent == 1 and thread == "main":
        return [call]
    return [f"_teardown(lambda: {call}, times={times}, concurrent={concurrent}, thread={thread!r})"]


def check_alive_lines(expr: str, op: Op) -> list[str]:
    """Ask ``expr`` (an is_alive() call) as ``conformance.ops.verbs.check_alive``
    does: expect=True is judged on the first answer; expect=False is asked
    until it comes, within ``within``; then it must stay for ``stays`` s."""
    expect = bool(op.args.get("expect", False))
    within = float(op.args.get("within", 5.0))
    stays = float(op.args.get("stays", 0))
    return ["t0 = time.monotonic()",
            "answers, reached = [], None",
            "while True:",
            f"    value = bool({expr})",
            "    elapsed = round(time.monotonic() - t0, 3)",
            "    if not answers or answers[-1][1] != value:",
            "        answers.append((elapsed, value))",
            f"    if reached is None and value == {expect}:",
            "        reached = elapsed",
            f"    if (reached is None and ({expect} or elapsed > {within}))"
            f" or (reached is not None and elapsed - reached >= {stays}):",
            "        break",
            "    time.sleep(0.1)",
            f"return f'is_alive() answers (s, value): {{answers}} (expected {expect}"
            f" within {within}s, then for {stays}s)'"]


class Code(str):
    """Source text that :func:`call_lines` writes as is (a name, an expression)."""

    def __repr__(self) -> str:
        return str(self)


def _literal(value) -> str:
    if callable(value) and hasattr(value, "__name__"):  # a module-level function
        return value.__name__
    return repr(value)


def call_lines(head: str, args, kwargs: dict) -> list[str]:
    """``head(arg, ..., key=value, ...)``, one argument per line."""
    return ([f"{head}("] + [f"    {_literal(v)}," for v in args]
            + [f"    {k}={_literal(v)}," for k, v in kwargs.items()] + [")"])


def source_of(obj) -> list[str]:
    """The source lines of a module-level function or class (for the header)."""
    return textwrap.dedent(inspect.getsource(obj)).rstrip().splitlines()
