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

#: key -> what the local run catches that the multinode twin does not
QUICK_ON_LOCAL = {
    # regression variants whose catch on local is the fixture's own
    "background/user/ray-shutdown-under-thread":
        "background-thread-unguarded (local only: the thread restarts a local runtime)",
    "named/user/peer-then-owner":
        "named-worker-outlives-owner (on local by no_leftover_actor, not no_actor_outlives_driver)",
    "signals/user/named-evaluator-sigint-in-teardown>teardown":
        "teardown-done-before-kill (on local by no_leftover_actor, not no_actor_outlives_driver)",
    # the implementation's own runtime is a local one only on this fixture
    "order/impl/collector(shutdown_ray)>evaluator>buffer":
        "deferred-shutdown-forgotten: owned_runtime_ended reads the processes of the runtime "
        "the implementation started, which only this fixture has",
    "construction_failure/impl/collector-one_unknown_env":
        "Tianshou 2.0.1 fails it on local only (ci/results/tianshou): the constructor's own "
        "ray.init starts a runtime here",
    # the torchrl CI slice (ci/torchrl-slice.txt) compares these local verdicts
    "early_break/user/buffer-mode-after-2":
        "the seed's own sequence on a runtime the user started; torchrl slice",
    "killed/user/buffer-sigkill>teardown":
        "torchrl 0.14.1 fails others_untouched here only (1 of 2 runs); torchrl slice",
    "double_close/user/buffer-twice": "torchrl slice (pass on local)",
    "use_after_close/user/evaluator": "torchrl slice",
    # one collector lifecycle on a runtime the user started: every
    # implementation with a collector gets a local quick run
    "early_break/user/async-after-0":
        "torchrl 0.14.1 fails resources_released_at_teardown here, passes on multinode",
}


def quick_on(fixture: str, family: str, owner: str, variant: str) -> bool:
    """Whether a scenario its family marks quick is in the quick profile on
    ``fixture`` (``variant`` before any component subset mark)."""
    return fixture != "local" or f"{family}/{owner}/{variant}" in QUICK_ON_LOCAL
