#!/usr/bin/env bash
# The RLlib adapter's own tests in the RLlib venv (.venv-rllib: the main lock
# without its gymnasium pin, plus ci/rllib.lock), where they must not skip:
# RLC_EXTRAS names rllib. Extra arguments go to pytest.
set -euo pipefail
RLC_VENV_OVERRIDE="${RLC_RLLIB_VENV:-}" exec bash "$(dirname "$0")/adapter-tests.sh" rllib "$@"
