#!/usr/bin/env bash
# The mutation ratchet (.ci/run): a fixed, seeded sample of the mutants that
# ci/results/mutation/ says the quick profile kills must still be killed, each
# by the scenario that killed it. Installs the mutation extra (cosmic-ray) into
# $VENV/mutation-site first (its own stamp: the venv itself is not touched).
# The whole analysis is not run here: see docs/mutation.md.
set -euo pipefail
cd "$(dirname "$0")/.."
RLC_EXTRAS="${RLC_EXTRAS:+$RLC_EXTRAS,}mutation" bash ci/setup.sh
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0
exec "${RLC_VENV:-.venv}/bin/python" -m conformance mutate sample --count "${RLC_MUTATION_SAMPLE:-10}" \
  --seed "${RLC_MUTATION_SEED:-27}" "$@"
