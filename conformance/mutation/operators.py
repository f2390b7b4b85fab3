"""Lifecycle mutation operators cosmic-ray lacks, as its operator provider
``rlc`` (declared in ``plugins/rlc_mutation-1.0.dist-info/entry_points.txt``).

cosmic-ray's core operators change expressions (comparisons, operators,
booleans, numbers, exception handlers, decorators, loops). Lifecycle bugs
are also missing steps and missing bounds; these operators make them:

- ``DeleteTeardownStatement``: one simple statement of a teardown path
  becomes ``pass`` (a kill, a join, a release, a fence, an early return);
- ``DropLock``: ``with <...lock>:`` runs without the lock;
- ``UnboundedWait``: a bounded wait waits forever (``timeout=...`` becomes
  ``timeout=None``; ``.join(x)`` / ``.wait(x)`` lose their bound);
- ``SwallowReraises`` / ``SwallowSwallows``: ``calls.swallow`` re-raises
  every error / ignores every error (``KeyboardInterrupt`` included);
- ``AugmentedToPlain``: ``|=``, ``+=``, ``-=`` become ``=``.
"""
from __future__ import annotations

import parso
from cosmic_ray.operators.operator import Example, Operator
from parso.python.tree import Name

#: the functions of ``impl/`` that tear down, stop or release (by name): where
#: a deleted statement is a lifecycle bug rather than any bug
TEARDOWN_FUNCTIONS = frozenset({
    "_stop_background_work", "wrapper", "_abort_construction", "_teardown", "_join_thread",
    "_kill_actors", "_before_kill", "_close_envs", "_after_kill", "_actors_unreachable",
    "__exit__", "_check_open", "shutdown", "close", "release", "async_shutdown", "fence", "close_env",
    "_collect_in_background", "kill",
})
WAITS = frozenset({"join", "wait"})
AUGMENTED = ("|=", "+=", "-=")


def _function_of(node):
    """The name of the innermost function around ``node`` (or None)."""
    parent = node.parent
    while parent is not None and parent.type != "funcdef":
        parent = parent.parent
    return None if parent is None else parent.name.value


def _replace(node, code: str):
    """A leaf printing ``code`` in place of ``node`` (its prefix kept)."""
    leaf = Name(code, node.start_pos, prefix=node.get_first_leaf().prefix)
    leaf.parent = node.parent
    return leaf


class DeleteTeardownStatement(Operator):
    """A simple statement (not a docstring, not ``pass``) of a teardown
    function becomes ``pass``."""

    def mutation_positions(self, node):
        if node.type != "simple_stmt" or len(node.children) != 2:
            return
        stmt = node.children[0]
        if stmt.type == "string" or getattr(stmt, "value", None) == "pass":
            return
        if _function_of(node) in TEARDOWN_FUNCTIONS:
            yield (node.start_pos, stmt.end_pos)

    def mutate(self, node, index):
        node.children[0] = _replace(node.children[0], "pass")
        return node

    @classmethod
    def examples(cls):
        return (Example("def close(self):\n    self.kill()\n", "def close(self):\n    pass\n"),
                Example("def other(self):\n    self.kill()\n", "def other(self):\n    self.kill()\n"))


class DropLock(Operator):
    """``with self._lock:`` (any with-item whose expression ends in ``lock``)
    becomes ``with contextlib.nullcontext():``."""

    def mutation_positions(self, node):
        if node.type == "with_stmt":
            item = node.children[1]
            if item.type != "with_item" and item.get_code().strip().lower().endswith("lock"):
                yield (item.start_pos, item.end_pos)

    def mutate(self, node, index):
        node.children[1] = _replace(node.children[1], '__import__("contextlib").nullcontext()')
        return node

    @classmethod
    def examples(cls):
        return (Example("with self._lock:\n    x = 1\n",
                        'with __import__("contextlib").nullcontext():\n    x = 1\n'),)


class UnboundedWait(Operator):
    """``timeout=<bound>`` becomes ``timeout=None``; ``x.join(bound)`` and
    ``x.wait(bound)`` become ``x.join()`` / ``x.wait()``."""

    def mutation_positions(self, node):
        if node.type == "argument" and len(node.children) == 3:
            name, _, value = node.children
            if getattr(name, "value", None) == "timeout" and value.get_code().strip() != "None":
                yield (value.start_pos, value.end_pos)
        elif node.type == "trailer" and node.children[0].value == "(" and len(node.children) == 3:
            previous = node.get_previous_sibling()
            arg = node.children[1]
            if (previous is not None and previous.type == "trailer"
                    and previous.children[-1].type == "name" and previous.children[-1].value in WAITS
                    and arg.type not in ("arglist", "argument")):
                yield (arg.start_pos, arg.end_pos)

    def mutate(self, node, index):
        if node.type == "argument":
            node.children[2] = _replace(node.children[2], "None")
        else:
            node.children = [node.children[0], node.children[2]]
        return node

    @classmethod
    def examples(cls):
        return (Example("ray.wait(refs, timeout=2.0)\n", "ray.wait(refs, timeout=None)\n"),
                Example("thread.join(deadline)\n", "thread.join()\n"),
                Example("done.wait(1)\n", "done.wait()\n"),
                Example("ray.wait(refs, timeout=None)\n", "ray.wait(refs, timeout=None)\n"))


class _SwallowBody(Operator):
    """The body of ``swallow(exc)`` replaced by one statement."""

    body = "pass"

    def mutation_positions(self, node):
        if node.type == "funcdef" and node.name.value == "swallow":
            yield (node.start_pos, node.end_pos)

    def mutate(self, node, index):
        header = "".join(child.get_code() for child in node.children[:-1])
        indent = " " * (node.start_pos[1] + 4)
        new = parso.parse(f"{header}\n{indent}{self.body}\n").children[0]
        new.parent = node.parent
        return new

    @classmethod
    def examples(cls):
        return (Example("def swallow(exc):\n    if x:\n        raise exc\n",
                        f"def swallow(exc):\n    {cls.body}\n"),)


class SwallowReraises(_SwallowBody):
    """Teardown lets every error out."""

    body = "raise exc"


class SwallowSwallows(_SwallowBody):
    """Teardown ignores every error, ``KeyboardInterrupt`` and the main
    thread's ``SystemExit`` included."""

    body = "return None"


class AugmentedToPlain(Operator):
    """``x |= y`` (``+=``, ``-=``) becomes ``x = y``: the old value is lost."""

    def mutation_positions(self, node):
        if node.type == "operator" and node.value in AUGMENTED:
            yield (node.start_pos, node.end_pos)

    def mutate(self, node, index):
        node.value = "="
        return node

    @classmethod
    def examples(cls):
        return (Example("a |= b\n", "a = b\n"), Example("n += 1\n", "n = 1\n"))


OPERATORS = {op.__name__: op for op in (
    DeleteTeardownStatement, DropLock, UnboundedWait, SwallowReraises, SwallowSwallows,
    AugmentedToPlain)}


class Provider:
    """cosmic-ray's operator-provider interface: iterate names, index classes."""

    def __iter__(self):
        return iter(OPERATORS)

    def __getitem__(self, name):
        return OPERATORS[name]
