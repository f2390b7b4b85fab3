"""The runtime watch (``conformance.ops.runtime_watch``) on a real Ray 2.60, in a
process of its own: it records every start and end of a runtime as it
happens, and Ray's auto-init on a stale handle goes through the public
``ray.init`` it wraps (the measurement behind the watch's design)."""
import json
import shutil
import subprocess
import sys
import tempfile
import uuid

from fixtures import procs
from fixtures.rayenv import REPO_ROOT, full_env, ray_env

DRIVER = """
import json, sys, time
import ray
from conformance.ops.runtime_watch import RuntimeWatch
from fixtures.wait import poll

records, t0 = [], time.monotonic()
watch = RuntimeWatch(records.append, lambda: time.monotonic() - t0)
status = watch.install()
ray.init(address="local", num_cpus=1, include_dashboard=False)


@ray.remote(num_cpus=0)
class Actor:
    def ping(self):
        return 1


actor = Actor.remote()
ray.get(actor.ping.remote())
ray.shutdown()
try:
    ray.kill(actor)  # a stale handle: Ray starts a new runtime on its own first
except Exception as exc:  # Ray 2.60: ActorHandleNotFoundError
    print(f"ray.kill raised {type(exc).__name__}", file=sys.stderr)
ray.shutdown()
gone = lambda: sum(r.get("change") == "gone" and r["process"] == "gcs_server" for r in records)
poll(lambda: gone(), lambda n: n >= 2, 30)  # the poller's view of both runtimes' end
watch.stop()
print(json.dumps({"status": status, "records": records}))
"""


IDENTITY_DRIVER = """
import json
import ray
import impl.runtime


def broken(*args, **kwargs):
    raise RuntimeError("the reference's reading, broken as a mutant may break it")


impl.runtime.runtime_identity = broken
from conformance.ops.runtime_watch import ray_identity

before = ray_identity()
ray.init(address="local", num_cpus=1, include_dashboard=False)
context = ray.get_runtime_context()
want = f"{context.gcs_address}/{context.get_session_name()}/{context.get_job_id()}"
during = ray_identity()
ray.shutdown()
print(json.dumps({"before": before, "during": during, "want": want, "after": ray_identity()}))
"""


def _driven(code: str) -> dict:
    """Run ``code`` as a driver of its own (a private Ray temp dir, every
    process it starts stopped after); the JSON its last line prints."""
    marker = f"rlc-watch-test-{uuid.uuid4().hex[:8]}"
    tmpdir = tempfile.mkdtemp(prefix="rlc-w-")  # short: unix socket paths are length-limited
    env = full_env({**ray_env(tmpdir, marker), "RAY_ADDRESS": "local"})
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(REPO_ROOT),
                             capture_output=True, text=True, timeout=240)
    finally:
        procs.kill_marked(marker, 0.5)
        shutil.rmtree(tmpdir, ignore_errors=True)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_harness_reads_the_runtime_without_the_reference_s_code():
    """The probes' reading of the runtime (``fixtures.identity``) does not go
    through ``impl.runtime``: a mutant of the reference's reading cannot
    make the harness fail and pass for a verdict (runtime.py:75:15 did,
    2026-11-29)."""
    found = _driven(IDENTITY_DRIVER)
    assert found["before"] is None and found["after"] is None
    assert found["during"] == found["want"], found


def test_ray_s_auto_init_goes_through_ray_init_and_each_runtime_s_processes_are_seen():
    found = _driven(DRIVER)
    assert found["status"]["calls"] == ["ray.init", "ray.shutdown"]
    calls = [(r["call"], r["before"] is None, r["after"] is None)
             for r in found["records"] if r.get("call")]
    # the user's init and shutdown, then the stale handle's auto-init (through
    # ray.init, from the same thread) and the shutdown after it
    assert calls == [("ray.init", True, False), ("ray.shutdown", False, True),
                     ("ray.init", True, False), ("ray.shutdown", False, True)], calls
    inits = [r for r in found["records"] if r.get("call") == "ray.init"]
    assert inits[0]["after"] != inits[1]["after"] and inits[1]["thread"] == "MainThread"
    sessions = [r["after"].split("/")[1] for r in inits]
    gcs = [(r["change"], r["session"]) for r in found["records"]
           if r.get("process") == "gcs_server"]
    assert gcs == [("appeared", sessions[0]), ("gone", sessions[0]),
                   ("appeared", sessions[1]), ("gone", sessions[1])], gcs


def test_a_call_still_running_when_the_watch_stops_is_recorded_unfinished():
    """A ray.shutdown() still under way when the watch stops (the ops ended, or
    the harness failed) leaves a record, ``unfinished``, with where it began:
    what it may have ended is then explained (``oracles._call_explains``), not
    taken for an end with no call. Its return after the stop is not recorded."""
    import threading

    from conformance.ops.runtime_watch import RuntimeWatch

    records = []
    watch = RuntimeWatch(records.append, lambda: 1.5)
    watch.where = lambda: (3, 3)
    watch.active = True  # as install() leaves it, without wrapping Ray's names
    begun, finish = threading.Event(), threading.Event()

    def slow_shutdown():
        begun.set()
        finish.wait(10)

    call = threading.Thread(target=watch._wrap("shutdown", slow_shutdown), name="user-shutdown")
    call.start()
    assert begun.wait(10)
    watch.stop()
    finish.set()
    call.join(10)
    assert [{k: r[k] for k in ("phase", "call", "i", "thread", "t0", "before", "after",
                               "unfinished")} for r in records] == [
        {"phase": "runtime", "call": "ray.shutdown", "i": 3, "thread": "user-shutdown",
         "t0": 1.5, "before": None, "after": None, "unfinished": True}]


EARLY_BINDING_DRIVER = """
import json
import ray
from conformance.ops.runtime_watch import RuntimeWatch

records = []
watch = RuntimeWatch(records.append, lambda: 0.0)
watch.install()
later = []
bound = ray.shutdown


def library_wrapper(*args, **kwargs):  # as impl.component sets it, at the library's import
    later.append("wrapper ran")
    return bound(*args, **kwargs)


ray.shutdown = library_wrapper
watch.installed["shutdown"]()  # Ray is down: Ray's own shutdown returns at once
watch.stop()
print(json.dumps({"later": later, "calls": [r.get("call") for r in records]}))
"""


def test_a_name_bound_before_the_library_skips_its_wrapper_and_is_still_watched():
    """``ray_shutdown(binding="before-import")`` calls ``RuntimeWatch.installed``:
    the name as it was before the implementation loaded, so a wrapper the
    implementation set on the ``ray`` module afterwards does not run, and the
    call is still recorded (who ended the runtime stays known)."""
    found = _driven(EARLY_BINDING_DRIVER)
    assert found == {"later": [], "calls": ["ray.shutdown"]}, found
