#!/usr/bin/env bash
# Builds the Python module and runs its test suite (called by `make test`).
#
# 1. python/.venv with pinned maturin, pytest, numpy, mypy and selenium (created once, kept;
#    gitignored);
# 2. `pip install ./python` — the README's install command, built by maturin;
# 3. the release CLI, which the suite starts as a server and runs `eval` with;
# 4. pytest python/tests (a run that collects no test fails too).
#
# Environment: PYTHON (interpreter for the venv, default python3), CARGO (default cargo),
# PYTEST_ARGS (extra pytest arguments). Needs the model (`make model`).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
CARGO="${CARGO:-cargo}"
VENV="$ROOT/python/.venv"

MATURIN_VERSION="1.16.0"
PYTEST_VERSION="9.2.0"
NUMPY_VERSION="2.4.6"
MYPY_VERSION="2.4.1" # stubtest checks the .pyi against the compiled module
SELENIUM_VERSION="4.51.0" # the dashboard's browser test (Debian's chromium + chromedriver)

if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"
echo "==> test tools: maturin $MATURIN_VERSION, pytest $PYTEST_VERSION, numpy $NUMPY_VERSION, mypy $MYPY_VERSION, selenium $SELENIUM_VERSION"
"$PY" -m pip install --quiet --disable-pip-version-check \
    "maturin==$MATURIN_VERSION" "pytest==$PYTEST_VERSION" "numpy==$NUMPY_VERSION" \
    "mypy==$MYPY_VERSION" "selenium==$SELENIUM_VERSION"

echo "==> pip install ./python"
# The isolated build environment gets the same maturin as the venv.
constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
echo "maturin==$MATURIN_VERSION" >"$constraints"
PIP_CONSTRAINT="$constraints" "$PY" -m pip install --quiet --disable-pip-version-check ./python
"$PY" -c 'import grantmatch; print("grantmatch", grantmatch.__version__, "from", grantmatch.__file__)'

echo "==> building the CLI (the suite compares with its server and eval)"
"$CARGO" build --release --locked -p grantmatch-cli

echo "==> pytest python/tests"
set +e
# shellcheck disable=SC2086
"$PY" -m pytest python/tests ${PYTEST_ARGS:-}
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
exit "$status"
