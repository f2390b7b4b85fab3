#!/usr/bin/env bash
# The project's own tests: the reference implementation, the harness, and the
# suite's detection power. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0
exec .venv/bin/python -m pytest tests -n "${RLC_WORKERS:-2}" -q "$@"
