"""The quick profile's slots on the local fixture.

A family marks the scenarios it puts in the quick profile (``quick=True`` in
``families.make``, ``QUICK_SEEDS`` for walks). On the multinode fixture that
is the quick profile. On the local fixture a scenario is also quick only if
it is listed here, with what its *local* run catches that its multinode twin
does not: each local scenario starts a Ray runtime of its own in the driver
and ends it (per scenario, median of 59 local quick runs: setup 5.8 s, exit
2.1 s, 10.3 s in all, against 4.3 s on the multinode fixture's shared
cluster; reference, 2026-11-25, `python -m conformance bench --from-report
ci/results/torchrl/reference_ray-2.60.0.json`). The local twins stay in the
full profile, and a regression variant whose catch is the same on both
fixtures is checked on local by ``RLC_CI_FULL=1 pytest
tests/conformance/test_detection.py``;
``test_detection`` holds the quick profile to catching every variant on
multinode, and on local where its local catch is the fixture's own.

Keys are ``family/owner/variant``, the variant before a component subset
marks it (``~no-evaluator``): an implementation with fewer components gets the
slots its components make.
"""
from __future__ import annotations

#: key -> what the local run catches that the multinode twin does not, or
#: what only a local run exercises. Not counted as a reason: a hang's
#: no_leftover_process seen on local only (torchrl 0.14.1's eval worker
#: hangs, Tianshou's collector-hang): the processes the killed hung driver's
#: own runtime left, the same hang as on multinode.
QUICK_ON_LOCAL = {
    # a regression variant caught on local only
    "background/user/ray-shutdown-under-thread":
        "background-thread-unguarded: the thread restarts a local runtime (caught in 6 of 6 "
        "local runs, 3 of 6 multinode: regressions.py)",
    # the implementation's own runtime is a local one only on this fixture
    "built_in_thread/impl/all":
        "a runtime the implementation starts from a thread of the user's that then ends: "
        "Ray's processes die with that thread (PR_SET_PDEATHSIG, Linux); on multinode the "
        "constructor's ray.init connects and starts no process",
    "built_in_thread/impl/all-at-once":
        "every constructor finds Ray down at the same moment, each in its own thread: one of "
        "them starts the runtime the others join (on multinode each one connects)",
    "built_in_thread/impl/all>ray":
        "the user's ray.shutdown() of a runtime the implementation started from a thread "
        "that ended: whatever kept it alive must outlive Ray's processes (on multinode no "
        "process is the implementation's)",
    "order/user/collector-helper-env>ray(across-its-teardown-in-main)":
        "a ray.shutdown() that does not wait for the teardown under way in another thread: "
        "the envs' helper processes, stopped by their slow close(), outlive the killed "
        "actors (no_leftover_process reads them on local only; on multinode the teardown "
        "returns cleanly either way: mutation analysis, impl/component.py:86, 2026-11-29)",
    "order/impl/collector(shutdown_ray)>evaluator>buffer":
        "deferred-shutdown-forgotten: owned_runtime_ended reads, here, the processes of the "
        "runtime the implementation started (on multinode, the actors its job left)",
    "construction_failure/impl/collector-one_unknown_env":
        "Tianshou 2.0.1 fails fails_clearly on local only (ci/results/tianshou): the "
        "constructor's own ray.init starts a runtime here",
    # on a runtime the user started: the seed's sequence and the torchrl CI
    # slice's local half (ci/torchrl-slice.txt covers both fixtures)
    "early_break/user/buffer-mode-after-2":
        "the seed's own sequence (shared/seeds/000) on a runtime the user started; torchrl slice",
    "killed/user/buffer-sigkill>teardown":
        "torchrl 0.14.1 fails others_untouched here only (1 of 2 runs); torchrl slice",
    "double_close/user/buffer-twice": "the buffer's double close on local: torchrl slice",
    "use_after_close/user/evaluator": "the eval worker after close on local: torchrl slice",
    # only the local fixture judges it: the helpers carry the driver's marker here
    "env_helper/user/all":
        "every component's teardown closes its envs: an env's helper process left running is "
        "found once the driver exited (conformance.envs.HelperProcessCartPole)",
    "env_helper/user/collector-slow-close>teardown-within-4s":
        "a teardown gives an env's slow close() (1.5 s) its share of a 4 s bound before the "
        "kill: env-close-cut-short (regressions.py); 7.1 s on the reference (2026-11-28)",
    "env_helper/user/collector-slow-close>teardown-concurrent-within-4s":
        "a second teardown at once waits for the first one's slow env close() instead of "
        "killing the actors under it: concurrent-teardown-kills (regressions.py); 5.8 s on the "
        "reference (2026-11-28)",
    # only here without a placement resource (a node_a amount released with the
    # CPUs would hide what it judges)
    "order/user/collector+evaluator(share-node)>evaluator(built-after)":
        "two components fill the node between them, one is torn down beside the other: a "
        "release wait that misreads the CPU key Ray's view drops when none is free returns "
        "early or waits its whole bound (resources.py, mutation analysis #27); 5.7-7.2 s on "
        "the reference (2026-11-29)",
    # every implementation with a collector gets one local quick run
    "early_break/user/async-after-0":
        "the collector's plainest lifecycle (construct, teardown) on a runtime the user started",
}


#: families that exist on the local fixture only, and why: the quick
#: profile has their scenarios there (a slot above), none on multinode
LOCAL_ONLY_FAMILIES = {
    "env_helper": "an env's helper process carries the driver's marker only where the actors' "
                  "processes do: on the local fixture (conformance.catalog.families.env_helpers)",
}


def quick_on(fixture: str, family: str, owner: str, variant: str) -> bool:
    """Whether a scenario its family marks quick is in the quick profile on
    ``fixture`` (``variant`` before any component subset mark)."""
    return fixture != "local" or f"{family}/{owner}/{variant}" in QUICK_ON_LOCAL
