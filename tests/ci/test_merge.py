"""Shard reports merged into one (conformance/reports/merge.py): ``summary``, ``gate``
and ``matrix`` read the merge as the single run it stands for; a merge of
shards that are not one complete run is refused (exit 2) with the reason.

Synthetic reports split with the real rule (conformance/reports/shard.py), then
whole shard runs of the suite (pytest with xdist, the report, ``merge``,
``gate``) on scenarios that skip without starting Ray."""
import copy
import json
import os
import re
import subprocess
import sys
import uuid

import pytest

from conformance import catalog
from conformance.reports import gate, matrix, merge, report, ruling, shard, summary
from conformance.reports.claims import Claim
from conformance.reports.known_failures import Expected

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
VERSIONS = {"python": "3.11.7", "ray": "2.60.0", "torch": "2.13.0"}
GENERATED = "2026-11-24T10:00:00Z"
IDS = [s.id for s in catalog.scenarios(("local", "multinode"), "quick")]
# a run with every kind of outcome the gate tells apart
VERDICTS = {IDS[3]: "fail", IDS[10]: "crash", IDS[20]: "hang", IDS[30]: "error",
            IDS[40]: "setup-error", IDS[50]: "skip", IDS[60]: "fail", IDS[70]: "pass"}
KNOWN = {sid: Expected(sid, verdict, frozenset(oracles), why) for sid, verdict, oracles, why in (
    (IDS[60], "fail", ["teardown_never_raises"], "a known bug"),
    (IDS[70], "fail", ["teardown_never_raises"], "fixed since"),
    (IDS[30], "crash", [], "never hides an error"))}
CLAIM = Claim.full().as_dict()


def entry(sid: str) -> dict:
    family, fixture, owner, _ = sid.split("/", 3)
    verdict = VERDICTS.get(sid, "pass")
    return {"id": sid, "family": family, "fixture": fixture, "owner": owner,
            "components": ["buffer", "collector"], "verdict": verdict,
            "oracles": ["teardown_never_raises"] if verdict == "fail" else [],
            "unknown": ["harness"] if verdict == "error" else [],
            "unsupported": ["check_alive"] if sid == IDS[5] else [],
            "not_checked": ["liveness_reports_death"] if sid == IDS[5] else [],
            "evidence": {"reason": "lacks x"} if verdict == "skip" else
            {"violations": {"teardown_never_raises": ["close() raised"]}} if verdict == "fail"
            else {}, "repro": f"python -m conformance repro {sid}",
            "duration": 2.0 + (len(sid) % 7)}


def entries(ids) -> list[dict]:
    """The run's entries, marked against its known failures as the run marks them."""
    out = [entry(i) for i in ids]
    ruling.mark(out, KNOWN)
    return out


def single_run() -> dict:
    return report.document("reference", dict(VERSIONS), entries(IDS), GENERATED, claim=CLAIM)


def shard_runs(count: int, ids=IDS, durations=None) -> list[dict]:
    """The run's shard reports, split as --shard I/N splits it."""
    run = {"profile": "quick", "fixtures": ["local", "multinode"],
           "known_failures": shard.digest(e.line() for e in KNOWN.values()),
           "durations": None, "durations_from": None}
    out = []
    for k, part in enumerate(shard.plan(ids, count, durations)):
        doc = report.document("reference", dict(VERSIONS), entries(part.ids), GENERATED,
                              claim=CLAIM)
        doc["shard"] = {**shard.record(shard.Shard(k + 1, count), ids, part, **run),
                        "elapsed": 100.0 + k}
        out.append(doc)
    return out


def named(docs):
    return [(f"shard-{d['shard']['index']}.json", d) for d in docs]


def gate_text(doc):
    decided = ruling.rule(doc)
    return (0 if decided.green else 1), "\n".join(gate.lines(doc, decided))


def without_clock(html: str) -> str:
    return re.sub(r"Generated [^<]*? UTC", "Generated -", html)


@pytest.mark.parametrize("count", [1, 2, 4])
def test_the_merge_reads_as_the_single_run(count):
    single = single_run()
    merged = merge.merge(named(shard_runs(count)))
    assert merged["scenarios"] == single["scenarios"]
    for key in ("schema", "impl", "versions", "generated", "summary", "coverage"):
        assert merged[key] == single[key], key
    assert "shard" not in merged
    assert [p["index"] for p in merged["shards"]["parts"]] == list(range(1, count + 1))
    assert sum(p["scenarios"] for p in merged["shards"]["parts"]) == len(IDS)
    # what the readers make of it
    assert ruling.rule(merged) == ruling.rule(single)
    assert gate_text(merged) == gate_text(single)
    assert gate_text(merged)[0] == 1  # the run has new failures: red either way
    assert summary.render(merged) == summary.render(single)
    assert matrix.render_markdown([merged]) == matrix.render_markdown([single])
    assert without_clock(matrix.render_html([merged], ["m.json"])) == \
        without_clock(matrix.render_html([single], ["m.json"]))


def test_the_merge_of_shards_split_by_durations():
    durations = {sid: float(len(sid)) for sid in IDS[::3]}
    merged = merge.merge(named(shard_runs(3, durations=durations)))
    assert merged["scenarios"] == single_run()["scenarios"]


def test_the_cli_writes_the_merge_and_the_readers_agree(tmp_path):
    paths = []
    for doc in shard_runs(2):
        path = tmp_path / f"shard-{doc['shard']['index']}.json"
        report.write(doc, str(path))
        paths.append(path)
    single = tmp_path / "single.json"
    report.write(single_run(), str(single))
    out = tmp_path / "merged.json"
    code, text = cli("merge", out, *reversed(paths))
    assert code == 0, text
    assert "shard 1/2: " in text and "shard 2/2: " in text and "wall time 101 s" in text, text
    for args in (["gate"], ["gate", "--features", "buffer,sync"], ["summary"]):
        assert cli(*args[:1], out, *args[1:]) == cli(*args[:1], single, *args[1:])
    assert cli("gate", out)[0] == 1


def test_a_shard_alone_says_it_is_one():
    one = shard_runs(2)[0]
    note = report.shard_note(one)
    assert note.startswith(f"shard 1/2: {len(one['scenarios'])} of the run's {len(IDS)}")
    assert note in gate_text(one)[1] and note in summary.render(one)
    assert report.shard_note(single_run()) is None


def refused(docs) -> str:
    with pytest.raises(merge.MergeError) as info:
        merge.merge(docs)
    return str(info.value)


def test_refuses_shards_of_another_run():
    a, b = shard_runs(2)
    other_impl = copy.deepcopy(b)
    other_impl["impl"] = "torchrl"
    assert "is of 'torchrl'" in refused(named([a, other_impl]))
    other_ray = copy.deepcopy(b)
    other_ray["versions"]["ray"] = "2.50.1"
    assert "other versions: ray 2.50.1 against 2.60.0" in refused(named([a, other_ray]))
    for key, value in (("profile", "full"), ("fixtures", ["local"]), ("count", 3),
                       ("known_failures", None), ("durations", "sha256:0")):
        changed = copy.deepcopy(b)
        changed["shard"][key] = value
        assert f"shards of different runs: {key} " in refused(named([a, changed])), key
    narrower = shard_runs(2, ids=IDS[1:])[1]  # e.g. another -k
    assert f"selected {len(IDS) - 1} against {len(IDS)}" in refused(named([a, narrower]))


def test_refuses_a_missing_or_doubled_shard():
    a, b, c = shard_runs(3)
    assert "shard 2/3 missing" in refused(named([a, c]))
    assert "shard 1/3, 3/3 missing" in refused(named([b]))
    assert "shard 2/3 given twice: one.json and two.json" in refused(
        [("one.json", b), ("two.json", b), ("a.json", a)])


def test_refuses_a_scenario_in_two_shards_and_an_incomplete_run():
    a, b = shard_runs(2)
    twice = copy.deepcopy(b)
    twice["scenarios"].append(a["scenarios"][0])
    assert f"{a['scenarios'][0]['id']} is in two shards" in refused(named([a, twice]))
    short = copy.deepcopy(b)
    del short["scenarios"][-3:]
    message = refused(named([a, short]))
    assert f"incomplete: {len(IDS) - 3} scenarios" in message
    assert f"shard-2.json (shard 2/2) has {len(b['scenarios']) - 3} of its " \
           f"{len(b['scenarios'])}" in message


def test_refuses_what_is_not_a_shard():
    a, b = shard_runs(2)
    assert "not a shard's report" in refused([("single.json", single_run()), ("b", b)])
    blind = copy.deepcopy(b)
    blind["shard"]["selection"] = None  # its workers never collected
    assert "recorded no selection" in refused(named([a, blind]))
    assert "no shard report given" in refused([])


def cli(*args):
    proc = subprocess.run([sys.executable, "-m", "conformance", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def test_the_cli_refuses_with_exit_2(tmp_path):
    a, _ = shard_runs(2)
    path = tmp_path / "a.json"
    report.write(a, str(path))
    code, text = cli("merge", tmp_path / "out.json", path)
    assert code == 2 and "merge: refused: shard 2/2 missing" in text, text
    assert not (tmp_path / "out.json").exists()
    code, text = cli("merge", path, path)
    assert code == 2 and "is one of the shard reports" in text, text
    code, text = cli("merge", tmp_path / "out.json", tmp_path / "nope.json")
    assert code == 2 and "merge: no usable report" in text, text


# -- whole shard runs of the suite: pytest, xdist, the report, merge, gate -------------

ADAPTER = "featureless_adapter:FeaturelessAdapter"


def skipping_scenarios() -> list[str]:
    """Local scenarios of the full profile the featureless adapter skips (each
    needs a feature): more than 20, and no Ray started for them."""
    return [s.id for s in catalog.scenarios(("local",), "full", components=("buffer", "collector"))
            if s.requires][:40]


def run_suite(tmp_path, listed, *args):
    """`pytest conformance` with the featureless adapter; returns the report."""
    out = tmp_path / f"report-{uuid.uuid4().hex[:6]}.json"
    env = {**os.environ, "RLC_RUN_ID": f"rlc-sh{uuid.uuid4().hex[:8]}",
           "PYTHONPATH": os.pathsep.join([HERE, REPO])}
    for var in ("RLC_MARKER", "RLC_RUN_MARKER", "PYTEST_XDIST_WORKER",
                "PYTEST_XDIST_WORKER_COUNT", "PYTEST_CURRENT_TEST", "RLC_KNOWN_FAILURES",
                "RLC_SCENARIO", "RLC_IMPL", "RLC_REPORT", "RLC_PROFILE", "RLC_RAY_FIXTURE",
                "RLC_SHARD", "RLC_SHARD_DURATIONS"):
        env.pop(var, None)
    cmd = [sys.executable, "-m", "pytest", "conformance", "-p", "no:cacheprovider", "-q",
           "--impl", ADAPTER, "--ray-fixture", "local", "--profile", "full",
           "--scenarios-from", str(listed), "--conformance-report", str(out), *args]
    proc = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    assert proc.returncode == 0 and out.exists(), proc.stdout[-3000:]
    return out, proc.stdout


def test_shard_runs_of_the_suite_merge_into_the_single_run(tmp_path):
    ids = skipping_scenarios()
    assert len(ids) > 20
    listed = tmp_path / "listed.txt"
    listed.write_text("".join(f"{i}  # skips without Ray\n" for i in ids))
    single, _ = run_suite(tmp_path, listed, "-n", "2")
    durations = tmp_path / "durations.json"
    timed = json.loads(single.read_text())
    for k, s in enumerate(timed["scenarios"]):
        s["duration"] = float(k % 5)  # a skip takes no time: give the split something
    durations.write_text(json.dumps(timed))
    parts, outputs = [], []
    for index, workers in ((1, "2"), (2, "0"), (3, "2")):  # xdist and a lone process
        path, out = run_suite(tmp_path, listed, "-n", workers, "--shard", f"{index}/3",
                              "--shard-durations", str(durations))
        parts.append(path)
        outputs.append(out)
    docs = [json.loads(p.read_text()) for p in parts]
    plan = shard.plan(ids, 3, shard.durations(timed))
    for doc, part, out in zip(docs, plan, outputs):
        assert sorted(s["id"] for s in doc["scenarios"]) == list(part.ids)
        info = doc["shard"]
        assert info["selected"] == len(ids) and info["selection"] == shard.digest(ids)
        assert info["assigned"] == len(part.ids) and info["estimate"] == part.estimate
        assert info["profile"] == "full" and info["fixtures"] == ["local"]
        assert info["durations_from"] == str(durations) and info["elapsed"] > 0
        assert f"shard {info['index']}/3: {len(part.ids)} of the run's {len(ids)}" in out
    merged = tmp_path / "merged.json"
    code, text = cli("merge", merged, *parts)
    assert code == 0, text
    want, got = json.loads(single.read_text()), json.loads(merged.read_text())
    assert [(s["id"], s["verdict"]) for s in got["scenarios"]] == \
        [(s["id"], s["verdict"]) for s in want["scenarios"]]
    assert got["summary"] == want["summary"] and got["coverage"] == want["coverage"]
    claim = ("--components", "buffer,collector", "--features", "buffer", "--fixtures", "local")
    assert cli("gate", merged, *claim) == cli("gate", single, *claim)
    assert cli("gate", merged)[0] == cli("gate", single)[0] == 1  # every one skipped
