"""A cosmic-ray filter (its ``FilterApp`` mechanism, as ``cr-filter-operators``):
mutants that cannot change what a user or the suite sees are skipped,
equivalent by construction:

- inside an annotation: every module of ``impl/`` that has annotations starts with ``from __future__
import annotations``: an annotation is a string Python never evaluates, so a
mutant there (``dict | None`` to ``dict & None``, cosmic-ray's binary
replacements hit every ``X | None``) cannot change behaviour;
- inside a call of the module's ``logger`` (or a whole such call deleted):
  only a log record changes; the lifecycle contract says nothing about logs
  (``clean_stderr`` looks for tracebacks and Ray's errors, not log lines).
"""
from __future__ import annotations

from pathlib import Path

import parso
from cosmic_ray.tools.filters.filter_app import FilterApp
from cosmic_ray.work_item import WorkerOutcome, WorkResult

REASON = ("equivalent by construction: inside an annotation, never evaluated "
          "(from __future__ import annotations)")
LOG_REASON = "equivalent by construction: changes only a log record (a logger call)"
LOGGERS = ("logger", "logging")


def in_log_call(leaf) -> bool:
    """``leaf`` is part of ``logger.<level>(...)`` (the call or its arguments)."""
    node = leaf
    while node is not None and node.type not in ("suite", "file_input"):
        if (node.type == "atom_expr" and node.children[0].type == "name"
                and node.children[0].value in LOGGERS and node.children[-1].type == "trailer"
                and node.children[-1].children[0].value == "("):
            return True
        node = node.parent
    return False


def in_annotation(leaf) -> bool:
    """``leaf`` is part of a parameter's, a return's or a variable's annotation."""
    child, node = leaf, leaf.parent
    while node is not None:
        if node.type in ("tfpdef", "annassign") and child is not node.children[0]:
            if node.type == "tfpdef" or (node.type == "annassign" and child is node.children[1]):
                return True
        if node.type == "param":
            colon = next((i for i, c in enumerate(node.children) if c.type == "operator" and c.value == ":"), None)
            if colon is not None and node.children.index(child) > colon and not (
                    "=" in [c.value for c in node.children[colon:node.children.index(child)] if c.type == "operator"]):
                return True
        if node.type == "funcdef":
            arrow = next((i for i, c in enumerate(node.children) if c.type == "operator" and c.value == "->"), None)
            return arrow is not None and node.children.index(child) == arrow + 1
        if node.type in ("suite", "file_input"):
            return False
        child, node = node, node.parent
    return False


class EquivalentFilter(FilterApp):
    """Mark every pending mutant inside an annotation or a logger call as skipped."""

    def description(self):
        return __doc__

    def filter(self, work_db, args):
        trees = {}
        for item in list(work_db.pending_work_items):
            (mutation,) = item.mutations
            path = Path(mutation.module_path)
            if path not in trees:
                source = path.read_text()
                trees[path] = parso.parse(source) if "from __future__ import annotations" in source else None
            tree = trees[path]
            leaf = tree.get_leaf_for_position(tuple(mutation.start_pos)) if tree is not None else None
            reason = leaf is not None and (REASON if in_annotation(leaf) else LOG_REASON if in_log_call(leaf)
                                           else None)
            if reason:
                work_db.set_result(item.job_id, WorkResult(output=reason, worker_outcome=WorkerOutcome.SKIPPED))
