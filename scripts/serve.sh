#!/usr/bin/env bash
# `make serve`: import the shipped catalogue, make sure a demo partner with a token
# exists, print the token and serve on $GRANTMATCH_ADDR (default 127.0.0.1:8080).
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
echo "try: curl -H \"Authorization: Bearer \$(cat $token_file)\" 'http://${GRANTMATCH_ADDR:-127.0.0.1:8080}/api/v1/grants?q=Digitalisierung'"
exec "$BIN" serve
