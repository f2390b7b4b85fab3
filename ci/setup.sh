#!/usr/bin/env bash
# Create .venv (if missing) and install the pinned dependencies (if changed).
# Idempotent: a stamp of the lock files' hash skips work already done.
# RLC_EXTRAS=torchrl also installs the torchrl extra (ci/torchrl.lock);
# RLC_EXTRAS=jobs the jobs extra (ci/jobs.lock: ray[default]'s pieces for
# `python -m conformance job`) into $VENV/jobs-site, a directory that is not on
# the venv's path (measured: importable, they make each ray.init slower).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
VENV="${RLC_VENV:-.venv}"
LOCKS="ci/requirements.lock"
if [[ ",${RLC_EXTRAS:-}," == *",torchrl,"* ]]; then LOCKS="$LOCKS ci/torchrl.lock"; fi
JOBS=""
if [[ ",${RLC_EXTRAS:-}," == *",jobs,"* ]]; then JOBS="ci/jobs.lock"; fi
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "ci/setup.sh: creating $VENV" >&2
  "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.rlc-installed"
WANT="$(cat $LOCKS $JOBS | sha256sum | cut -d' ' -f1)"
if [[ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]]; then
  echo "ci/setup.sh: installing pinned dependencies ($LOCKS)" >&2
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
  # torch first, exactly pinned: a CPU build, never the CUDA wheels.
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$(grep '^torch==' ci/requirements.lock)"
  for lock in $LOCKS; do
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$lock"
  done
  if [[ -n "$JOBS" ]]; then
    rm -rf "$VENV/jobs-site"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
      --target "$VENV/jobs-site" -r "$JOBS"
  fi
  echo "$WANT" > "$STAMP"
fi
