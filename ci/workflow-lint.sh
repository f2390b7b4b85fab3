#!/usr/bin/env bash
# The GitHub workflows a fork copies, checked without reaching GitHub:
# zizmor --offline (actions pinned by commit SHA, no persisted checkout
# credentials, least permissions, no template injection) and
# check-jsonschema against its vendored GitHub workflow schema. The tools
# come from ci/workflow-lint.lock, in their own venv (RLC_LINT_VENV, default
# .venv-lint), installed again only when the lock changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
VENV="${RLC_LINT_VENV:-.venv-lint}"
LOCK=ci/workflow-lint.lock
WORKFLOWS=(ci/conformance-gate.yml ci/example-fork/.github/workflows/lifecycle.yml)
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "ci/workflow-lint.sh: creating $VENV" >&2
  "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.rlc-installed"
WANT="$(sha256sum "$LOCK" | cut -d' ' -f1)"
if [[ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]]; then
  echo "ci/workflow-lint.sh: installing $LOCK" >&2
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$LOCK"
  echo "$WANT" > "$STAMP"
fi
"$VENV/bin/zizmor" --offline --no-progress "${WORKFLOWS[@]}"
"$VENV/bin/check-jsonschema" --builtin-schema vendor.github-workflows "${WORKFLOWS[@]}"
