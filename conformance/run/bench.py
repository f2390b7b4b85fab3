"""Scenario throughput benchmark: ``python -m conformance bench``.

Prints scenario instances per minute for a profile run with ``-n 2``, the
median scenario wall time per fixture next to that fixture's floor (a bare
driver that only does the fixture's init or connect, creates one actor whose
module imports torch, in the actor's process too, kills it and shuts down)
measured twice: alone, and with as many floor drivers at a time as the run
has workers. The median comes from the profile run, and from a run of that
fixture's scenarios only: there a worker's neighbour runs the same fixture,
the load the floor under ``-n`` is measured with. Also the peak memory (PSS)
of every process of the profile run. A benchmark, not a test: it prints
figures.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import ray
import torch  # noqa: F401 - the floor actor's module imports torch


class FloorActor:
    """The floor's actor. A plain class: ``ray.remote`` is applied in the
    driver, so Ray pickles it by reference and the worker imports this module
    (and torch). Decorated at module level, it would be pickled by value and
    the worker would never import torch (measured)."""

    def ping(self) -> int:
        return os.getpid()

    def torch_imported(self) -> bool:
        return "torch" in sys.modules


def floor_driver(info_json: str) -> int:
    """The floor: init/connect, one torch-importing actor, kill, shutdown."""
    info = json.loads(info_json)
    if info["kind"] == "local":
        ray.init(**info["init"])
    else:
        ray.init(address=info["address"])
    actor = ray.remote(num_cpus=0.25)(FloorActor).remote()
    if not ray.get(actor.torch_imported.remote()):
        raise RuntimeError("the floor actor's process did not import torch")
    ray.kill(actor)
    ray.shutdown()
    return 0


def _floor_times(session, kind: str, runs: int) -> list[float]:
    from fixtures.runner import driver_request, run_driver

    times = []
    for _ in range(runs):
        fixture, info = session.prepare(kind)
        with tempfile.TemporaryDirectory(prefix="rlc-floor-") as workdir:
            req = driver_request("conformance.run.bench", "floor_driver", [json.dumps(info)],
                                 session.next_driver_marker(), workdir, fixture.driver_env())
            t0 = time.monotonic()
            out = run_driver(session.zygote, req, 120)
            times.append(time.monotonic() - t0)
        if out.exit_code != 0:
            raise RuntimeError(f"floor driver failed: {out.stderr[-2000:]}")
    return times


def measure_floor(kind: str, repeats: int, parallel: int = 1) -> list[float]:
    """Floor driver wall times: ``parallel`` sessions (a zygote and clusters
    each, like xdist workers) run ``repeats`` floors at the same time, after
    one warm-up run each."""
    from fixtures.session import SessionResources

    sessions = [SessionResources(preload=["conformance.run.bench"]) for _ in range(parallel)]
    try:
        for session in sessions:  # one at a time: cluster start-up edits os.environ
            _floor_times(session, kind, 1)
        results: list[list[float]] = [[] for _ in sessions]
        threads = [threading.Thread(target=lambda i=i: results[i].extend(
            _floor_times(sessions[i], kind, repeats))) for i in range(parallel)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if any(len(r) != repeats for r in results):
            raise RuntimeError("a floor run failed (see above)")
        return [t for r in results for t in r]
    finally:
        for session in sessions:
            session.close()


class MemorySampler(threading.Thread):
    """Samples the summed PSS of a process tree plus every process of a run."""

    # Each sample reads /proc/PID/smaps_rollup of ~30 processes: 0.06 CPU-s.
    # Sampled every second, that slowed the measured run by 1.5-4 % (measured).
    PERIOD = 2.0

    def __init__(self, root_pid: int, run_id: str, period: float = PERIOD):
        super().__init__(daemon=True)
        self.root_pid, self.run_id, self.period = root_pid, run_id, period
        self.peak = 0
        self.stop = threading.Event()

    def run(self):
        import psutil

        from fixtures import procs

        while not self.stop.wait(self.period):
            seen = {}
            try:
                root = psutil.Process(self.root_pid)
                for p in [root, *root.children(recursive=True)]:
                    seen[p.pid] = p
            except psutil.Error:
                pass
            for p in procs.find_marked(self.run_id):
                seen[p.pid] = p
            total = 0
            for p in seen.values():
                try:
                    total += p.memory_full_info().pss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)


def cpu_loop_seconds(repeats: int = 3) -> float:
    """Best time of a fixed pure-Python loop: this machine's speed drifts by
    20 % and more within minutes (measured), and every figure here with it."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        sum(i * i for i in range(5_000_000))
        best = min(best, time.perf_counter() - t0)
    return best


def busy_cpu_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot."""
    import psutil

    t = psutil.cpu_times()
    return sum(getattr(t, f, 0.0) for f in ("user", "nice", "system", "irq", "softirq", "steal"))


def run_profile(profile: str, workers: int, fixtures: str, extra: list[str]) -> dict:
    run_id = f"rlc-bench{uuid.uuid4().hex[:6]}"
    with tempfile.TemporaryDirectory(prefix="rlc-bench-") as tmp:
        report = os.path.join(tmp, "report.json")
        cmd = [sys.executable, "-m", "pytest", "conformance", "-q", "-p", "no:cacheprovider",
               "-n", str(workers), "--profile", profile, "--ray-fixture", fixtures,
               "--conformance-report", report, *extra]
        env = {**os.environ, "RLC_RUN_ID": run_id}
        t0, busy0 = time.monotonic(), busy_cpu_seconds()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sampler = MemorySampler(proc.pid, run_id)
        sampler.start()
        proc.wait()
        wall, busy = time.monotonic() - t0, busy_cpu_seconds() - busy0
        sampler.stop.set()
        with open(report) as f:
            doc = json.load(f)
    return {"wall": wall, "busy": busy, "doc": doc, "peak_pss": sampler.peak,
            "exit": proc.returncode}


def ran_scenarios(doc: dict) -> list[dict]:
    """The report's scenarios that ran (not skipped)."""
    return [s for s in doc["scenarios"] if s["verdict"] != "skip"]


def measure_round(args, kinds: list[str]) -> dict:
    """One round: the speed probe, the floors (alone, then under ``-n``), a run
    of the profile and, with several fixtures, one run per fixture."""
    speed_before = cpu_loop_seconds()
    floors = {k: statistics.median(measure_floor(k, args.floor_repeats)) for k in kinds}
    loaded = {k: statistics.median(measure_floor(k, args.floor_repeats, args.workers))
              for k in kinds}
    res = run_profile(args.profile, args.workers, args.fixtures, args.pytest_args)
    ran = ran_scenarios(res["doc"])
    # (fixture, run) -> that fixture's scenarios in that run
    groups = {}
    for k in kinds:
        groups[(k, "all")] = [s for s in ran if s["fixture"] == k]
        if args.fixture_runs and len(kinds) > 1:
            own = run_profile(args.profile, args.workers, k, args.pytest_args)
            groups[(k, "alone")] = ran_scenarios(own["doc"])
    medians = {key: statistics.median(s["duration"] for s in group)
               for key, group in groups.items() if group}
    return {**res, "ran": ran, "groups": groups, "floors": floors, "loaded": loaded,
            "medians": medians, "per_min": len(ran) / res["wall"] * 60,
            "speed": (speed_before, cpu_loop_seconds())}


def print_round(r: dict, args, kinds: list[str]) -> None:
    ran, wall, busy = r["ran"], r["wall"], r["busy"]
    print(f"profile {args.profile}, -n {args.workers}: {len(ran)} scenarios in "
          f"{wall:.0f}s = {r['per_min']:.1f} scenarios/min (target >= 30); "
          f"verdicts {r['doc']['summary']}")
    print(f"CPU: the machine was busy {busy:.0f} CPU-s during the run, "
          f"{busy / len(ran):.1f} per scenario, "
          f"{busy / (wall * (os.cpu_count() or 1)):.0%} of its {os.cpu_count()} cores")
    print(f"machine speed: a fixed CPU loop took {r['speed'][0]:.2f}s before the floors and "
          f"{r['speed'][1]:.2f}s after the runs (lower is faster; compare runs only at "
          "similar speeds)")
    print(f"peak memory (PSS, all processes of the run, sampled every "
          f"{MemorySampler.PERIOD:.0f} s): {r['peak_pss'] / 2**30:.2f} GiB (target < 8 GiB)")
    print(f"{'fixture':<10} {'run':<6} {'median scenario':>16} {'floor':>8} {'ratio':>6} "
          f"{'floor -n' + str(args.workers):>10} {'ratio':>6} "
          f"{'median driver':>14} {'median harness':>15}  (target ratio <= 1.25)")
    for (k, run), med in r["medians"].items():
        mine = r["groups"][(k, run)]
        drv = [s["driver_time"] for s in mine if s.get("driver_time") is not None]
        over = [s["duration"] - s["driver_time"] for s in mine if s.get("driver_time") is not None]
        print(f"{k:<10} {run:<6} {med:>15.2f}s {r['floors'][k]:>7.2f}s {med / r['floors'][k]:>6.2f} "
              f"{r['loaded'][k]:>9.2f}s {med / r['loaded'][k]:>6.2f} "
              f"{statistics.median(drv) if drv else float('nan'):>13.2f}s "
              f"{statistics.median(over) if over else float('nan'):>14.2f}s")
    print(f"run: all = the run above (a worker's neighbour may run another fixture's "
          f"scenarios); alone = a run of this fixture's scenarios only, the load the "
          f"floor -n{args.workers} is measured under.")
    print(f"floor: alone, on an idle machine; floor -n{args.workers}: {args.workers} floor "
          "drivers at a time, each in its own session (as each xdist worker runs one scenario).")
    print("driver: the scenario's process until its exit begins (init/connect, the "
          "implementation's actors, the ops, probes); harness: the rest (spawn, the driver's "
          "exit incl. the user's ray.shutdown(), leftover sweep).")
    print_phases(ran, kinds)


def print_summary(rounds: list[dict]) -> None:
    """Medians over rounds: this machine's speed drifts by 10-20 % between
    runs minutes apart (measured), so one round is one sample."""
    per_min = [r["per_min"] for r in rounds]
    print(f"\n{len(rounds)} rounds: scenarios/min {', '.join(f'{x:.1f}' for x in per_min)}; "
          f"median {statistics.median(per_min):.1f} (target >= 30); peak PSS "
          f"{max(r['peak_pss'] for r in rounds) / 2**30:.2f} GiB")
    for k, run in rounds[0]["medians"]:
        if not all((k, run) in r["medians"] for r in rounds):
            continue
        alone = [r["medians"][(k, run)] / r["floors"][k] for r in rounds]
        loaded = [r["medians"][(k, run)] / r["loaded"][k] for r in rounds]
        print(f"{k} (run: {run}): median/floor {', '.join(f'{x:.2f}' for x in alone)} (median "
              f"{statistics.median(alone):.2f}); median/floor -n "
              f"{', '.join(f'{x:.2f}' for x in loaded)} (median {statistics.median(loaded):.2f})"
              " (target <= 1.25)")


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m conformance bench")
    p.add_argument("--profile", default="quick")
    p.add_argument("-n", "--workers", type=int, default=2)
    p.add_argument("--fixtures", default="local,multinode")
    p.add_argument("--floor-repeats", type=int, default=5)
    p.add_argument("--no-fixture-runs", dest="fixture_runs", action="store_false",
                   help="skip the per-fixture runs (one per fixture, for the ratios)")
    p.add_argument("--rounds", type=int, default=1,
                   help="repeat floors + runs; print each round and the medians over rounds")
    p.add_argument("--from-report", metavar="PATH",
                   help="only print where the time went in an existing report (no run)")
    p.add_argument("pytest_args", nargs="*")
    args = p.parse_args(argv)
    kinds = args.fixtures.split(",")
    if args.from_report:
        with open(args.from_report) as f:
            entries = ran_scenarios(json.load(f))
        for k in kinds:
            mine = [s["duration"] for s in entries if s["fixture"] == k]
            if mine:
                print(f"{k}: {len(mine)} scenarios, median {statistics.median(mine):.2f}s, "
                      f"sum {sum(mine):.0f}s")
        print_phases(entries, kinds)
        return 0
    rounds = []
    for i in range(args.rounds):
        if args.rounds > 1:
            print(f"\n== round {i + 1} of {args.rounds}", flush=True)
        rounds.append(measure_round(args, kinds))
        print_round(rounds[-1], args, kinds)
        sys.stdout.flush()
    if len(rounds) > 1:
        print_summary(rounds)
    return 0


def print_phases(entries: list[dict], kinds: list[str]) -> None:
    """Median seconds per phase of a scenario (the report's ``timings``), per fixture."""
    phases = ("setup", "construct", "ops", "probes", "exit", "sweep")
    print(f"where the time goes (median s): {'fixture':<10}" + "".join(f"{p:>10}" for p in phases))
    for k in kinds:
        timed = [s["timings"] for s in entries if s["fixture"] == k and s.get("timings")]
        if timed:
            print(" " * 31 + f"{k:<10}"
                  + "".join(f"{statistics.median(t[p] for t in timed):>10.2f}" for p in phases))
    print("setup: adapter load + Ray init/connect; construct: the implementation's constructors "
          "(its actors' start-up); probes: state checks after ops, incl. waiting for killed "
          "actors' processes to exit; exit: the driver's exit (the user's ray.shutdown(), "
          "atexit, the interpreter); sweep: the harness waiting for the driver's processes to go.")


if __name__ == "__main__":
    raise SystemExit(main())
