#!/usr/bin/env bash
# An extra implementation's adapter tests in its own venv: bash ci/adapter-tests.sh
# EXTRA [pytest args] builds .venv-EXTRA (the main lock, minus the pins
# ci/EXTRA.lock overrides, plus ci/EXTRA.lock) and runs
# tests/adapters/test_EXTRA_adapter.py and test_extra_scripts_compile[EXTRA]
# there, where they must not skip: RLC_EXTRAS names the extra.
# RLC_VENV_OVERRIDE names another venv directory.
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRA="$1"; shift
export RLC_EXTRAS="$EXTRA" RLC_VENV="${RLC_VENV_OVERRIDE:-.venv-$EXTRA}"
bash ci/setup.sh
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0
exec "$RLC_VENV/bin/python" -m pytest -q -p no:cacheprovider "tests/adapters/test_${EXTRA}_adapter.py" \
  "tests/conformance/test_script.py::test_extra_scripts_compile[$EXTRA]" "$@"
