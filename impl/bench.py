"""Speed benchmark: frames/s of the reference RayCollector vs torchrl's.

Run from the repo root: ``python -m impl.bench [--frames-per-batch N]
[--total-frames N] [--repeats N]``. Both collectors run on the same local Ray
(CartPole-v1, random policy, one CPU per collector actor); only iteration is
timed, after construction. Prints one row per configuration with the best of
``--repeats`` runs and the ratio reference / torchrl.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
import warnings
from pathlib import Path

REPO = str(Path(__file__).resolve().parents[1])
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ["RAY_AUTH_MODE"] = "disabled"
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH", "")) if p)

CONFIGS = [(1, False), (2, False), (2, True)]  # (num_collectors, sync)


def torchrl_cartpole():
    from torchrl.envs import GymEnv

    return GymEnv("CartPole-v1")


def run_reference(num_collectors: int, sync: bool, fpb: int, total: int) -> float:
    from impl import RayCollector

    collector = RayCollector(
        "CartPole-v1", frames_per_batch=fpb, total_frames=total, num_collectors=num_collectors,
        sync=sync, remote_configs={"num_cpus": 1},
    )
    try:
        return _time_iteration(collector)
    finally:
        collector.shutdown()


def run_torchrl(num_collectors: int, sync: bool, fpb: int, total: int) -> float:
    from torchrl.collectors.distributed import RayCollector

    collector = RayCollector(
        [torchrl_cartpole] * num_collectors, policy=None, frames_per_batch=fpb, total_frames=total,
        num_collectors=num_collectors, sync=sync, remote_configs={"num_cpus": 1, "num_gpus": 0},
    )
    try:
        return _time_iteration(collector)
    finally:
        collector.shutdown()


def _time_iteration(collector) -> float:
    frames, start = 0, time.perf_counter()
    for batch in collector:
        frames += batch.numel()
    return frames / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames-per-batch", type=int, default=200)
    parser.add_argument("--total-frames", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    import ray

    warnings.filterwarnings("ignore", category=UserWarning, module=r"torchrl\.")
    try:
        import torchrl  # noqa: F401
    except ImportError as exc:
        torchrl = None
        print(f"torchrl not importable ({exc}); measuring the reference only", file=sys.stderr)

    temp_dir = f"/tmp/rlc-bench-{os.getpid()}"
    ray.init(address="local", num_cpus=4, include_dashboard=False, _temp_dir=temp_dir, log_to_driver=False)
    try:
        rows = []
        for n, sync in CONFIGS:
            ref, trl = [], []
            for _ in range(args.repeats):  # alternate, so both see the same machine load
                ref.append(run_reference(n, sync, args.frames_per_batch, args.total_frames))
                if torchrl is not None:
                    trl.append(run_torchrl(n, sync, args.frames_per_batch, args.total_frames))
            rows.append((f"{n} collector{'s' * (n > 1)}, {'sync' if sync else 'async'}", max(ref), max(trl, default=None)))
    finally:
        ray.shutdown()
        shutil.rmtree(temp_dir, ignore_errors=True)

    print(f"CartPole-v1, random policy, frames_per_batch={args.frames_per_batch}, "
          f"total_frames={args.total_frames}, best of {args.repeats}")
    print(f"{'config':<24} {'reference fps':>14} {'torchrl fps':>12} {'ratio':>7}")
    for name, ref, trl in rows:
        trl_s = f"{trl:12.0f}" if trl else f"{'-':>12}"
        ratio = f"{ref / trl:7.2f}" if trl else f"{'-':>7}"
        print(f"{name:<24} {ref:14.0f} {trl_s} {ratio}")


if __name__ == "__main__":
    main()
