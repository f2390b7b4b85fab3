#!/usr/bin/env bash
# Create .venv (if missing) and install the pinned dependencies (if changed).
# Idempotent: a stamp of the lock files' hash skips work already done.
# RLC_EXTRAS=torchrl also installs the torchrl extra (ci/torchrl.lock);
# RLC_EXTRAS=rllib the RLlib extra (ci/rllib.lock: it pins gymnasium 1.2.2, so
# give it its own venv: RLC_EXTRAS=rllib RLC_VENV=.venv-rllib bash ci/setup.sh);
# RLC_EXTRAS=tianshou the Tianshou extra (ci/tianshou.lock: it pins filelock 3.x,
# so it too gets its own: RLC_EXTRAS=tianshou RLC_VENV=.venv-tianshou bash ci/setup.sh).
# RLC_EXTRAS=jobs the jobs extra (ci/jobs.lock: ray[default]'s pieces for
# `python -m conformance job`) into $VENV/jobs-site, a directory that is not on
# the venv's path (measured: importable, they make each ray.init slower).
# RLC_EXTRAS=mutation the mutation extra (ci/mutation.lock: cosmic-ray and
# coverage.py, for `python -m conformance mutate`) into $VENV/mutation-site,
# off the venv's path for the same reason (cosmic-ray needs aiohttp).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
VENV="${RLC_VENV:-.venv}"
LOCKS="ci/requirements.lock"
EXTRAS=""
for extra in torchrl rllib tianshou; do
  if [[ ",${RLC_EXTRAS:-}," == *",$extra,"* ]]; then EXTRAS="$EXTRAS ci/$extra.lock"; fi
done
LOCKS="$LOCKS$EXTRAS"
JOBS=""
if [[ ",${RLC_EXTRAS:-}," == *",jobs,"* ]]; then JOBS="ci/jobs.lock"; fi
MUTATION=""
if [[ ",${RLC_EXTRAS:-}," == *",mutation,"* ]]; then MUTATION="ci/mutation.lock"; fi
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "ci/setup.sh: creating $VENV" >&2
  "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.rlc-installed"
WANT="$(cat $LOCKS $JOBS | sha256sum | cut -d' ' -f1)"
# The installer: uv (pinned in ci/requirements.lock), given the package sources
# pip is configured with (conformance/releases/pip_sources.py); pip where uv
# does not install or pip has a source setting uv would not be given. Measured
# 2026-11-26 on 2 cores, uv's cache empty: the RLlib venv's packages in 31 s
# with `uv pip install --compile-bytecode` (8 s of it the install) against
# 79 s with pip; the same 61 packages at the same versions (pip freeze). The
# bytecode is compiled here: without it no .pyc was written on import (this
# machine's shell sets PYTHONDONTWRITEBYTECODE=1, and a CI runner may too) and
# `import torch, ray, ray.rllib` took 11-13 s on every start instead of 5 s.
install() {
  local cfg
  if [[ ! -x "$VENV/bin/uv" ]] && ! "$VENV/bin/python" -m pip install -q \
      --disable-pip-version-check "$(grep '^uv==' ci/requirements.lock)" >/dev/null; then
    echo "ci/setup.sh: WARNING: uv did not install; installing with pip (slower)" >&2
  fi
  if [[ -x "$VENV/bin/uv" ]] \
      && cfg="$("$VENV/bin/python" conformance/releases/pip_sources.py "$VENV/bin/python")"; then
    ( eval "$cfg" && exec "$VENV/bin/uv" pip install -q --compile-bytecode \
        --python "$VENV/bin/python" "$@" )
  else
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$@"
  fi
}
if [[ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]]; then
  echo "ci/setup.sh: installing pinned dependencies ($LOCKS)" >&2
  # One resolve of the base lock and the extras. An extra lock's pin wins:
  # the base lock's line for a package an extra pins again is left out
  # (rllib.lock's gymnasium==1.2.2; its ray[rllib]==2.60.0 replaces ray==2.60.0;
  # tianshou.lock's filelock==3.32.7). torch is pinned exactly: the CPU build
  # pip's find-links hold here (2.13.0+cpu), never the CUDA wheels.
  BASE="$VENV/.rlc-base.lock"
  awk 'function name(line) { sub(/[=<>!~\[ ;].*/, "", line); line = tolower(line);
                            gsub(/_/, "-", line); return line }
       FILENAME == ARGV[1] { if ($0 ~ /^[A-Za-z0-9]/) pinned[name($0)] = 1; next }
       !($0 ~ /^[A-Za-z0-9]/ && name($0) in pinned)' \
    <(cat /dev/null $EXTRAS) ci/requirements.lock > "$BASE"
  REQS=(-r "$BASE")
  for lock in $EXTRAS; do REQS+=(-r "$lock"); done
  install "${REQS[@]}"
  if [[ -n "$JOBS" ]]; then
    rm -rf "$VENV/jobs-site"
    install --no-deps --target "$VENV/jobs-site" -r "$JOBS"
  fi
  echo "$WANT" > "$STAMP"
fi
# The mutation extra has its own stamp: asking for it (or not) never reinstalls the venv.
if [[ -n "$MUTATION" ]]; then
  MSTAMP="$VENV/mutation-site/.rlc-installed"
  MWANT="$(sha256sum < "$MUTATION" | cut -d' ' -f1)"
  if [[ "$(cat "$MSTAMP" 2>/dev/null)" != "$MWANT" ]]; then
    echo "ci/setup.sh: installing the mutation extra ($MUTATION) into $VENV/mutation-site" >&2
    rm -rf "$VENV/mutation-site"
    install --no-deps --target "$VENV/mutation-site" -r "$MUTATION"
    echo "$MWANT" > "$MSTAMP"
  fi
fi
