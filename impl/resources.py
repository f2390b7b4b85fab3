"""What a component's actors hold, and the wait until Ray shows it free again.

``ray.kill`` is asynchronous, and so is the cluster's view of free resources:
the actor's raylet returns what it held once its worker is gone and reports
that to the GCS, where ``ray.available_resources()`` reads it. Measured on
Ray 2.60, this machine, 20 kills of two 0.25-CPU actors on each fixture: the
actors DEAD in the GCS 5 ms after ``ray.kill`` (median; max 16), a call to
them failing after 24 ms (max 41), their CPUs back in
``ray.available_resources()`` after 83 ms (median; max 137). A teardown that
returned at the failing call left the CPUs taken for a user who builds the
next component at once or sizes it by ``ray.available_resources()``.
An actor reports where it runs and what it holds there itself
(``get_node_id()``, ``get_assigned_resources()``: ``Control.held``); the wait
reads the view per node.
"""

from __future__ import annotations

import time

import ray

from impl import calls

#: seconds a teardown waits at most for the view to show what it released
#: (within its own bound; 15 times the slowest measured above)
RELEASE_WAIT = 2.0
#: seconds to wait for the actors to say what they hold: one that does not
#: answer (never scheduled) holds nothing
HELD_WAIT = 0.5
#: seconds a teardown waits at most, before its kill, for the view to show
#: what its actors hold taken. The view lags an actor's start as it lags its
#: death: read too early, it already shows the actors' CPUs free and the
#: release wait ends at once, before the kill is seen (CI of f3681cb, local
#: fixture: a collector's teardown returned in 9 ms, its two 0.25-CPU actors'
#: start shown in the view only after, 1.5 CPU free at the return, 2 due;
#: reproduced by hand in the first of 4 builds on a fresh runtime)
SHOWN_WAIT = 1.0
_POLL = 0.01
_SLACK = 1e-3  # Ray keeps 4 decimals of a resource


def held(actors: list, deadline: float) -> dict:
    """``{node_id: {resource: amount}}`` the ``actors`` hold now, summed per
    node: what each one that answers reports; a dead or never-scheduled actor
    holds nothing."""
    refs = [calls.call(h, "held") for h in actors]
    ready, _ = calls.wait(refs, num_returns=len(refs),
                          timeout=max(0.0, min(HELD_WAIT, deadline - time.monotonic())))
    total: dict = {}
    for ref in ready:
        try:
            report = calls.get(ref)
        except Exception:  # died meanwhile: it holds nothing
            continue
        node = total.setdefault(report["node"], {})
        for key, amount in report["resources"].items():
            node[key] = node.get(key, 0.0) + amount
    return total


def merge(into: dict, more: dict) -> dict:
    """``into`` plus ``more``, both ``{node_id: {resource: amount}}``."""
    for node, amounts in more.items():
        mine = into.setdefault(node, {})
        for key, amount in amounts.items():
            mine[key] = mine.get(key, 0.0) + amount
    return into


def _free() -> dict:
    """``{node_id: {resource: available}}`` of every live node. Private on
    purpose: the public ``ray.available_resources()`` sums over nodes, and a
    sum is met by another job's actor ending on another node while this node
    still shows what the teardown's actors held (seen in CI: external
    fixture, two scenarios at once, a teardown returned in 63 ms with its
    node's 0.25 CPU still taken)."""
    from ray._private import state

    return state.available_resources_per_node()


def _total() -> dict:
    """``{node_id: {resource: total}}`` of every live node (see ``_free``)."""
    from ray._private import state

    return state.total_resources_per_node()


def _shown_taken(holding: dict, free: dict, total: dict) -> bool:
    """The view ``free`` shows ``holding`` taken on every live node: at most
    the node's total minus what is held is free."""
    return all(free.get(node, {}).get(k, 0.0) <= total[node].get(k, 0.0) - v + _SLACK
               for node, amounts in holding.items() if node in total
               for k, v in amounts.items() if v > 0)


class Release:
    """What Ray must show free on each node once ``holding`` (per node) is
    released, from the view read before: for each resource, the free amount
    then (at most the node's total minus ``holding``: the view lags an actor's
    start too) plus ``holding``. Read once the view shows ``holding`` taken
    (waiting up to ``SHOWN_WAIT``, within ``deadline``): else a view still
    lagging the start would show the release before the kill."""

    def __init__(self, holding: dict, deadline: float = float("inf")) -> None:
        until = min(deadline, time.monotonic() + SHOWN_WAIT)
        while True:
            free, total = _free(), _total()
            if _shown_taken(holding, free, total) or time.monotonic() >= until:
                break
            time.sleep(_POLL)
        self.expected = {
            node: {k: min(free.get(node, {}).get(k, 0.0), total[node].get(k, 0.0) - v) + v
                   for k, v in amounts.items() if v > 0}
            for node, amounts in holding.items() if node in total}

    def wait(self, deadline: float) -> bool:
        """Until the view shows it on every node (bounded); True if it did.
        A node that left the cluster shows nothing: what it held is gone."""
        if not any(self.expected.values()):
            return True
        until = min(deadline, time.monotonic() + RELEASE_WAIT)
        while True:
            free = _free()
            if all(node not in free or free[node].get(k, 0.0) + _SLACK >= v
                   for node, want in self.expected.items() for k, v in want.items()):
                return True
            if time.monotonic() >= until:
                return False
            time.sleep(_POLL)
