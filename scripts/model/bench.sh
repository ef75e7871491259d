#!/usr/bin/env bash
# scripts/model/bench.sh - re-measure fp32 vs int8 throughput (2 threads, batch 32)
# in the existing model directory and store it in manifest.json's "benchmark".
# Run it on an otherwise idle machine: a concurrent cargo build halves the figures.
# Usage: scripts/model/bench.sh [DIR]   (needs the venv made by fetch.sh)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${GRANTMATCH_CACHE_DIR:-$HOME/.cache/grantmatch}"
VENV="${GRANTMATCH_VENV:-$CACHE/venv}"
DIR="${1:-${GRANTMATCH_MODEL_DIR:-$CACHE/model}}"
[[ -x "$VENV/bin/python" ]] || { echo "bench.sh: no venv at $VENV; run scripts/model/fetch.sh first" >&2; exit 1; }
exec "$VENV/bin/python" "$HERE/setup_model.py" --bench-only --out "$DIR"
