#!/usr/bin/env bash
# `make serve`: import the shipped catalogue, make sure a demo partner with a token and a
# dashboard user exists, print the token and the user's one-time set-password link,
# and serve on $GRANTMATCH_ADDR (default 127.0.0.1:8080).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${GRANTMATCH_BIN:-${CARGO_TARGET_DIR:-target}/release/grantmatch}
export GRANTMATCH_DATA_DIR=${GRANTMATCH_DATA_DIR:-./data}
mkdir -p "$GRANTMATCH_DATA_DIR"
"$BIN" import fixtures/catalogue
token_file="$GRANTMATCH_DATA_DIR/demo-token"
if ! "$BIN" partner list | cut -f2 | grep -qx demo; then
  "$BIN" partner create --name demo --tier standard --contact-email demo@example.org >/dev/null
  rm -f "$token_file"
fi
if [ ! -s "$token_file" ]; then
  "$BIN" token create --partner demo --scopes grants:read,matching:use,usage:read > "$token_file"
fi
echo "demo token (partner 'demo'): $(cat "$token_file")"
# The demo partner's dashboard user. While it has no password, every start issues a fresh
# one-time link (the old one may have expired); once the password is set, only the address.
if "$BIN" partner user list --partner demo | grep -q $'\tdemo@example.org\tinvited\t'; then
  "$BIN" partner user remove --partner demo --email demo@example.org >/dev/null 2>&1
fi
if ! "$BIN" partner user list --partner demo | cut -f2 | grep -qx demo@example.org; then
  link=$("$BIN" partner user add --partner demo --email demo@example.org 2>/dev/null)
  echo "dashboard: set the password of demo@example.org (one-time link, valid 24 h): http://${GRANTMATCH_ADDR:-127.0.0.1:8080}$link"
else
  echo "dashboard: http://${GRANTMATCH_ADDR:-127.0.0.1:8080}/dashboard (demo@example.org)"
fi
echo "try: curl -H \"Authorization: Bearer \$(cat $token_file)\" 'http://${GRANTMATCH_ADDR:-127.0.0.1:8080}/api/v1/grants?q=Digitalisierung'"
exec "$BIN" serve
