"""How pytest-xdist schedules the scenarios: by its default (--dist load),
with no xdist_group mark, which acts only under --dist loadgroup and made
the quick profile slower there (measured in conformance/plugin.py)."""
import os
import subprocess
import sys

from tests.conformance.suite_run import REPO


def test_no_scenario_carries_an_xdist_group_mark():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RLC_", "PYTEST_"))}
    proc = subprocess.run([sys.executable, "-m", "pytest", "conformance", "--collect-only", "-q",
                           "-p", "no:cacheprovider", "-m", "xdist_group"], cwd=REPO, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert proc.returncode == 5, proc.stdout  # 5: no test selected
    assert " deselected" in proc.stdout, proc.stdout
