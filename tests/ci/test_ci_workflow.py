"""The reusable workflow (ci/conformance-gate.yml) and the example fork's caller.

Its jobs: ``plan`` (the list of shards), ``suite`` (one job per shard, each
uploading its report) and ``conformance`` (the gate: merge, summary, upload,
gate). The scripts of its steps run here as bash, with pytest replaced by
echo; the gate job's run for real on synthetic shard reports."""
import fnmatch
import json
import os
import re
import subprocess
import sys

import yaml

from conformance import catalog
from conformance.reports import report, shard
from conformance.reports.claims import Claim

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GATE = os.path.join(REPO, "ci", "conformance-gate.yml")
CALLER = os.path.join(REPO, "ci", "example-fork", ".github", "workflows", "lifecycle.yml")
INPUTS = {"package", "adapter", "ray-version", "known-failures", "profile", "fixtures",
          "suite-ref", "shards", "shard-durations", "components", "features"}
#: the gate job's name: the check a fork requires, the same with any number of
#: shards, naming the claim the gate holds the report to
GATE_NAME = ("lifecycle conformance (ray ${{ inputs.ray-version }}; claim: components "
             "${{ inputs.components }}, features ${{ inputs.features }}, fixtures "
             "${{ inputs.fixtures }}, ${{ inputs.profile }})")
GATE_STEP = "Gate (the claim, and no new failure)"
#: the claim by default: all of it
CLAIM_INPUTS = {"inputs.components": "all", "inputs.features": "all",
                "inputs.fixtures": "local,multinode", "inputs.profile": "quick"}


def load(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as True
    return doc


def jobs():
    return load(GATE)["jobs"]


def steps(job="suite"):
    return jobs()[job]["steps"]


def index(s, pred):
    return next(i for i, x in enumerate(s) if pred(x))


def test_workflow_call_inputs():
    on = load(GATE)["on"]
    assert list(on) == ["workflow_call"]
    inputs = on["workflow_call"]["inputs"]
    assert INPUTS <= set(inputs), sorted(INPUTS - set(inputs))
    assert inputs["profile"]["default"] == "quick"
    assert inputs["fixtures"]["default"] == "local,multinode"
    assert inputs["shards"]["default"] == "1" and inputs["shard-durations"]["default"] == ""
    assert inputs["components"]["default"] == inputs["features"]["default"] == "all"
    assert "max-skipped" not in inputs  # the claim decides, not a skip count
    for name in ("package", "adapter", "ray-version"):
        assert inputs[name]["required"] is True
    assert all(i["type"] == "string" for i in inputs.values())
    text = open(GATE).read()
    used = set(re.findall(r"inputs\.([\w-]+)", text))
    assert used <= set(inputs), sorted(used - set(inputs))  # no undeclared input used
    assert set(inputs) <= used  # and none declared for nothing


def test_jobs_plan_then_shards_then_the_gate():
    j = jobs()
    assert list(j) == ["plan", "suite", "conformance"]
    assert j["plan"]["outputs"]["shards"] == "${{ steps.plan.outputs.shards }}"
    assert j["suite"]["needs"] == "plan"
    strategy = j["suite"]["strategy"]
    assert strategy["fail-fast"] is False  # every shard runs to its report
    assert strategy["matrix"] == {"shard": "${{ fromJSON(needs.plan.outputs.shards) }}"}
    assert "${{ matrix.shard }}/${{ inputs.shards }}" in j["suite"]["name"]
    gate_job = j["conformance"]
    assert gate_job["name"] == GATE_NAME
    assert gate_job["needs"] == "suite"
    assert gate_job["if"] == "${{ !cancelled() }}"  # after a failed shard too
    for job in j.values():
        for x in job["steps"]:
            assert bool(x.get("uses")) != bool(x.get("run"))  # one action or one script


def test_shard_steps_in_order():
    s = steps("suite")
    runs = [x.get("run", "") for x in s]
    checkouts = [x for x in s if x.get("uses", "").startswith("actions/checkout@")]
    # the fork (its own repository: no repository, no path), then the suite
    assert len(checkouts) == 2 and set(checkouts[0]["with"]) == {"persist-credentials"}
    assert checkouts[1]["with"]["path"] and checkouts[1]["with"]["ref"] == "${{ inputs.suite-ref }}"
    setup_py = next(x for x in s if x.get("uses", "").startswith("actions/setup-python@"))
    assert setup_py["with"]["python-version"] == "3.11"
    i_setup = index(s, lambda x: "ci/setup.sh" in x.get("run", ""))
    i_install = index(s, lambda x: '"ray==$RAY_VERSION"' in x.get("run", ""))
    i_suite = index(s, lambda x: "-m pytest conformance" in x.get("run", ""))
    i_upload = index(s, lambda x: x.get("uses", "").startswith("actions/upload-artifact@"))
    assert i_setup < i_install < i_suite < i_upload == len(s) - 1
    assert s[i_install]["env"]["RAY_VERSION"] == "${{ inputs.ray-version }}"
    assert '"$PACKAGE"' in runs[i_install] and '"$SUITE/.venv/bin/python" -m pip install' in runs[i_install]
    suite = s[i_suite]
    assert suite["continue-on-error"] is True
    assert suite["env"]["SHARD"] == "${{ matrix.shard }}/${{ inputs.shards }}"
    for flag in ("--impl", "--known-failures", "--conformance-report", "--junitxml",
                 "--profile", "--ray-fixture", "--shard", "--shard-durations"):
        assert flag in suite["run"], flag
    assert s[i_upload]["if"] == "always()"
    assert s[i_upload]["with"]["path"] == "conformance-reports/"


def test_gate_steps_in_order():
    s = steps("conformance")
    runs = [x.get("run", "") for x in s]
    checkouts = [x for x in s if x.get("uses", "").startswith("actions/checkout@")]
    assert len(checkouts) == 1 and checkouts[0]["with"]["path"] == ".conformance-suite"
    i_tools = index(s, lambda x: "pip install" in x.get("run", ""))
    i_download = index(s, lambda x: x.get("uses", "").startswith("actions/download-artifact@"))
    i_merge = index(s, lambda x: "conformance merge" in x.get("run", ""))
    i_summary = index(s, lambda x: "conformance summary" in x.get("run", ""))
    i_upload = index(s, lambda x: x.get("uses", "").startswith("actions/upload-artifact@"))
    i_gate = index(s, lambda x: "conformance gate" in x.get("run", ""))
    claim = '--components "$COMPONENTS" --features "$FEATURES" --fixtures "$FIXTURES" ' \
            '--profile "$PROFILE"'
    for i in (i_summary, i_gate):  # one decision: the same claim for both
        assert claim in " ".join(runs[i].replace("\\\n", " ").split()), runs[i]
    assert i_tools < i_download < i_merge < i_summary < i_upload < i_gate == len(s) - 1
    assert "-c ci/requirements.lock pytest" in runs[i_tools]  # all the report commands need
    assert s[i_merge]["continue-on-error"] is True
    assert ">> \"$GITHUB_STEP_SUMMARY\"" in runs[i_summary] and s[i_summary]["if"] == "always()"
    assert s[i_upload]["if"] == "always()"
    assert "if" not in s[i_gate]  # the gate decides the job's status
    assert "continue-on-error" not in s[i_gate]


def expand(text, **values):
    """A workflow expression string with ``${{ name }}`` replaced from values."""
    return re.sub(r"\$\{\{ *([\w.-]+) *\}\}", lambda m: str(values[m.group(1)]), text)


def test_the_gate_downloads_every_shard_s_artifact_and_no_other():
    upload = next(x for x in steps("suite") if x.get("uses", "").startswith("actions/upload-"))
    download = next(x for x in steps("conformance")
                    if x.get("uses", "").startswith("actions/download-"))
    final = next(x for x in steps("conformance") if x.get("uses", "").startswith("actions/upload-"))
    run = {"inputs.profile": "quick", "inputs.ray-version": "2.60.0", "inputs.shards": 4}
    names = [expand(upload["with"]["name"], **run, **{"matrix.shard": i}) for i in (1, 2, 3, 4)]
    pattern = expand(download["with"]["pattern"], **run)
    assert len(set(names)) == 4 and all(fnmatch.fnmatchcase(n, pattern) for n in names)
    others = [expand(final["with"]["name"], **run),  # the merged one
              expand(upload["with"]["name"], **{**run, "inputs.ray-version": "2.50.1"},
                     **{"matrix.shard": 1}),  # another call of the workflow in the run
              expand(upload["with"]["name"], **{**run, "inputs.shards": 2}, **{"matrix.shard": 1})]
    assert not any(fnmatch.fnmatchcase(n, pattern) for n in others)
    assert download["with"]["path"] == "conformance-reports/shards"


def run_plan(tmp_path, shards):
    step = steps("plan")[0]
    tmp_path.mkdir(parents=True)
    out = tmp_path / "github_output"
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                          env={**os.environ, "SHARDS": shards, "GITHUB_OUTPUT": str(out)},
                          capture_output=True, text=True)
    return proc.returncode, out.read_text() if out.exists() else "", proc.stdout


def test_plan_lists_the_shards(tmp_path):
    assert steps("plan")[0]["env"]["SHARDS"] == "${{ inputs.shards }}"
    for shards, want in (("1", [1]), ("4", [1, 2, 3, 4]), ("12", list(range(1, 13)))):
        code, output, _ = run_plan(tmp_path / shards, shards)
        assert code == 0
        key, _, value = output.strip().partition("=")
        assert key == "shards" and json.loads(value) == want
    for bad in ("0", "", "two", "-1", "1.5", "3 "):
        code, output, printed = run_plan(tmp_path / f"bad{len(bad)}{bad.strip()}", bad)
        assert code == 1 and output == "" and "::error::" in printed, bad


def run_suite_step(tmp_path, **inputs):
    """The suite step's script with pytest replaced by echo: the command it runs."""
    step = next(x for x in steps() if x.get("id") == "suite")
    script = step["run"].replace(".venv/bin/python -m pytest", "echo PYTHONPATH=$PYTHONPATH; echo pytest")
    ws = tmp_path / "ws"
    (ws / "tools").mkdir(parents=True)
    (ws / "kf.txt").write_text("x  # y\n")
    env = {**os.environ, "GITHUB_WORKSPACE": str(ws), "REPORTS": str(ws / "reports"),
           "ADAPTER": "a.b:C", "PROFILE": "quick", "FIXTURES": "local,multinode",
           "KNOWN_FAILURES": "", "FORK_PYTHONPATH": "", "WORKERS": "2", "SHARD": "1/1",
           "SHARD_DURATIONS": "", **inputs}
    out = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                         env=env, capture_output=True, text=True, check=True).stdout
    return ws, out.splitlines()


def test_suite_step_command_line(tmp_path):
    ws, (pp, cmd) = run_suite_step(tmp_path)
    assert pp == "PYTHONPATH="
    assert "--known-failures" not in cmd
    assert cmd == (f"pytest conformance -q -p no:cacheprovider -n 2 --impl a.b:C --profile quick "
                   f"--ray-fixture local,multinode --shard 1/1 "
                   f"--conformance-report {ws}/reports/conformance.json "
                   f"--junitxml {ws}/reports/conformance.xml")
    ws, (pp, cmd) = run_suite_step(tmp_path / "2", KNOWN_FAILURES="kf.txt",
                                   FORK_PYTHONPATH=".:tools", SHARD="3/4",
                                   SHARD_DURATIONS="ci/last.json")
    assert pp == f"PYTHONPATH={ws}:{ws}/tools"  # absolute: Ray workers start elsewhere
    assert f"--known-failures {ws}/kf.txt" in cmd
    assert f"--shard 3/4 --shard-durations {ws}/ci/last.json " in cmd
    assert (ws / "reports" / "known-failures.txt").read_text() == "x  # y\n"  # in the artifact


# -- the gate job's steps, run for real on synthetic shard reports ----------------------

def shard_report(index, count, ids, verdicts):
    """The report shard ``index`` of ``count`` writes (as the plugin builds it)."""
    part = shard.plan(ids, count)[index - 1]
    entries = [{"id": i, "family": i.split("/")[0], "fixture": i.split("/")[1],
                "owner": i.split("/")[2], "components": [], "verdict": verdicts.get(i, "pass"),
                "oracles": ["calls_succeed"] if verdicts.get(i) == "fail" else [],
                "evidence": {}, "repro": f"python -m conformance repro {i}", "duration": 1.0,
                "known_failure": None, "expected": None} for i in part.ids]
    doc = report.document("reference", {"ray": "2.60.0"}, entries, "2026-11-24T10:00:00Z",
                          claim=Claim.full().as_dict())
    doc["shard"] = {**shard.record(shard.Shard(index, count), ids, part, profile="quick",
                                   fixtures=["local"], known_failures=None, durations=None,
                                   durations_from=None), "elapsed": 60.0 + index}
    return doc


def run_gate_job(tmp_path, shard_docs):
    """The gate job's steps after the download, in order, as the runner runs
    them (a step after one that failed without continue-on-error is skipped
    unless its ``if`` is always()); `python` is this interpreter. Returns
    {step name: exit code} and the step summary."""
    ws = tmp_path / "ws"
    suite = ws / ".conformance-suite"
    suite.mkdir(parents=True)
    for name in ("conformance", "fixtures"):
        os.symlink(os.path.join(REPO, name), suite / name)
    for name, doc in shard_docs.items():
        (ws / "conformance-reports" / "shards" / name).mkdir(parents=True)
        report.write(doc, str(ws / "conformance-reports" / "shards" / name / "conformance.json"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bin_dir / "python").chmod(0o755)
    summary = tmp_path / "step-summary.md"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "REPORTS": str(ws / "conformance-reports"), "GITHUB_STEP_SUMMARY": str(summary)}
    env.update({k: expand(v, **CLAIM_INPUTS) for k, v in jobs()["conformance"]["env"].items()
                if k != "REPORTS"})
    codes, failed = {}, False
    s = steps("conformance")
    for x in s[index(s, lambda x: "conformance merge" in x.get("run", "")):]:
        if "run" not in x:
            continue
        if failed and x.get("if") != "always()":
            codes[x["name"]] = "skipped"
            continue
        code = subprocess.run(["bash", "--noprofile", "--norc", "-e", "-c", x["run"]],
                              cwd=ws / x.get("working-directory", "."), env=env,
                              capture_output=True, text=True).returncode
        codes[x["name"]] = code
        failed = failed or (code != 0 and not x.get("continue-on-error"))
    return codes, summary.read_text() if summary.exists() else ""


IDS = [s.id for s in catalog.scenarios(("local", "multinode"), "quick")]


def test_gate_job_merges_summarises_and_gates(tmp_path):
    docs = {f"shard-{i}": shard_report(i, 3, IDS, {IDS[4]: "fail"}) for i in (1, 2, 3)}
    codes, text = run_gate_job(tmp_path, docs)
    assert codes == {"Merge the shards' reports": 0, "Step summary": 0,
                     GATE_STEP: 1}  # red: the one new failure, merged
    assert "gate: red" in text and IDS[4] in text and f"{len(IDS)} scenarios" in text
    assert "shard 3/3: " in text and "wall time 63 s" in text  # the shards' details


def test_gate_job_with_one_shard_is_green_as_before(tmp_path):
    codes, text = run_gate_job(tmp_path, {"shard-1": shard_report(1, 1, IDS, {})})
    assert codes["Merge the shards' reports"] == 0 and codes[GATE_STEP] == 0
    assert "gate: green" in text


def test_gate_job_is_red_on_a_missing_shard(tmp_path):
    docs = {f"shard-{i}": shard_report(i, 3, IDS, {}) for i in (1, 3)}  # shard 2 never reported
    codes, text = run_gate_job(tmp_path, docs)
    assert codes["Merge the shards' reports"] == 2
    assert codes[GATE_STEP] == 2  # no report: red
    assert "No conformance report" in text and "shard 2/3 missing" in text
    codes, text = run_gate_job(tmp_path / "none", {})
    assert codes["Merge the shards' reports"] == 2 and codes[GATE_STEP] == 2
    assert "no shard's report to merge" in text


READERS_IMPORT = """
import runpy, sys
sys.argv = ["conformance"] + sys.argv[1:]
try:
    runpy.run_module("conformance", run_name="__main__")
except SystemExit:
    pass
print(",".join(sorted({m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names))))
"""


def test_the_report_commands_need_only_pytest(tmp_path):
    """The gate job installs pytest alone (ci/requirements.lock's pin): merge,
    summary and gate must import nothing else outside the project."""
    docs = [shard_report(i, 2, IDS, {}) for i in (1, 2)]
    paths = []
    for doc in docs:
        paths.append(tmp_path / f"s{doc['shard']['index']}.json")
        report.write(doc, str(paths[-1]))
    merged = tmp_path / "merged.json"
    project = {"__main__", "conformance", "fixtures"}
    pytest_and_its_own = {"_pytest", "pytest", "pluggy", "iniconfig", "packaging", "pygments",
                          "py", "_distutils_hack", "exceptiongroup", "tomli", "colorama"}
    for args in (["merge", merged, *paths], ["summary", merged], ["gate", merged]):
        done = subprocess.run([sys.executable, "-c", READERS_IMPORT, *map(str, args)], cwd=REPO,
                              capture_output=True, text=True, timeout=120, check=True)
        imported = set(done.stdout.strip().splitlines()[-1].split(","))
        assert imported - project <= pytest_and_its_own, (args[0], imported - project)


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
    assert job["with"]["components"] == job["with"]["features"] == "all"  # the whole claim


USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(\S+?)@(\S+)\s*(?:#\s*(.*))?$")


def uses_lines(path):
    """(action, ref, comment) of every `uses:` line of a workflow, as written."""
    return [m.groups() for m in map(USES.match, open(path).read().splitlines()) if m]


def test_actions_are_pinned_by_commit_with_their_version_in_a_comment():
    """#29.13 (zizmor's unpinned-uses): a tag can be moved under a fork's CI, a
    commit cannot; the comment says which release the commit is."""
    for path in (GATE, CALLER):
        found = uses_lines(path)
        assert found, path
        for action, ref, comment in found:
            assert re.fullmatch(r"[0-9a-f]{40}", ref), (path, action, ref)
            if action.startswith("actions/"):
                assert comment and re.fullmatch(r"v\d+\.\d+\.\d+", comment.strip()), \
                    (path, action, comment)
    # the same commit of each action everywhere
    refs = {}
    for action, ref, _ in uses_lines(GATE):
        assert refs.setdefault(action, ref) == ref, action
    # the fork pins the suite's workflow and checks out the suite at that commit
    job = load(CALLER)["jobs"]["lifecycle"]
    assert job["uses"].rsplit("@", 1)[1] == job["with"]["suite-ref"]


def test_no_checkout_keeps_credentials_and_no_job_has_more_than_read_access():
    """#29.13 (zizmor's artipacked, excessive-permissions)."""
    for path in (GATE, CALLER):
        doc = load(path)
        assert doc["permissions"] == {}, path  # nothing by default
        for name, job in doc["jobs"].items():
            granted = job.get("permissions")
            assert granted is not None and set(granted.values()) <= {"read"}, (path, name)
            for x in job.get("steps", []):
                if x.get("uses", "").startswith("actions/checkout@"):
                    assert x["with"]["persist-credentials"] is False, (path, name, x)
