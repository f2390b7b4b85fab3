"""conformance.ops.threads: which threads the driver records as the
implementation's (whatever module runs them, under a key never reused, the
harness's and Ray's own left out by what they are), and which one is
blocked in a call into Ray."""
import os
import subprocess
import sys
import textwrap
import threading
import time
import types
from concurrent.futures import ThreadPoolExecutor

import pytest

from conformance.ops.threads import inside_ray, new_threads, ray_driver_thread, threads_now
from fixtures.harness_threads import start_harness_thread
from fixtures.rayenv import REPO_ROOT
from fixtures.wait import wait_for_condition


def _names(threads):
    return sorted(t["name"] for t in threads)


def test_an_executor_thread_and_a_thread_named_like_the_harness_are_recorded():
    baseline = threads_now()
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="impl-pool")
    pool.submit(stop.wait, 30)
    lookalike = threading.Thread(target=stop.wait, args=(30,), name="rlc-not-the-harness",
                                 daemon=True)
    lookalike.start()
    harness = start_harness_thread(stop.wait, "worker-of-the-harness", args=(30,))
    try:
        found = new_threads(baseline)
        assert _names(found) == ["impl-pool_0", "rlc-not-the-harness"]
        assert {t["module"] for t in found} == {"concurrent.futures.thread", "threading"}
    finally:
        stop.set()
        pool.shutdown()
        lookalike.join()
        harness.join()
    assert new_threads(baseline) == []


def test_a_thread_keeps_its_key_and_a_later_thread_never_gets_it():
    baseline = threads_now()
    keys = []
    for _ in range(5):
        go = threading.Event()
        t = threading.Thread(target=go.wait, args=(30,), daemon=True)
        t.start()
        seen = new_threads(baseline)
        assert [s["key"] for s in new_threads(baseline)] == [s["key"] for s in seen]
        keys += [s["key"] for s in seen]
        go.set()
        t.join()
    # CPython may hand a finished thread's ident to the next one; keys never repeat
    assert len(keys) == 5 and len(set(keys)) == 5


def test_only_rays_own_driver_threads_are_rays():
    import ray._private.worker as worker
    from ray._private.gc_collect_manager import PythonGCThread

    assert ray_driver_thread(threading.Thread(target=worker.listen_error_messages))
    assert ray_driver_thread(threading.Thread(target=worker.Worker().print_logs))
    assert ray_driver_thread(PythonGCThread.__new__(PythonGCThread))
    # code of the implementation that happens to live in a module named ray...
    fake = types.FunctionType(compile("def f(): pass", "ray_like.py", "exec").co_consts[0], {})
    fake.__module__ = "ray.rllib.env.env_runner"
    assert not ray_driver_thread(threading.Thread(target=fake))
    # ...or that Ray's own thread pool runs
    assert not ray_driver_thread(threading.Thread(target=time.sleep, name="ray_print_logs"))


RAY_DRIVER = textwrap.dedent("""
    import json, threading
    from concurrent.futures import ThreadPoolExecutor
    from conformance.ops.threads import new_threads, threads_now
    baseline = threads_now()
    import ray
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=True)

    @ray.remote(num_cpus=0)
    class A:
        def f(self):
            return 1

    a = A.remote()
    ray.get(a.f.remote())
    after_init = new_threads(baseline)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="impl-pool")
    pool.submit(lambda: ray.get(a.f.remote())).result()
    with_pool = new_threads(baseline)
    pool.shutdown()
    ray.kill(a)
    ray.shutdown()
    print(json.dumps({"after_init": after_init, "with_pool": with_pool,
                      "after_shutdown": new_threads(baseline)}))
""")


def test_rays_driver_threads_are_never_the_implementations_and_its_pool_is():
    """A real driver: ray.init starts Ray's own threads (none recorded); a
    ThreadPoolExecutor calling Ray is recorded; ray.shutdown leaves nothing."""
    import json
    import tempfile

    # short: Ray's unix socket paths live below it
    with tempfile.TemporaryDirectory(prefix="rlc-thr-", dir="/tmp") as tmp:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "RAY_TMPDIR": tmp}
        out = subprocess.run([sys.executable, "-c", RAY_DRIVER], env=env, capture_output=True,
                             text=True, timeout=120, cwd=tmp)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["after_init"] == []
    assert _names(got["with_pool"]) == ["impl-pool_0"]
    assert got["after_shutdown"] == []


# -- blocked in a call into Ray -------------------------------------------------------

FAKE_WORKER = """
import time

def get_objects(seconds):  # ray.get's wait in ray/_private/worker.py
    time.sleep(seconds)

def submit_task(seconds):  # code of the ray package that does not wait for Ray
    time.sleep(seconds)
"""


@pytest.fixture
def fake_ray(tmp_path, monkeypatch):
    """A package named ray whose ``_private/worker.py`` has a blocking
    ``get_objects`` and a non-blocking ``submit_task`` (each sleeps in C, so
    that its frame is the thread's innermost)."""
    package = tmp_path / "ray"
    (package / "_private").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "_private" / "__init__.py").write_text("")
    (package / "_private" / "worker.py").write_text(FAKE_WORKER)
    module = types.ModuleType("ray")
    module.__file__ = str(package / "__init__.py")
    worker = types.ModuleType("ray_fake_worker")
    exec(compile(FAKE_WORKER, str(package / "_private" / "worker.py"), "exec"), worker.__dict__)
    monkeypatch.setitem(sys.modules, "ray", module)
    return worker


def _started_in(function, name):
    """A thread running ``function(3)``, returned once that is its innermost frame."""
    thread = threading.Thread(target=function, args=(3,), name=name, daemon=True)
    thread.start()
    wait_for_condition(lambda: getattr(sys._current_frames().get(thread.ident), "f_code",
                                       None) is function.__code__, 10)
    return thread


def test_in_ray_call_counts_a_thread_blocked_in_ray_get_not_one_submitting(fake_ray):
    submitting = _started_in(fake_ray.submit_task, "submitter")
    try:
        assert inside_ray() == []
        getting = _started_in(fake_ray.get_objects, "getter")
        found = inside_ray()
        assert [t["name"] for t in found] == ["getter"]
        assert found[0]["in"].startswith("_private/worker.py:")
        assert found[0]["in"].endswith(" get_objects")
    finally:
        submitting.join()
