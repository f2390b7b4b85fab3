"""The harness's time budgets, shared by the driver, the parent and the
standalone script (each operation's own deadline is declared with its verb,
``conformance.ops.verbs``)."""
from __future__ import annotations

#: seconds the probe after one op may take (it waits up to SETTLE_SECONDS for
#: killed actors, twice at most, plus GCS queries of 5 s each at most)
PROBE_DEADLINE = 60.0
#: seconds the final probe may take (actors, the job's actors, their processes)
FINAL_PROBE_DEADLINE = 90.0
#: seconds a reading of the nodes' resources may take before the harness
#: gives up on the run (the driver ends as the harness's failure: everything
#: after it unknown). A bound chosen, well above the readings' duration here
#: (not measured one by one); measured 2026-11-26 (`conformance repro
#: background/local/user/ray-shutdown-under-thread --impl
#: regression:background-thread-unguarded`): on the runtime that variant's
#: thread starts the reading never returned, and the driver waited for the
#: probe's watchdog (PROBE_DEADLINE, 60 s) to end it the same way.
RESOURCES_DEADLINE = 15.0
#: seconds the user's ray.init (or connect) may take
INIT_DEADLINE = 120.0
#: seconds a second driver (peer op) may run before it is killed
PEER_DEADLINE = 240.0
#: seconds the probe waits for a torn-down or killed component's actors to die
SETTLE_SECONDS = 5.0
#: seconds in all the final probe waits for the worker of an actor Ray reports
#: DEAD to exit while that worker is still at work (exiting on a busy machine);
#: one that only sleeps is a zombie actor after SETTLE_SECONDS. A bound chosen,
#: not a measured exit time: with it, the false alarm of issue #29.12
#: (early_break/multinode/user/drop-and-exit, its worker still exiting at CPU
#: pressure 0.96) passed beside two busy loops holding both cores, and the
#: reference's quick profile there had 0 false alarms (2026-11-25,
#: ci/results/load/README.md); how long that worker took was not recorded.
ZOMBIE_GRACE = 30.0


def exit_bound(adapter) -> float:
    """Seconds the interpreter exit may take: the teardown bound plus Ray's own
    shutdown of a runtime the driver started."""
    return adapter.teardown_bound + 5.0
