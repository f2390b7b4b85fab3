#!/usr/bin/env python3
"""Run a command beside busy loops that hold the machine's cores, as on a
shared CI runner: ``busy-loops.py [--loops N] -- CMD [ARGS...]``.

Starts N processes (default: one per core) that spin on the CPU, runs CMD,
then stops the loops it started, by pid, whatever CMD's outcome: on CMD's
exit, Ctrl-C, SIGTERM or SIGHUP. Each loop also ends by itself when this
process is gone (its parent changes), so a SIGKILL leaves nothing spinning. Prints the
CPU pressure (Linux PSI, ``/proc/pressure/cpu`` "some avg10") at the start
and every minute to stderr. Exit status: CMD's. Used for the figures in
ci/results/load/README.md.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading

#: a loop that spins until its parent (this script) is gone, asking every
#: million turns (20-50 ms here): a getppid() on every turn made it a
#: system-call storm, not a plain busy loop (the reference's quick profile
#: beside two of those took 706 s, its actors starting 3-7 times slower, where
#: beside plain loops it took 320 s)
SPIN = ("import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n"
        "    for _ in range(1_000_000): pass")


def cpu_pressure() -> str:
    try:
        with open("/proc/pressure/cpu") as f:
            some = f.readline().split()
    except OSError:
        return "no PSI"
    return dict(kv.split("=") for kv in some[1:])["avg10"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=os.cpu_count() or 1)
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("no command")
    for signum in (signal.SIGTERM, signal.SIGHUP):  # unwind: the finally below runs
        signal.signal(signum, lambda n, frame: sys.exit(128 + n))
    loops: list[subprocess.Popen] = []
    done = threading.Event()

    def report():
        while not done.wait(60):
            print(f"busy-loops: CPU pressure avg10 {cpu_pressure()}", file=sys.stderr, flush=True)

    try:
        for _ in range(args.loops):
            # Each loop in a session of its own, as another job on a shared
            # runner is (its own cgroup, its own scheduler autogroup here:
            # /proc/sys/kernel/sched_autogroup_enabled is 1). Measured
            # 2026-11-26: with the loops in the suite's session, 14 of 24
            # torchrl scenarios hung in their collector's construct (its
            # remote collectors' workers never started, CPU pressure
            # 0.87-0.98); with each loop in its own session, four of those
            # constructed in 21-36 s at CPU pressure 0.93-0.97 and got the
            # verdicts of the run alone (ci/results/load/README.md).
            loops.append(subprocess.Popen([sys.executable, "-c", SPIN], start_new_session=True))
        print(f"busy-loops: {args.loops} loops (pids {[p.pid for p in loops]}), "
              f"CPU pressure avg10 {cpu_pressure()}: {' '.join(cmd)}", file=sys.stderr, flush=True)
        threading.Thread(target=report, daemon=True).start()
        return subprocess.call(cmd)
    finally:
        done.set()
        for p in loops:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
        print("busy-loops: loops stopped", file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
