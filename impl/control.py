"""Readiness and liveness methods shared by every actor (no heavy imports)."""

from __future__ import annotations

import os

import ray

CONTROL_GROUPS = {"control": 1}


class Control:
    """``ready`` and ``ping`` run on their own thread ("control" concurrency
    group), so they answer while a long or hung call occupies the actor."""

    @ray.method(concurrency_group="control")
    def ready(self) -> bool:
        return True

    @ray.method(concurrency_group="control")
    def ping(self) -> int:
        return os.getpid()

    @ray.method(concurrency_group="control")
    def held(self) -> dict:
        """The node this actor runs on and the resources it holds there
        (``impl.resources``)."""
        context = ray.get_runtime_context()
        return {"node": context.get_node_id(), "resources": context.get_assigned_resources()}
