"""CI gating for forks, end to end: the example fork (ci/example-fork) run by
`pytest conformance` as its CI runs it, then `python -m conformance gate`,
`summary` and `matrix` on the real reports.

Small selections on the local fixture keep this to a few minutes. The full
check that ci/example-fork/known-failures.txt lists exactly what the fork's
bug fails in the quick profile is opt-in: RLC_CI_FULL=1 (about 15 minutes).
"""
import json
import os
import subprocess
import sys
import uuid
from html.parser import HTMLParser

import pytest

from conformance import catalog
from conformance.reports import known_failures
from conformance.run.execute import interpreter

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FORK = os.path.join(REPO, "ci", "example-fork")
KNOWN = os.path.join(FORK, "known-failures.txt")
ADAPTER = "myfork_adapter:MyForkAdapter"

# The fork's bug (a second buffer.close() raises) fails these; both are listed
# in known-failures.txt.
LISTED_FAILING = "double_close/local/user/buffer-twice"
OTHER_FAILING = "double_close/multinode/user/buffer-twice"
# ... and does not touch this one (invalid arguments, rejected before Ray starts: fast).
PASSING = "construction_failure/local/user/collector-invalid-sync_divisible"


def run_suite(tmp_path, scenarios, known_file=None, impl=ADAPTER):
    """`pytest conformance` on the local fixture; returns (exit code, output, report path)."""
    report = tmp_path / f"report-{uuid.uuid4().hex[:6]}.json"
    env = {**os.environ, "RLC_RUN_ID": f"rlc-ci{uuid.uuid4().hex[:8]}",
           # absolute: Ray workers do not start in this directory
           "PYTHONPATH": os.pathsep.join([FORK, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    for var in ("RLC_MARKER", "RLC_RUN_MARKER", "PYTEST_XDIST_WORKER",
                "PYTEST_XDIST_WORKER_COUNT", "PYTEST_CURRENT_TEST", "RLC_KNOWN_FAILURES",
                "RLC_SCENARIO", "RLC_IMPL", "RLC_REPORT", "RLC_PROFILE", "RLC_RAY_FIXTURE"):
        env.pop(var, None)
    cmd = [sys.executable, "-m", "pytest", "conformance", "-p", "no:cacheprovider", "-q",
           "-n", "0", "--impl", impl, "--ray-fixture", "local,multinode", "--profile", "full",
           "--conformance-report", str(report)]
    if known_file:
        cmd += ["--known-failures", str(known_file)]
    for s in scenarios:
        cmd += ["--scenario", s]
    proc = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600)
    return proc.returncode, proc.stdout, report


def cli(*args):
    """`python -m conformance ARGS`; returns (exit code, stdout + stderr)."""
    proc = subprocess.run([sys.executable, "-m", "conformance", *map(str, args)], cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=120)
    return proc.returncode, proc.stdout


def verdicts(report) -> dict:
    return {s["id"]: s for s in json.loads(report.read_text())["scenarios"]}


@pytest.fixture(scope="module")
def fork_run(tmp_path_factory):
    """(a) The fork with its own known-failures file: one listed failure, one pass."""
    tmp = tmp_path_factory.mktemp("fork")
    code, out, report = run_suite(tmp, [LISTED_FAILING, PASSING], KNOWN)
    assert report.exists(), out
    return code, out, report


@pytest.fixture(scope="module")
def new_failure_run(tmp_path_factory):
    """(b) A failing scenario that the known-failures copy does not list."""
    tmp = tmp_path_factory.mktemp("new")
    listed = known_failures.load(KNOWN)
    assert OTHER_FAILING in listed
    copy = tmp / "known-failures.txt"
    lines = [ln for ln in open(KNOWN).read().splitlines()
             if not ln.strip().startswith(OTHER_FAILING)]
    copy.write_text("\n".join(lines) + "\n")
    assert OTHER_FAILING not in known_failures.load(copy)
    code, out, report = run_suite(tmp, [OTHER_FAILING], copy)
    assert report.exists(), out
    return code, out, report


@pytest.fixture(scope="module")
def unexpected_pass_run(tmp_path_factory):
    """(c) A known-failures copy that lists a scenario which passes."""
    tmp = tmp_path_factory.mktemp("unexpected")
    copy = tmp / "known-failures.txt"
    copy.write_text(open(KNOWN).read() + f"{PASSING}  fail[fails_clearly]  # listed by mistake\n")
    code, out, report = run_suite(tmp, [PASSING], copy)
    assert report.exists(), out
    return code, out, report


# -- (a) the fork example with its known-failures file: green ---------------------

def claim_only(text: str) -> bool:
    """The gate is red for the claim alone: these runs select 2 scenarios of it."""
    short = [ln for ln in text.splitlines() if ln.startswith("CLAIM NOT MET: ")]
    return len(short) == 1 and "of the claim's" in short[0] and "not in the report" in short[0]


def test_fork_with_its_known_failures_has_no_new_failure(fork_run):
    code, out, report = fork_run
    found = verdicts(report)
    assert found[LISTED_FAILING]["verdict"] == "fail", out
    assert found[LISTED_FAILING]["known_failure"], found[LISTED_FAILING]
    assert found[LISTED_FAILING]["expected"]["oracles"] == ["teardown_never_raises"]
    assert found[LISTED_FAILING]["oracles"] == ["teardown_never_raises"], found[LISTED_FAILING]
    assert found[PASSING]["verdict"] == "pass", out
    assert code == 0, out  # pytest: the listed failure, as listed, is an xfail
    gate, text = cli("gate", report)
    assert "NEW" not in text and "1 known failure(s) still failing" in text, text
    assert gate == 1 and claim_only(text), text  # a selection is no claim


# -- (b) a failure not in the file turns the gate red and names it ------------------

def test_unlisted_failure_turns_the_gate_red(new_failure_run):
    code, out, report = new_failure_run
    found = verdicts(report)
    assert found[OTHER_FAILING]["verdict"] == "fail", out
    assert found[OTHER_FAILING]["known_failure"] is None
    assert code == 1, out  # pytest itself fails too
    gate, text = cli("gate", report)
    assert gate == 1, text
    assert f"NEW FAIL: {OTHER_FAILING}" in text, text
    repro = found[OTHER_FAILING]["repro"]
    assert repro == (f"PYTHONPATH=ci/example-fork {interpreter()} -m conformance repro "
                     f"{OTHER_FAILING} --impl {ADAPTER}")
    assert f"repro: {repro}" in text, text
    assert PASSING not in text  # only the new failure is named
    assert "gate: FAILED: 1 new failure" in text, text
    assert claim_only(text), text


# -- (c) a listed scenario that passes: green, and reported -------------------------

def test_listed_scenario_that_passes_is_an_unexpected_pass(unexpected_pass_run):
    code, out, report = unexpected_pass_run
    entry = verdicts(report)[PASSING]
    assert entry["verdict"] == "pass", out
    assert entry["known_failure"] == "listed by mistake"
    assert code == 0, out
    gate, text = cli("gate", report)
    assert gate == 1 and claim_only(text) and "NEW" not in text, text
    assert (f"unexpected pass: {PASSING} (listed: listed by mistake): "
            "remove it from the known-failures file") in text, text


def test_missing_report_is_red(tmp_path):
    gate, text = cli("gate", tmp_path / "absent.json")
    assert gate == 2 and "no usable report" in text, text


# -- (d) summary and matrix from real reports -----------------------------------------

def test_summary_of_a_real_report(new_failure_run, tmp_path):
    _, _, report = new_failure_run
    out = tmp_path / "summary.md"
    code, text = cli("summary", report, "--out", out)
    assert code == 0, text
    md = out.read_text()
    assert md.startswith(f"# Lifecycle conformance: `{ADAPTER}`"), md
    assert "ray `" in md.splitlines()[2], md  # versions in the header
    assert "gate: red" in md and "1 new failure" in md, md
    # the matrix: double_close/local has 1 of 1 run, failed (new)
    assert "| double_close | 0/1 ❌ | 0/1 ❌ |" in md, md  # local, all
    assert "| **all** | **0/1 ❌** | **0/1 ❌** |" in md, md
    entry = verdicts(report)[OTHER_FAILING]
    assert f"### `{OTHER_FAILING}`: FAIL" in md, md
    for oracle in entry["oracles"]:
        assert f"`{oracle}`" in md
    first = entry["evidence"]["violations"][entry["oracles"][0]][0].splitlines()[0]
    assert first in md, md
    assert entry["repro"] in md
    # stdout and --out agree
    code, stdout = cli("summary", report)
    assert stdout == md


def test_summary_sections_for_known_failures_and_unexpected_passes(fork_run,
                                                                   unexpected_pass_run):
    md = cli("summary", fork_run[2])[1]
    assert "gate: red**: the report covers less than the claim" in md  # a selection of it
    assert "## ⚠️ Known failures (1)" in md and f"`{LISTED_FAILING}`" in md, md
    assert "New failures" not in md
    reason = known_failures.load(KNOWN)[LISTED_FAILING]
    assert reason.replace("|", "\\|") in md
    md = cli("summary", unexpected_pass_run[2])[1]
    assert "## Unexpected passes (1)" in md and f"`{PASSING}` (listed: listed by mistake)" in md


class Cells(HTMLParser):
    """The matrix's cells: {(row id, column index): (classes, title, text)}."""

    def __init__(self):
        super().__init__()
        self.cells, self.row, self.col, self.cur, self.heads = {}, None, -1, None, []
        self.external = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("link", "script", "img", "iframe"):
            self.external.append(tag)
        if tag == "tr":
            self.row, self.col = None, -1
        elif tag == "th" and "col" in (a.get("class") or "").split():
            self.heads.append("")
            self.cur = ("head", len(self.heads) - 1)
        elif tag == "th" and self.row is None and a.get("title"):
            self.row = a["title"]
        elif tag == "td" and self.row:
            self.col += 1
            self.cells[(self.row, self.col)] = [a.get("class", ""), a.get("title", ""), ""]
            self.cur = (self.row, self.col)

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.cur = None

    def handle_data(self, data):
        if self.cur and self.cur[0] == "head":
            self.heads[self.cur[1]] += data
        elif self.cur:
            self.cells[self.cur][2] += data


def test_matrix_of_real_reports(fork_run, new_failure_run, unexpected_pass_run, tmp_path):
    reports = [fork_run[2], new_failure_run[2], unexpected_pass_run[2]]
    html_out, md_out = tmp_path / "m.html", tmp_path / "m.md"
    code, text = cli("matrix", *reports, "--html", html_out, "--markdown", md_out)
    assert code == 0, text
    page = Cells()
    page.feed(html_out.read_text())
    assert page.external == []  # self-contained
    assert "<style>" in html_out.read_text() and "http" not in html_out.read_text()
    assert len(page.heads) == 3
    assert all(ADAPTER in h and "ray " in h for h in page.heads), page.heads
    # (row, column): the known failure, the new failure, the unexpected pass, not run
    cls, title, txt = page.cells[(LISTED_FAILING, 0)]
    assert "v-fail" in cls and "known" in cls and txt == "FAIL"
    entry = verdicts(fork_run[2])[LISTED_FAILING]
    assert all(o in title for o in entry["oracles"]) and "known failure:" in title
    cls, title, txt = page.cells[(OTHER_FAILING, 1)]
    assert "v-fail" in cls and "known" not in cls and txt == "FAIL"
    cls, _, txt = page.cells[(PASSING, 2)]
    assert "v-pass" in cls and "unexpected" in cls
    cls, title, txt = page.cells[(OTHER_FAILING, 0)]
    assert "v-none" in cls and title == "not run in this report"
    assert page.cells[(PASSING, 0)][0] == "v v-pass"
    # rows grouped by family, in catalog order (double_close before construction_failure)
    page_text = html_out.read_text()
    assert page_text.index("double_close (") < page_text.index(f">{LISTED_FAILING[13:]}<") \
        < page_text.index(f">{OTHER_FAILING[13:]}<") < page_text.index("construction_failure (")
    md = md_out.read_text()
    assert f"| `{LISTED_FAILING}` | ❌ FAIL" in md and "*(known)*" in md
    assert f"| `{PASSING}` | ✅ pass | – | ✅ pass *(unexpected)* |" in md, md
    assert "| **double_close** | **0/1** | **0/1** | – |" in md, md


# -- the example's files -----------------------------------------------------------

def test_known_failures_file_lists_quick_scenarios():
    listed = known_failures.load_expected(KNOWN)
    assert {e.cell() for e in listed.values()} == {"fail [teardown_never_raises]"}
    quick = {s.id for s in catalog.scenarios(("local", "multinode"), "quick")}
    assert listed and set(listed) <= quick, sorted(set(listed) - quick)
    assert LISTED_FAILING in listed and OTHER_FAILING in listed and PASSING not in listed


def test_fork_adapter_is_a_plain_adapter():
    sys.path.insert(0, FORK)
    try:
        from conformance.adapter import Adapter
        from conformance.adapters.reference import ReferenceAdapter
        import myfork_adapter
    finally:
        sys.path.remove(FORK)
    cls = myfork_adapter.MyForkAdapter
    assert issubclass(cls, Adapter) and not issubclass(cls, ReferenceAdapter)
    for method in ("make_buffer", "make_collector", "make_evaluator", "connect_evaluator",
                   "teardown", "actors"):
        assert method in vars(cls), method
    assert cls.features and cls.closed_errors


@pytest.mark.skipif(os.environ.get("RLC_CI_FULL") != "1",
                    reason="the whole quick profile (~15 min): set RLC_CI_FULL=1")
def test_known_failures_file_is_exactly_what_the_bug_fails(tmp_path):
    report = tmp_path / "quick.json"
    env = {**os.environ, "RLC_RUN_ID": f"rlc-ci{uuid.uuid4().hex[:8]}",
           "PYTHONPATH": FORK}
    for var in ("RLC_MARKER", "RLC_RUN_MARKER", "PYTEST_XDIST_WORKER",
                "PYTEST_XDIST_WORKER_COUNT", "PYTEST_CURRENT_TEST"):
        env.pop(var, None)
    subprocess.run([sys.executable, "-m", "pytest", "conformance", "-p", "no:cacheprovider",
                    "-q", "-n", "2", "--impl", ADAPTER, "--profile", "quick",
                    "--conformance-report", str(report)], cwd=REPO, env=env, timeout=3600)
    failing = {i for i, s in verdicts(report).items() if s["verdict"] not in ("pass", "skip")}
    assert failing == set(known_failures.load(KNOWN))
    gate, text = cli("gate", report, "--known-failures", KNOWN)
    assert gate == 0, text  # the whole claim, its two known failures as listed
