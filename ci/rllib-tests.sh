#!/usr/bin/env bash
# The RLlib adapter's own tests in the RLlib venv (.venv-rllib: the main lock
# without its gymnasium pin, plus ci/rllib.lock), where they must not skip:
# RLC_EXTRAS names rllib. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
export RLC_EXTRAS=rllib RLC_VENV="${RLC_RLLIB_VENV:-.venv-rllib}"
bash ci/setup.sh
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0
exec "$RLC_VENV/bin/python" -m pytest -q -p no:cacheprovider tests/adapters/test_rllib_adapter.py \
  "tests/conformance/test_script.py::test_extra_scripts_compile[rllib]" "$@"
