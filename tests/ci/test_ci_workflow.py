"""The reusable workflow (ci/conformance-gate.yml) and the example fork's caller."""
import os
import re
import subprocess

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GATE = os.path.join(REPO, "ci", "conformance-gate.yml")
CALLER = os.path.join(REPO, "ci", "example-fork", ".github", "workflows", "lifecycle.yml")
INPUTS = {"package", "adapter", "ray-version", "known-failures", "profile", "fixtures",
          "suite-ref"}


def load(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as True
    return doc


def steps():
    return load(GATE)["jobs"]["conformance"]["steps"]


def test_workflow_call_inputs():
    on = load(GATE)["on"]
    assert list(on) == ["workflow_call"]
    inputs = on["workflow_call"]["inputs"]
    assert INPUTS <= set(inputs), sorted(INPUTS - set(inputs))
    assert inputs["profile"]["default"] == "quick"
    assert inputs["fixtures"]["default"] == "local,multinode"
    for name in ("package", "adapter", "ray-version"):
        assert inputs[name]["required"] is True
    assert all(i["type"] == "string" for i in inputs.values())
    text = open(GATE).read()
    used = set(re.findall(r"inputs\.([\w-]+)", text))
    assert used <= set(inputs), sorted(used - set(inputs))  # no undeclared input used
    assert set(inputs) <= used  # and none declared for nothing


def test_steps_in_order():
    s = steps()
    runs = [x.get("run", "") for x in s]
    checkouts = [x for x in s if x.get("uses", "").startswith("actions/checkout@")]
    assert len(checkouts) == 2 and "with" not in checkouts[0]  # the fork, then the suite
    assert checkouts[1]["with"]["path"] and checkouts[1]["with"]["ref"] == "${{ inputs.suite-ref }}"
    setup_py = next(x for x in s if x.get("uses", "").startswith("actions/setup-python@"))
    assert setup_py["with"]["python-version"] == "3.11"

    def index(pred):
        return next(i for i, x in enumerate(s) if pred(x))

    i_setup = index(lambda x: "ci/setup.sh" in x.get("run", ""))
    i_install = index(lambda x: '"ray==$RAY_VERSION"' in x.get("run", ""))
    i_suite = index(lambda x: "-m pytest conformance" in x.get("run", ""))
    i_summary = index(lambda x: "conformance summary" in x.get("run", ""))
    i_upload = index(lambda x: x.get("uses", "").startswith("actions/upload-artifact@"))
    i_gate = index(lambda x: "conformance gate" in x.get("run", ""))
    assert i_setup < i_install < i_suite < i_summary < i_upload < i_gate == len(s) - 1
    assert s[i_install]["env"]["RAY_VERSION"] == "${{ inputs.ray-version }}"
    assert '"$PACKAGE"' in runs[i_install] and '"$SUITE/.venv/bin/python" -m pip install' in runs[i_install]
    suite = s[i_suite]
    assert suite["continue-on-error"] is True
    for flag in ("--impl", "--known-failures", "--conformance-report", "--junitxml",
                 "--profile", "--ray-fixture"):
        assert flag in suite["run"], flag
    assert ">> \"$GITHUB_STEP_SUMMARY\"" in runs[i_summary] and s[i_summary]["if"] == "always()"
    assert s[i_upload]["if"] == "always()"
    assert "if" not in s[i_gate]  # the gate decides the job's status
    assert "continue-on-error" not in s[i_gate]
    assert all(bool(x.get("uses")) != bool(x.get("run")) for x in s)  # one action or one script


def run_suite_step(tmp_path, **inputs):
    """The suite step's script with pytest replaced by echo: the command it runs."""
    step = next(x for x in steps() if x.get("id") == "suite")
    script = step["run"].replace(".venv/bin/python -m pytest", "echo PYTHONPATH=$PYTHONPATH; echo pytest")
    ws = tmp_path / "ws"
    (ws / "tools").mkdir(parents=True)
    (ws / "kf.txt").write_text("x  # y\n")
    env = {**os.environ, "GITHUB_WORKSPACE": str(ws), "REPORTS": str(ws / "reports"),
           "ADAPTER": "a.b:C", "PROFILE": "quick", "FIXTURES": "local,multinode",
           "KNOWN_FAILURES": "", "FORK_PYTHONPATH": "", "WORKERS": "2", **inputs}
    out = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                         env=env, capture_output=True, text=True, check=True).stdout
    return ws, out.splitlines()


def test_suite_step_command_line(tmp_path):
    ws, (pp, cmd) = run_suite_step(tmp_path)
    assert pp == "PYTHONPATH="
    assert "--known-failures" not in cmd
    assert cmd == (f"pytest conformance -q -p no:cacheprovider -n 2 --impl a.b:C --profile quick "
                   f"--ray-fixture local,multinode --conformance-report {ws}/reports/conformance.json "
                   f"--junitxml {ws}/reports/conformance.xml")
    ws, (pp, cmd) = run_suite_step(tmp_path / "2", KNOWN_FAILURES="kf.txt", FORK_PYTHONPATH=".:tools")
    assert pp == f"PYTHONPATH={ws}:{ws}/tools"  # absolute: Ray workers start elsewhere
    assert f"--known-failures {ws}/kf.txt" in cmd
    assert (ws / "reports" / "known-failures.txt").read_text() == "x  # y\n"  # in the artifact


def test_example_fork_calls_the_reusable_workflow():
    inputs = load(GATE)["on"]["workflow_call"]["inputs"]
    job = load(CALLER)["jobs"]["lifecycle"]
    assert job["uses"].split("@")[0].endswith("/.github/workflows/conformance-gate.yml")
    given = set(job["with"])
    assert given <= set(inputs), sorted(given - set(inputs))
    required = {n for n, i in inputs.items() if i.get("required")}
    assert required <= given, sorted(required - given)
    assert job["with"]["adapter"] == "myfork_adapter:MyForkAdapter"
    assert job["with"]["known-failures"] == "known-failures.txt"
    assert os.path.exists(os.path.join(REPO, "ci", "example-fork", job["with"]["known-failures"]))
