#!/usr/bin/env bash
# Runs benches/ranking_vs_numpy.py with NumPy: $GRANTMATCH_BENCH_PYTHON if set, else a
# python3 that has NumPy, else a venv in target/bench-venv made from benches/requirements.txt
# (PyPI). Arguments go to the script, e.g. --sizes 8500,100000 --calls 50.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${GRANTMATCH_BENCH_PYTHON:-}
if [[ -z "$PY" ]]; then
  if python3 -c 'import numpy' 2>/dev/null; then
    PY=python3
  else
    if [[ ! -x target/bench-venv/bin/python ]]; then
      python3 -m venv target/bench-venv
      target/bench-venv/bin/pip install --quiet -r benches/requirements.txt
    fi
    PY=target/bench-venv/bin/python
  fi
fi
exec "$PY" benches/ranking_vs_numpy.py "$@"
