#!/usr/bin/env bash
# The mutation ratchet (.ci/run): a fixed, seeded sample of the mutants that
# ci/results/mutation/ says the quick profile kills must still be killed, each
# by the scenario that killed it. Installs the mutation extra (cosmic-ray) into
# $VENV/mutation-site first (its own stamp: the venv itself is not touched).
# The whole analysis is not run here: see docs/mutation.md.
#
# The sample is dealt out to RLC_MUTATION_SHARDS shards (default 2) side by
# side, each in a copy of the checkout of its own (the files git tracks or
# would track: not the venvs, not reports/), removed at the end: the mutants
# are never written into this impl/, which .ci/run's other steps import
# while the sample runs, and a stopped sample leaves no mutant behind. Side
# by side because a kill mostly waits: a mutant that makes a teardown hang
# is held to its scenario's deadline (measured 2026-11-27 at 47c451c, seed
# 27, alone, each such kill held twice then: 379 s one after another, of
# which 346 s were three such mutants; 286 s in two shards).
# impl/ must be as committed: the results are of it.
set -euo pipefail
cd "$(dirname "$0")/.."
RLC_EXTRAS="${RLC_EXTRAS:+$RLC_EXTRAS,}mutation" bash ci/setup.sh
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0
PY="$(cd "${RLC_VENV:-.venv}" && pwd)/bin/python"  # absolute: the shards run in the copies
SHARDS="${RLC_MUTATION_SHARDS:-2}"
if [[ ! $SHARDS =~ ^[1-9][0-9]*$ ]]; then
  echo "ci/mutation-sample.sh: RLC_MUTATION_SHARDS=$SHARDS: want a positive integer" >&2
  exit 2
fi
"$PY" -c 'from conformance.mutation.cli import check_pristine; check_pristine()'
WORK="$(mktemp -d "${TMPDIR:-/tmp}/rlc-mutation-sample-XXXXXX")"
pids=()
# A stopped sample stops its shards and removes the copies once they have
# restored their impl/. SIGINT, as from a Ctrl-C: a shard handles it also
# where it came in ignored (mutate sample installs its own handler; SIGTERM
# would meet Ray's handler in a shard, which drains its nodes for up to 30 s
# first: measured 2026-11-27). A shard may get the stop twice (a Ctrl-C or
# .ci/run's stop reaches the whole process group): the first stops it, it
# ignores the second (conformance.mutation.cli._stop_once).
cleanup() {
  trap '' INT TERM  # a second stop must not cut this short (copies and shards left)
  for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for i in $(seq 1 "$SHARDS"); do
  mkdir "$WORK/tree-$i"
  git ls-files -z --cached --others --exclude-standard \
    | tar --null --ignore-failed-read -T - -c | tar -x -C "$WORK/tree-$i"
  # each shard's output whole, after the others': a log of its own
  ( cd "$WORK/tree-$i" && RLC_MUTATION_COPY=1 exec "$PY" -m conformance mutate sample \
      --count "${RLC_MUTATION_SAMPLE:-10}" --seed "${RLC_MUTATION_SEED:-27}" \
      --shard "$i/$SHARDS" "$@" >"$WORK/shard-$i.log" 2>&1 ) &
  pids+=($!)
done
status=0
for i in $(seq 1 "$SHARDS"); do
  rc=0
  wait "${pids[$((i - 1))]}" || rc=$?
  cat "$WORK/shard-$i.log"
  # the worst exit wins: 1 (a survivor) over 2 (results too old) over 0
  if [[ $rc -eq 1 || ( $rc -ne 0 && $status -ne 1 ) ]]; then status=$rc; fi
done
pids=()
exit "$status"
