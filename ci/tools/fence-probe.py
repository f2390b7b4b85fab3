"""What a reader of the buffer sees when a collector's teardown does not fence
its writer off (the survivors of impl/collector.py's ``_after_kill``).

The buffer actor is stalled by a sleeping call while a buffer-mode collector
is torn down, so the writes its killed actors had sent are still queued in
the buffer when ``shutdown()`` returns. The write count is read twice: from
the control concurrency group, which the stall does not hold (what the
buffer's storage holds at that moment, no public method reads it), and
through the public ``write_count``, then once more after the stall.

    export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_AUTH_MODE=disabled
    .venv/bin/python ci/tools/fence-probe.py            # the reference
    .venv/bin/python ci/tools/fence-probe.py --no-fence # _after_kill a no-op

Measured 2026-11-29, this machine (2 cores), stall 2.8 s, the teardown
started 0.3 s into it, twice each: the reference returned in 2.51 and 2.50 s,
the storage at the return equal to every later read (1280, 1088); without the
fence it returned in 2.13 and 2.19 s, the storage at the return 1088, yet
the public read right after it gave 1216 both times, as after the stall.
Every public read queues (one sequential default
group) behind the writes that reached the buffer before it, so those writes
are in what it reads: the fence changes how long the teardown takes, and
what happens to a write still in flight when the fence arrives (dropped;
without it, kept). The probe's batches are small (64 rows of CartPole,
passed inline with the call); a large one goes through the object store.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-fence", action="store_true", help="the collector's _after_kill a no-op")
    parser.add_argument("--stall", type=float, default=2.8, help="seconds the buffer actor sleeps")
    args = parser.parse_args()

    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False)
    import impl
    from impl.collector import RayCollector

    if args.no_fence:
        RayCollector._after_kill = lambda self, deadline: None
    buf = impl.RayReplayBuffer(100_000)
    col = RayCollector("CartPole-v1", None, frames_per_batch=64, total_frames=-1, num_collectors=2,
                       replay_buffer=buf, remote_configs={"num_cpus": 0.25})
    try:
        col.start()
        while buf.write_count < 256:
            time.sleep(0.05)
        handle = buf._actors[0]

        def stored() -> int:
            peek = handle.__ray_call__.options(concurrency_group="control")
            return ray.get(peek.remote(lambda actor: actor._writes))

        stall = handle.__ray_call__.remote(lambda actor: time.sleep(args.stall))
        time.sleep(0.3)  # the collector's actors block in their next write
        t0 = time.monotonic()
        col.shutdown()
        took = time.monotonic() - t0
        at_return = stored()
        read = buf.write_count
        ray.get(stall)
        after = buf.write_count
        print(f"{'no fence' if args.no_fence else 'reference'}: shutdown() took {took:.2f} s "
              f"(stall {args.stall} s); storage at the return {at_return}, public read "
              f"after it {read}, after the stall {after}")
        return 0 if read == after else 1
    finally:
        col.shutdown()
        buf.close()
        ray.shutdown()


if __name__ == "__main__":
    raise SystemExit(main())
