#!/usr/bin/env bash
# The catalog of REV (default: main's merge base) is unchanged in this
# checkout: every scenario id, op list, spec and deadline, for every
# component subset, both profiles and every fixture (ci/catalog_dump.py).
# New scenarios are allowed only in the families named by NEW_FAMILIES.
#   bash ci/catalog-unchanged.sh [REV]
set -euo pipefail
cd "$(dirname "$0")/.."
REV=${1:-$(git merge-base HEAD main)}
PY=${PYTHON:-.venv/bin/python}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive "$REV" | tar -x -C "$tmp"
PYTHONPATH="$tmp" "$PY" ci/catalog_dump.py > "$tmp/base.json"
PYTHONPATH=. "$PY" ci/catalog_dump.py --against "$tmp/base.json" \
  --new-families "${NEW_FAMILIES:-instances,sweep,weights}"
