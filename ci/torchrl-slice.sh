#!/usr/bin/env bash
# The torchrl slice: the scenarios of ci/torchrl-slice.txt against torchrl
# (the extra, ci/torchrl.lock), then `python -m conformance compare`: red when
# a verdict (or a fail's oracles) drifted from the committed matrix
# (RLC_COMMITTED, default ci/results/torchrl/torchrl-0.14.1_ray-2.60.0.json).
# torchrl fails most of these scenarios on purpose: pytest's own failures are
# expected, compare decides. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
RLC_EXTRAS="${RLC_EXTRAS:+$RLC_EXTRAS,}torchrl" bash ci/setup.sh
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0
SLICE=ci/torchrl-slice.txt
COMMITTED="${RLC_COMMITTED:-ci/results/torchrl/torchrl-0.14.1_ray-2.60.0.json}"
REPORT="${RLC_SLICE_REPORT:-reports/torchrl-slice.json}"
mkdir -p "$(dirname "$REPORT")"
rm -f "$REPORT" "${REPORT%.json}"-rerun-*.json "${REPORT%.json}-pending.txt"
echo "ci/torchrl-slice.sh: $(grep -c '^[^#[:space:]]' "$SLICE") scenarios of $SLICE against" \
     "torchrl; their failures are expected where $COMMITTED has them (compare decides)"
code=0
# --tb=no: the expected failures' evidence is in the report; compare prints it
# for a scenario that drifted.
.venv/bin/python -m pytest conformance -n "${RLC_WORKERS:-2}" -q -p no:cacheprovider --tb=no \
  --impl torchrl --profile quick --ray-fixture local,multinode --scenarios-from "$SLICE" \
  --conformance-report "$REPORT" "$@" || code=$?
# 0: all passed, 1: some scenario failed (compare judges which); anything else
# (usage error, interrupted, no scenario collected) is the run's own failure.
if [[ $code -gt 1 ]]; then
  echo "ci/torchrl-slice.sh: FAILED: pytest exited $code before the slice had its verdicts" >&2
  exit "$code"
fi
# A declared varying oracle (varies: in the slice) that missed its usual outcome must be
# seen with it in a rerun (conformance/reports/varies.py): rerun what compare lists as
# pending, one round at a time, until none is or the bound is reached.
RERUNS=()
for round in $(seq 2 "$(.venv/bin/python -c 'from conformance.reports.varies import RUNS; print(RUNS)')"); do
  PENDING="${REPORT%.json}-pending.txt"
  .venv/bin/python -m conformance compare "$REPORT" --against "$COMMITTED" \
    --scenarios-from "$SLICE" --pending ${RERUNS[@]+--reruns "${RERUNS[@]}"} > "$PENDING"
  [[ -s "$PENDING" ]] || break
  echo "ci/torchrl-slice.sh: run $round of a scenario whose varying oracle missed its usual outcome in every run so far:" >&2
  cat "$PENDING" >&2
  RERUN="${REPORT%.json}-rerun-$round.json"
  rc=0
  .venv/bin/python -m pytest conformance -n "${RLC_WORKERS:-2}" -q -p no:cacheprovider --tb=no \
    --impl torchrl --profile quick --ray-fixture local,multinode --scenarios-from "$PENDING" \
    --conformance-report "$RERUN" "$@" || rc=$?
  if [[ $rc -gt 1 ]]; then
    echo "ci/torchrl-slice.sh: FAILED: the rerun's pytest exited $rc" >&2
    exit "$rc"
  fi
  RERUNS+=("$RERUN")
done
exec .venv/bin/python -m conformance compare "$REPORT" --against "$COMMITTED" \
  --scenarios-from "$SLICE" ${RERUNS[@]+--reruns "${RERUNS[@]}"}
