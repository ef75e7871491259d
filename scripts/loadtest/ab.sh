#!/usr/bin/env bash
# Side-by-side A/B of the two cheap reads (GET /grants/:id over every id, GET /grants?q=)
# for two grantmatch binaries on a noisy machine: both servers run at once, each on its
# own copy of the same imported data directory, and wrk alternates between them (order
# swapped every round), so that load from other tenants falls on both alike.
#
# Usage: scripts/loadtest/ab.sh BEFORE_BIN AFTER_BIN DATA_DIR [ROUNDS] [SECONDS]
#   DATA_DIR  a data directory with an imported catalogue (copied, never modified)
# AB_DATABASE_URL_BEFORE / AB_DATABASE_URL_AFTER (optional): the store of that side
# (e.g. a postgres:// URL of an empty database each); unset: the copy's SQLite file.
# Needs wrk and python3. Prints one line per round and binary (requests/s).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
declare -A BIN=([before]=$(realpath "$1") [after]=$(realpath "$2")) PORT=([before]=18201 [after]=18202) TOKEN PIDS
SRC=$3; ROUNDS=${4:-6}; DUR=${5:-5}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/grantmatch-ab.XXXXXX")
trap 'kill ${PIDS[before]:-} ${PIDS[after]:-} 2>/dev/null || true; rm -rf "$WORK"' EXIT
declare -A DBURL=([before]=${AB_DATABASE_URL_BEFORE:-} [after]=${AB_DATABASE_URL_AFTER:-})
for v in before after; do
  D=$WORK/$v; mkdir -p "$D"; cp -r "$SRC/catalogue" "$D/"
  export GRANTMATCH_DATABASE_URL=${DBURL[$v]}
  [ -n "$GRANTMATCH_DATABASE_URL" ] || unset GRANTMATCH_DATABASE_URL
  GRANTMATCH_DATA_DIR=$D "${BIN[$v]}" partner create --name ab --tier enterprise >/dev/null
  TOKEN[$v]=$(GRANTMATCH_DATA_DIR=$D "${BIN[$v]}" token create --partner ab --scopes grants:read 2>/dev/null)
  GRANTMATCH_DATA_DIR=$D GRANTMATCH_LOG=warn "${BIN[$v]}" serve --addr "127.0.0.1:${PORT[$v]}" --no-rate-limits > "$D/server.log" 2>&1 &
  PIDS[$v]=$!
done
unset GRANTMATCH_DATABASE_URL
python3 - "$SRC/catalogue/$(cat "$SRC/catalogue/CURRENT")/grants.jsonl" "$WORK/paths.txt" <<'PY'
import json, sys
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        out.write("/api/v1/grants/%s\n" % json.loads(line)["id"])
PY
sleep 25 # the model loads in the background at start; let it finish
rps() { grep '^{' | tail -1 | python3 -c 'import json, sys; print(round(json.load(sys.stdin)["rps"]))'; }
for r in $(seq "$ROUNDS"); do
  order="before after"; [[ $((r % 2)) == 0 ]] && order="after before"
  for v in $order; do
    base=http://127.0.0.1:${PORT[$v]}
    a=$(LOADTEST_TOKEN=${TOKEN[$v]} LOADTEST_PATHS=$WORK/paths.txt wrk -t2 -c32 -d"${DUR}s" -s "$HERE/get.lua" "$base/" | rps)
    b=$(LOADTEST_TOKEN=${TOKEN[$v]} wrk -t2 -c32 -d"${DUR}s" -s "$HERE/get.lua" "$base/api/v1/grants?q=Digitalisierung" | rps)
    echo "round $r $v $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg) get_grant_by_id $a search_q $b"
  done
done
