#!/usr/bin/env bash
# One chunk of the mutation analysis, N shards side by side (each in its own
# copy of the tree under reports/mutation/tree-I, shard 1 in this tree), all on
# one cosmic-ray session; resumable: rerun to go on. Hold the machine lock
# around it (flock /tmp/rlc-cpu.lock ci/mutation-run.sh ...).
#   ci/mutation-run.sh [MINUTES] [SHARDS] [PROFILE] [mutate run options...]
#   default: 25 2 quick (e.g. ci/mutation-run.sh 25 2 quick --budget 12; then --deep)
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES="${1:-25}" SHARDS="${2:-2}" PROFILE="${3:-quick}"
shift $(( $# < 3 ? $# : 3 ))
PY="$(pwd)/${RLC_VENV:-.venv}/bin/python"
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0
SESSION="$(pwd)/reports/mutation/session-$PROFILE.sqlite"
COVERAGE="$(pwd)/ci/results/mutation/coverage-$PROFILE.json"
pids=()
for i in $(seq 1 "$SHARDS"); do
  tree=.
  if [[ $i -gt 1 ]]; then
    tree="reports/mutation/tree-$i"
    rm -rf "$tree" && mkdir -p "$tree"
    git archive HEAD | tar -x -C "$tree"   # the committed tree: its impl/ gets the mutants
  fi
  copy=0; [[ $i -gt 1 ]] && copy=1  # a copy of HEAD: as committed; shard 1's checkout is checked
  (cd "$tree" && RLC_MUTATION_COPY=$copy "$PY" -m conformance mutate run --profile "$PROFILE" --shard "$i/$SHARDS" \
     --minutes "$MINUTES" --session "$SESSION" --coverage "$COVERAGE" "$@" \
     >> "$OLDPWD/reports/mutation/run-$PROFILE-shard-$i.log" 2>&1) &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
tail -n 2 reports/mutation/run-"$PROFILE"-shard-*.log
exit $status
