#!/usr/bin/env bash
# The main job: the conformance suite against an implementation (default: the
# reference) on Ray clusters it starts itself. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0
mkdir -p reports
exec .venv/bin/python -m pytest conformance -n "${RLC_WORKERS:-2}" -q \
  --conformance-report "${RLC_REPORT:-reports/conformance.json}" \
  --junitxml "${RLC_JUNIT:-reports/conformance.xml}" "$@"
