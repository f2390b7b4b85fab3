"""Coverage in Ray worker processes, for ``python -m conformance mutate coverage``.

This directory is put on PYTHONPATH (with a link to coverage.py) only for the
coverage run; Python imports ``sitecustomize`` at every interpreter start.
It acts only in Ray's worker processes (``default_worker.py``, started by a
raylet, so no parent of ours can start coverage in them) and only when
``RLC_COVERAGE_DIR`` is set:

- coverage of ``impl/`` starts at once and is saved every 0.5 s: an actor is
  ended by ``ray.kill`` (the core worker's ``_exit``, no ``atexit``);
- Ray runs actor methods on threads its C++ core creates, which
  ``threading.settrace`` never reaches (measured: of ReplayBufferActor's
  calls only ``__init__`` was recorded, not one line of ``extend`` or
  ``length``; with the hook, all), so each method call installs coverage's thread
  hook first (the executor of ``ray._private.function_manager``: private,
  the only place every actor call passes through in Python);
- once the worker runs for a job, ``<pid>.job`` names it, so that the
  parent gives the data to the scenario whose driver ran that job (on the
  ``multinode`` fixture workers inherit the raylet's environment, not the
  driver's).
"""
import os
import sys


def _in_ray_worker() -> bool:
    return any(a.endswith("default_worker.py") for a in getattr(sys, "orig_argv", ()))


def _start(directory: str) -> None:
    import threading

    import coverage

    pid = os.getpid()
    cov = coverage.Coverage(data_file=os.path.join(directory, ".coverage"),
                            data_suffix=f"worker.{pid}", include=[os.environ["RLC_COVERAGE_INCLUDE"]],
                            context=os.environ.get("RLC_COVERAGE_CONTEXT") or None)
    cov.start()
    job_file = os.path.join(directory, f"{pid}.job")

    def job_id():
        worker = sys.modules.get("ray._private.worker")
        try:
            job = worker.global_worker.current_job_id
            return None if job.is_nil() else job.hex()
        except Exception:  # noqa: BLE001 - not connected yet
            return None

    def save_often():
        written = None
        while True:
            threading.Event().wait(0.5)
            job = job_id()
            if job and job != written:
                with open(job_file, "w") as f:
                    f.write(job)
                written = job
            try:
                cov.save()
            except Exception:  # noqa: BLE001 - the next save tries again
                pass

    threading.Thread(target=save_often, name="rlc-coverage-save", daemon=True).start()
    from ray._private import function_manager

    make = function_manager.FunctionActorManager._make_actor_method_executor

    def traced_executor(self, method_name, method):
        executor = make(self, method_name, method)

        def actor_method_executor(*args, **kwargs):
            if sys.gettrace() is None and threading._trace_hook is not None:
                sys.settrace(threading._trace_hook)
            return executor(*args, **kwargs)

        actor_method_executor.name = executor.name
        actor_method_executor.method = executor.method
        return actor_method_executor

    function_manager.FunctionActorManager._make_actor_method_executor = traced_executor


if os.environ.get("RLC_COVERAGE_DIR") and _in_ray_worker():
    _start(os.environ["RLC_COVERAGE_DIR"])
