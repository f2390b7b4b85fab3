"""ci/catalog_dump.py: the catalog of a base checkout is unchanged here
(every scenario id, op list, spec and deadline, for every component subset,
both profiles, every fixture; ``ci/catalog-unchanged.sh REV`` runs it
against a git revision). Nothing here starts Ray."""
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DUMP = os.path.join(REPO, "ci", "catalog_dump.py")


def run(*args):
    env = {**os.environ, "PYTHONPATH": REPO}
    return subprocess.run([sys.executable, DUMP, *args], cwd=REPO, env=env, text=True,
                          capture_output=True, timeout=120)


def test_a_changed_dropped_or_stray_scenario_is_reported_and_fails(tmp_path):
    base = json.loads(run().stdout)
    assert set(base) == {f"{p}:{c}" for p in ("quick", "full") for c in (
        "collector", "buffer+collector", "collector+evaluator", "buffer+collector+evaluator")}
    key = "full:buffer+collector+evaluator"
    sid = "order/local/user/collector>buffer>evaluator>ray"
    assert base[key][sid]["deadlines"][0] == 120.0  # construct: ready_timeout + 60
    path = tmp_path / "base.json"
    path.write_text(json.dumps(base))
    same = run("--against", str(path), "--new-families", "")
    assert same.returncode == 0, same.stdout

    changed = json.loads(json.dumps(base))
    changed[key][sid]["deadlines"][0] = 90.0
    gone = "order/local/user/ray>collector>buffer>evaluator"
    changed[key][gone + "-renamed"] = changed[key].pop(gone)
    path.write_text(json.dumps(changed))
    out = run("--against", str(path), "--new-families", "")
    assert out.returncode == 1
    assert f"{key} {sid}: changed" in out.stdout
    assert f"{key} {gone}-renamed: missing" in out.stdout
    assert f"  {key} {gone}\n" in out.stdout  # new here, and not in an allowed family

    fewer = {k: {s: r for s, r in v.items() if not s.startswith("sweep/")}
             for k, v in base.items()}
    path.write_text(json.dumps(fewer))
    assert run("--against", str(path), "--new-families", "sweep").returncode == 0
    assert run("--against", str(path), "--new-families", "").returncode == 1
