#!/usr/bin/env bash
# The Tianshou adapter's own tests in the Tianshou venv (.venv-tianshou: the
# main lock without its filelock pin, plus ci/tianshou.lock), where they must
# not skip: RLC_EXTRAS names tianshou. Extra arguments go to pytest.
set -euo pipefail
RLC_VENV_OVERRIDE="${RLC_TIANSHOU_VENV:-}" exec bash "$(dirname "$0")/adapter-tests.sh" tianshou "$@"
