"""Helpers for an adapter's standalone-script snippets (``Adapter.script_lines``).

An adapter writes the body lines of its operations against its
implementation's API; these build the common shapes: the component verbs of
a torchrl-like API (each verb's own form, ``Verb.api_script``), a teardown from one or more threads, a liveness poll, a
constructor call, and a module-level function's source for the header.
They only build text: no Ray, no harness.
"""
from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conformance.ops.verbs import VERBS, use_calls

if TYPE_CHECKING:  # annotations only
    from conformance.adapter import Spec
    from conformance.ops.scenario import Op

#: The variable a snippet uses for the named eval worker's name (a CLI argument).
ACTOR_NAME = "ACTOR_NAME"


@dataclass(frozen=True)
class Api:
    """What the verbs' script forms through a torchrl-like API
    (``Verb.api_script``, ``Use.expr``) take from the adapter: its spec, its
    ``submit`` call (None: it has none) and its buffer-length expression."""

    spec: Spec
    submit: str | None = None
    length: str = "len(buffer)"


def default_lines(op: Op, spec: Spec, *, submit: str | None = None,
                  length: str = "len(buffer)") -> list[str] | None:
    """Body lines of the component verbs for a torchrl-like API (the defaults
    of :class:`conformance.adapter.Adapter`): ``iter(collector)``,
    ``collector.start()``, ``buffer.sample/extend``, ``len(buffer)``,
    ``evaluator.submit/poll``, each verb's own (``Verb.api_script``).
    ``submit`` is the adapter's submit call. None for a verb that has none."""
    form = VERBS[op.verb].api_script
    return None if form is None else form(op, Api(spec, submit, length))


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
