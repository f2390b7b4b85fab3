"""#29.11: the commands say what a fork's first hour needs, and the README
carries no count a command can print.

``catalog --counts --impl NAME`` says how many scenarios the adapter's
features skip, and which (``-v``); ``repro`` leaves no scratch directory
behind; the README states no profile size (``catalog --counts`` prints it).
"""
import os
import re
import subprocess
import sys

from conformance import catalog
from fixtures.rayenv import REPO_ROOT

FEATURELESS = "featureless_adapter:FeaturelessAdapter"  # tests/ci: only the buffer feature


def cli(*args, env=None, timeout=120):
    proc = subprocess.run([sys.executable, "-m", "conformance", *map(str, args)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout + proc.stderr


def test_catalog_counts_say_which_scenarios_the_adapter_s_features_skip():
    env = {"PYTHONPATH": os.path.join(REPO_ROOT, "tests", "ci")}
    code, text = cli("catalog", "--counts", "--impl", FEATURELESS, "--fixture", "local", env=env)
    assert code == 0, text
    comps = ("buffer", "collector")
    quick = catalog.scenarios(("local",), "quick", components=comps)
    skipped = [s for s in quick if set(s.requires) - {"buffer"}]
    assert f"quick: {len(quick)} scenarios" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("  featureless runs"))
    assert line.startswith(f"  featureless runs {len(quick) - len(skipped)}, skips "
                           f"{len(skipped)} (features it lacks: async in "), line
    code, text = cli("catalog", "--counts", "--impl", FEATURELESS, "--fixture", "local", "-v",
                     env=env)
    listed = [ln.split()[1].rstrip(":") for ln in text.splitlines()
              if ln.startswith("    skip ")]
    full = catalog.scenarios(("local",), "full", components=comps)
    assert set(listed) == {s.id for s in quick + full if set(s.requires) - {"buffer"}}


def test_repro_leaves_no_scratch_directory_behind(tmp_path):
    scenario = "construction_failure/local/user/collector-invalid-sync_divisible"
    code, text = cli("repro", scenario, env={"TMPDIR": str(tmp_path)}, timeout=300)
    assert code == 0 and "verdict: PASS" in text, text
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("rlc-")] == []
    kept = tmp_path / "kept"
    code, text = cli("repro", scenario, "--workdir", kept, env={"TMPDIR": str(tmp_path)},
                     timeout=300)
    assert code == 0 and (kept / "stderr.txt").exists() and (kept / "history.jsonl").exists()


#: how the README stated a profile's size (quick 107/109/112, full 444/514/522/526)
PROFILE_SIZES = [
    r"(?:quick|full) profile(?:'s)? (?:of )?\d+ scenarios",
    r"\d+-scenario (?:quick|full) profile",
    r"`(?:quick|full)` is [^.]*?\b\d+\s+scenarios",
    r"\b\d+ (?:quick|full) scenarios",
    r"(?:quick|full) profile \(\d+ scenarios",
    r"(?:quick|full) profile on `[^`]*`: \d+",
]


def test_the_readme_states_no_profile_size_and_points_to_the_command():
    with open(os.path.join(REPO_ROOT, "README.md")) as f:
        text = " ".join(f.read().split())
    found = [m.group(0) for p in PROFILE_SIZES for m in re.finditer(p, text)]
    assert found == []
    assert "python -m conformance catalog --counts" in text
