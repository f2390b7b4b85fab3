"""The whole external profile on a user's cluster, once: not collected by
default (its name is not ``test_*``: about 15 minutes here), run by path::

    RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 .venv/bin/python -m pytest -p no:cacheprovider \
        tests/conformance/external_full_profile.py -s

It starts the cluster and the user's work of ``test_external``, runs
``pytest conformance --profile full --ray-fixture external`` (the
reference) against it with the token in the environment, prints the verdict counts and the time, and
checks what ``test_external`` checks after a run: the user's actors and job
untouched, nothing of the suite's left on the cluster or the machine.
"""
import collections
import time
import uuid

from tests.conformance import test_external
from tests.conformance.suite_run import suite, verdicts

#: test_external's fixtures: the user's cluster and their work on it
cluster, user_work = test_external.cluster, test_external.user_work


def test_full_external_profile(cluster, user_work, tmp_path):
    run_id = f"rlc-f{uuid.uuid4().hex[:8]}"
    env = test_external.user_env_for_the_suite(cluster, RAY_AUTH_TOKEN=open(cluster.token_path).read().strip())
    started = time.monotonic()
    proc, report = suite(tmp_path, "-n", "2", "--profile", "full", "--ray-fixture", "external",
                         "--ray-address", cluster.address, run_id=run_id, env=env)
    out, _ = proc.communicate(timeout=3600)
    elapsed = time.monotonic() - started
    found = verdicts(report)
    counts = collections.Counter(entry["verdict"] for entry in found.values())
    print(f"\nfull external profile: {len(found)} scenarios in {elapsed:.0f} s: "
          f"{dict(sorted(counts.items()))}; pytest's last line: {out.strip().splitlines()[-1]}")
    not_passed = {sid: (e["verdict"], e["oracles"]) for sid, e in found.items()
                  if e["verdict"] != "pass"}
    assert not_passed == {}, out[-5000:]
    test_external.check_untouched_and_clean(cluster, user_work, [run_id])
