#!/usr/bin/env bash
# Create .venv (if missing) and install the pinned dependencies (if changed).
# Idempotent: a stamp of the lock files' hash skips work already done.
# RLC_EXTRAS=torchrl also installs the torchrl extra (ci/torchrl.lock).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
VENV="${RLC_VENV:-.venv}"
LOCKS="ci/requirements.lock"
if [[ ",${RLC_EXTRAS:-}," == *",torchrl,"* ]]; then LOCKS="$LOCKS ci/torchrl.lock"; fi
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "ci/setup.sh: creating $VENV" >&2
  "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.rlc-installed"
WANT="$(cat $LOCKS | sha256sum | cut -d' ' -f1)"
if [[ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]]; then
  echo "ci/setup.sh: installing pinned dependencies ($LOCKS)" >&2
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
  # torch first, exactly pinned: a CPU build, never the CUDA wheels.
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$(grep '^torch==' ci/requirements.lock)"
  for lock in $LOCKS; do
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$lock"
  done
  echo "$WANT" > "$STAMP"
fi
