#!/usr/bin/env bash
# scripts/model/check.sh - verify the model directory against its manifest.json
# (sha256 and size of every file; no network, standard-library Python only).
#
# Usage: scripts/model/check.sh [--quick] [DIR]
#   DIR defaults to ${GRANTMATCH_MODEL_DIR:-${GRANTMATCH_CACHE_DIR:-$HOME/.cache/grantmatch}/model}
#   --quick checks sizes and recipe version only (what fetch.sh's fast path does).
# Exit 0 and "model ok: DIR" when everything matches, 1 otherwise.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${GRANTMATCH_CACHE_DIR:-$HOME/.cache/grantmatch}"
quick=()
dir=""
for arg in "$@"; do
  case "$arg" in
    --quick) quick=(--quick) ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) dir="$arg" ;;
  esac
done
dir="${dir:-${GRANTMATCH_MODEL_DIR:-$CACHE/model}}"
if [[ ${#quick[@]} -gt 0 ]]; then
  python3 "$HERE/check.py" --quick "$dir" && echo "model ok (quick): $dir"
else
  exec python3 "$HERE/check.py" "$dir"
fi
