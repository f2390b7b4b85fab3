"""bisect and the release matrix without building anything: the search, the
axis, version ranges, the releases file and the environments' contents."""
import pytest

from conformance.releases import bisection, releases
from conformance.releases.venvs import EnvSpec


def counting(keys):
    calls = []

    def key(i):
        calls.append(i)
        return keys[i]
    return key, calls


@pytest.mark.parametrize("keys,expected", [
    (["crash", "crash", "crash", "pass", "pass", "pass", "pass"], (2, 3)),
    (["crash", "pass"], (0, 1)),
    (["crash", "crash", "crash", "crash", "crash", "crash", "pass"], (5, 6)),
    (["fail", "pass", "pass", "pass", "pass"], (0, 1)),
])
def test_first_change_finds_the_adjacent_pair_in_few_runs(keys, expected):
    key, calls = counting(keys)
    assert bisection.first_change(len(keys), key) == expected
    # both ends, then one halving per step: at most 2 + ceil(log2(n - 1)) runs
    assert len(set(calls)) <= 2 + (len(keys) - 2).bit_length()


def test_first_change_is_none_when_both_ends_agree():
    key, calls = counting(["pass", "fail", "pass"])
    assert bisection.first_change(3, key) is None
    assert set(calls) == {0, 2}  # the middle is not run: --all does


def test_axis_pairs_versions_with_ray_versions():
    pts = bisection.axis("torchrl", ["0.10.1", "0.14.1"], ["2.50.1", "2.60.0"])
    assert pts == [EnvSpec("torchrl", "0.10.1", "2.50.1"), EnvSpec("torchrl", "0.14.1", "2.60.0")]
    assert bisection.axis("torchrl", ["0.10.1", "0.14.1"], ["2.60.0"])[0].ray == "2.60.0"
    assert [p.ray for p in bisection.axis("torchrl", ["0.10.1"], ["2.50.1", "2.51.2"])] == \
        ["2.50.1", "2.51.2"]
    with pytest.raises(ValueError, match="one per version"):
        bisection.axis("torchrl", ["a", "b", "c"], ["1", "2"])
    assert bisection.axis("ray[rllib]", [], ["2.59.0", "2.60.0"])[1] == \
        EnvSpec("ray[rllib]", "2.60.0", "2.60.0")


def test_a_range_takes_the_index_releases_within_it(monkeypatch):
    monkeypatch.setattr(bisection, "index_versions",
                        lambda package: ["0.9.2", "0.10.1", "0.11.1", "0.14.1", "0.15.0"])
    assert bisection.versions_of(">=0.10,<0.15", "torchrl") == ["0.10.1", "0.11.1", "0.14.1"]
    assert bisection.versions_of("0.10.1, 0.14.1", "torchrl") == ["0.10.1", "0.14.1"]


def test_an_environment_pins_the_package_and_ray():
    spec = EnvSpec("torchrl", "0.12.0", "2.55.1")
    assert spec.name == "torchrl-0.12.0_ray-2.55.1"
    assert spec.requirements()[:2] == ["torchrl==0.12.0", "ray==2.55.1"]
    rllib = EnvSpec("ray[rllib]", "2.60.0", "2.60.0")
    assert rllib.name == "ray-rllib-2.60.0_ray-2.60.0"
    assert rllib.requirements()[0] == "ray[rllib]==2.60.0"
    assert not any(r.startswith("ray==") for r in rllib.requirements())
    with pytest.raises(ValueError, match="its version is Ray's"):
        EnvSpec("ray[rllib]", "2.59.0", "2.60.0")


def test_the_releases_file_names_its_columns(tmp_path):
    good = tmp_path / "r.txt"
    good.write_text("# why\ntorchrl 0.10.1 2.50.1  # the seed\n\ntorchrl 0.14.1 2.60.0\n")
    assert releases.load(str(good)) == [("torchrl", EnvSpec("torchrl", "0.10.1", "2.50.1")),
                                        ("torchrl", EnvSpec("torchrl", "0.14.1", "2.60.0"))]
    bad = tmp_path / "bad.txt"
    bad.write_text("torchrl 0.10.1\n")
    with pytest.raises(ValueError, match="bad.txt:1: expected 'IMPL VERSION RAY'"):
        releases.load(str(bad))
    unpackaged = tmp_path / "ref.txt"
    unpackaged.write_text("reference 1 2.60.0\n")
    with pytest.raises(ValueError, match="names no package"):
        releases.load(str(unpackaged))


def test_the_venv_command_prints_a_cached_release_python_and_refuses_no_package(
        tmp_path, monkeypatch, capsys):
    from conformance.__main__ import main
    from conformance.releases import venvs

    monkeypatch.setenv("RLC_VENV_CACHE", str(tmp_path))
    cached = tmp_path / "torchrl-0.14.1_ray-2.60.0"
    (cached / "bin").mkdir(parents=True)
    (cached / "rlc-env.json").write_text('{"bytecode": true}')  # built: nothing to install
    assert main(["venv", "torchrl", "0.14.1", "2.60.0"]) == 0
    assert capsys.readouterr().out == f"{cached / 'bin' / 'python'}\n"
    assert venvs.spec_for("rllib", "2.60.0", "2.60.0") == EnvSpec("ray[rllib]", "2.60.0", "2.60.0")
    assert main(["venv", "reference", "1", "2.60.0"]) == 2
    assert "venv: adapter 'reference' names no package" in capsys.readouterr().err


def test_the_committed_releases_file_loads():
    from conformance.releases.venvs import REPO_ROOT

    cols = releases.load(str(REPO_ROOT / "ci" / "results" / "releases" / "columns.txt"))
    assert [(impl, s.package, s.version, s.ray) for impl, s in cols] == [
        ("torchrl", "torchrl", "0.10.1", "2.50.1"), ("torchrl", "torchrl", "0.11.1", "2.53.0"),
        ("torchrl", "torchrl", "0.12.0", "2.55.1"), ("torchrl", "torchrl", "0.13.3", "2.56.0"),
        ("torchrl", "torchrl", "0.14.1", "2.60.0"), ("rllib", "ray[rllib]", "2.60.0", "2.60.0")]


def test_a_column_in_shards_resumes_where_it_stopped_and_merges(tmp_path, monkeypatch):
    """--shards N: each shard's report in OUT/shards/, a shard reported
    before is not run again, then one merge into the column's report."""
    import sys
    import types

    spec = EnvSpec("torchrl", "0.12.0", "2.55.1")
    runs, merges = [], []
    monkeypatch.setattr(releases, "ensure", lambda s: sys.executable)

    def fake_pytest(python, impl, report, log, args):
        runs.append(args[args.index("--shard") + 1])
        report.write_text("{}")
        return 1.0
    monkeypatch.setattr(releases, "_run_pytest", fake_pytest)
    monkeypatch.setattr(releases.subprocess, "run", lambda cmd, **kw: merges.append(cmd) or
                        types.SimpleNamespace(stdout="merged", stderr=""))
    (tmp_path / "shards").mkdir()
    (tmp_path / "shards" / f"{spec.name}.shard-2-of-3.json").write_text("{}")  # done before
    out = releases.run_column("torchrl", spec, tmp_path, ["--profile", "quick"], shards=3)
    assert out == tmp_path / f"{spec.name}.json"
    assert runs == ["1/3", "3/3"]
    (merge,) = merges
    assert merge[3:5] == ["merge", str(out)] and [p.rsplit("/", 1)[1] for p in merge[5:]] == [
        f"{spec.name}.shard-{i}-of-3.json" for i in (1, 2, 3)]
    runs.clear(), merges.clear()
    releases.run_column("torchrl", spec, tmp_path, [], shards=3, only_shard=3)
    assert runs == [] and merges == []  # one CI job's shard: run before, nothing to merge
