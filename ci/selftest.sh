#!/usr/bin/env bash
# The project's own tests: the reference implementation, the harness, and the
# suite's detection power. Extra arguments go to every pytest run.
#
# tests/impl runs in pytest processes of its own: its tests start Ray inside
# the pytest process, and a process that earlier hosted the in-process
# multinode cluster (tests/fixtures, tests/conformance) then fails to build
# actors ("SchedulingCancelled: Actor creation cancelled", "The actor never
# ran"). Measured 2026-11-25 on Ray 2.60.0: `pytest -n 0
# tests/fixtures/test_fixtures_multinode.py tests/impl/test_collector.py`
# fails, each file alone passes; CI went red when xdist happened to put
# tests/impl on such a worker (22 and 32 failures in two runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0
#
# The tests marked waits_for_deadline (a hang held to its bound: the CPU is
# idle while the driver waits) run in a lane of their own, one at a time,
# beside the two sessions below: their waiting no longer holds one of the two
# workers. Their output follows the others'. Extra arguments go to all three
# runs: not -m or -n, which would replace the lanes' own.
status=0
lane_log="$(mktemp)"
trap 'rm -f "$lane_log"' EXIT
# A script's background job ignores SIGINT unless it resets it (`trap - INT`).
( trap - INT; exec .venv/bin/python -m pytest tests --ignore=tests/impl -m waits_for_deadline \
  -n 0 -q --durations=10 "$@" >"$lane_log" 2>&1 ) &
lane=$!
# Ctrl-C reaches the lane from the terminal (it is in this process group); a
# TERM is passed on as the SIGINT of a Ctrl-C, so the lane's session ends and
# stops its clusters (a SIGTERM inside a test would only fail that test).
# Either way the lane's output is shown before the script stops.
stop_lane() {
  trap - INT TERM
  if [[ $1 == TERM ]]; then kill -INT "$lane" 2>/dev/null || true; fi
  wait "$lane" || true
  cat "$lane_log"
  exit 130
}
trap 'stop_lane INT' INT
trap 'stop_lane TERM' TERM
.venv/bin/python -m pytest tests/impl -n "${RLC_WORKERS:-2}" -q "$@" || status=$?
# --durations: where the CI time goes, in every CI log (docs/ci.md, Measured)
.venv/bin/python -m pytest tests --ignore=tests/impl -m "not waits_for_deadline" \
  -n "${RLC_WORKERS:-2}" -q --durations=30 "$@" || status=$?
lane_status=0
wait "$lane" || lane_status=$?
trap - INT TERM
echo "== ci/selftest.sh: the waits_for_deadline lane (exit $lane_status)"
cat "$lane_log"
# 5, no test selected, is fine only where extra arguments narrowed the run:
# in CI (no arguments) a lane that selects nothing is a lost marker, red.
[[ $lane_status -eq 0 || ( $lane_status -eq 5 && $# -gt 0 ) ]] || status=$lane_status
exit "$status"
