"""A stopped ``mutate sample`` restores its mutant and leaves no process, also
when it came in with SIGINT ignored (a background job of a script, as
``.ci/run``'s sample is when .ci/run itself runs with ``&``) and when the stop
comes twice (.ci/run sends SIGINT to the sample's process group, and
ci/mutation-sample.sh passes it on to its shards)."""
import filecmp
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from fixtures import procs
from fixtures.wait import wait_for_condition

REPO = Path(__file__).resolve().parents[2]
# how a script's background job starts: SIGINT ignored, passed down through exec
WITH_SIGINT_IGNORED = [sys.executable, "-c", "import os, signal, sys; "
                       "signal.signal(signal.SIGINT, signal.SIG_IGN); "
                       "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"]


def _copy_of_checkout(dest: Path) -> None:
    """What ci/mutation-sample.sh gives each shard: the files git tracks or would track."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, capture_output=True, check=True).stdout
    tar = subprocess.run(["tar", "--null", "--ignore-failed-read", "-T", "-", "-c"], cwd=REPO,
                         input=files, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)


def _impl_as_committed(tree: Path) -> list:
    """The impl/ files of ``tree`` that differ from this checkout's."""
    names = [p.name for p in (REPO / "impl").glob("*.py")]
    _, mismatch, errors = filecmp.cmpfiles(REPO / "impl", tree / "impl", names, shallow=False)
    return mismatch + errors


def test_sigint_twice_stops_the_sample_mid_mutant_and_leaves_nothing(tmp_path, cosmic_ray_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    _copy_of_checkout(tree)
    marker = f"rlcmut-{uuid.uuid4().hex[:6]}"
    env = dict(os.environ, RLC_RUN_MARKER=marker, RLC_MUTATION_COPY="1")
    run = subprocess.Popen([*WITH_SIGINT_IGNORED, "-m", "conformance", "mutate", "sample",
                            "--count", "2", "--seed", "27"],
                           cwd=tree, env=env, start_new_session=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    procs.KEEP_STATUS.add(run.pid)
    try:
        def mutant_scenario_running():
            """A mutant on disk, its scenario's driver forked from the session's
            zygote (it keeps the zygote's marker: two processes carry it)."""
            if run.poll() is not None:
                return "ended"
            zygotes = [p for p in procs.find_marked(marker)
                       if p.environ().get("RLC_MARKER", "").endswith(":zygote")]
            return len(zygotes) >= 2 and bool(_impl_as_committed(tree)) and "running"

        state = wait_for_condition(mutant_scenario_running, timeout=120, interval=0.2,
                                   message="a mutant's scenario driver")
        assert state == "running", f"the sample ended first: {run.communicate()[0].decode()[-3000:]}"
        os.killpg(run.pid, signal.SIGINT)  # .ci/run's stop of the sample's group
        os.kill(run.pid, signal.SIGINT)  # ci/mutation-sample.sh's, passed on
        out = run.communicate(timeout=120)[0].decode(errors="replace")
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        procs.KEEP_STATUS.discard(run.pid)
        left = [procs.describe(p) for p in procs.find_marked(marker)]
        procs.kill_marked(marker, 0.5)  # never left behind, whatever failed
    assert run.returncode != 0, out[-3000:]
    assert "KeyboardInterrupt: signal 2" in out, out[-3000:]  # _stop_once's, not Python's own
    assert _impl_as_committed(tree) == [], out[-3000:]  # the mutant restored
    assert left == [], out[-3000:]
