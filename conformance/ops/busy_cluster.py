"""A cluster busy with other work: harness actors that hold every CPU of
each node (the ``occupy`` verb), so that a component's actor that needs a CPU
waits for one, until ``vacate`` kills them.

The class and both functions are also copied into standalone scripts by
their source (``Verb.script_header``): they use only the standard library
and Ray (the script imports ``time`` and ``ray``), as ``kill_effect``'s.

What a user meets on a shared cluster: a component built with its defaults
whose actors cannot start must give up at its documented ready bound, with
a clear error, and leave no actor behind; a pending actor it left would
start, and hold its CPU, as soon as the other work frees one
(``oracles.ready_bound_as_documented``, ``oracles.fails_clearly``).
"""
from __future__ import annotations

import time

#: seconds the occupiers may take to start (each is pinned to its node and
#: takes that node's every CPU: a CPU an ended scenario's actor still held
#: is shown free within 0.14 s, ``impl/resources.py``'s measurement)
OCCUPY_WAIT = 30.0
#: seconds ``vacate`` waits for the occupiers to be shown dead
VACATE_WAIT = 10.0


class CpuOccupier:
    """Holds the CPUs it was created with, on the node it was pinned to. A
    plain class: ``ray.remote`` is applied in the driver, where Ray runs."""

    def node(self) -> str:
        import ray

        return ray.get_runtime_context().get_node_id()


def occupy(timeout: float = OCCUPY_WAIT) -> list:
    """Start one ``CpuOccupier`` on each live node that has CPUs, holding all
    of them (``ray.nodes()``: every node's total; pinned by
    ``NodeAffinitySchedulingStrategy``, not soft), and wait until each runs.
    Returns their handles; raises ``TimeoutError`` if one did not start (a
    CPU still held by something else), after killing them all."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    actor = ray.remote(CpuOccupier)
    handles = []
    try:
        for node in ray.nodes():
            if node.get("Alive") and node["Resources"].get("CPU"):
                handles.append(actor.options(
                    num_cpus=node["Resources"]["CPU"],
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
                ).remote())
        refs = [h.node.remote() for h in handles]
        ready, pending = ray.wait(refs, num_returns=len(refs), timeout=timeout)
        if pending:
            raise TimeoutError(f"{len(pending)} of {len(refs)} nodes' CPUs not all free within "
                               f"{timeout} s (something else holds some): the cluster could not "
                               "be made busy")
        ray.get(ready)
    except BaseException:  # none of them left behind, whatever went wrong
        try:
            vacate(handles)
        except Exception as exc:  # noqa: BLE001 - the first error is the one to see
            print(f"occupy: while undoing it, {type(exc).__name__}: {exc}")
        raise
    return handles


def vacate(handles: list, timeout: float = VACATE_WAIT) -> float:
    """Kill the occupiers and wait until a call to each fails (dead: a kill
    is asynchronous, a call sent just after it was answered, measured);
    returns the seconds it took. Raises ``TimeoutError`` if one still answers."""
    import ray

    t0 = time.monotonic()
    for h in handles:
        ray.kill(h)
    left = list(handles)
    while left:
        for h in list(left):
            try:
                ray.get(h.node.remote(), timeout=1.0)
            except ray.exceptions.RayActorError:
                left.remove(h)
            except ray.exceptions.GetTimeoutError:
                pass
        if left and time.monotonic() - t0 > timeout:
            raise TimeoutError(f"{len(left)} occupier(s) still answer {timeout} s after their kill")
        if left:
            time.sleep(0.05)
    return round(time.monotonic() - t0, 3)
