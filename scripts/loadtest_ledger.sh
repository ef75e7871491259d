#!/usr/bin/env bash
# Load test of the usage ledger: drives the real server (release build) at and above
# its rate limits with `oha`, stops it with SIGTERM and checks that no ledger row was
# lost: the rows of the load partner (`grantmatch usage --partner load --period day`)
# must equal the responses the client saw, in total and split into successful (2xx)
# and failed (4xx/5xx) ones. Prints the figures; exits non-zero on any mismatch.
#
#   scripts/loadtest_ledger.sh            # all phases (about a minute after the build)
#   LOADTEST_SCALE=0.2 scripts/...        # fewer requests
#
# Only 127.0.0.1 is targeted; every oha run is bounded by a request count (-n) and by
# `timeout`. Phases, all by the partner `load`:
#   1. matching   POST /matching, 10/s per partner (real matching when the embedding
#                 model is installed, otherwise 503 answers — still matching requests)
#   2. token      one token far above 100 requests/min
#   3. partner    ten tokens at once, above 1,000 requests/min for the partner
#   4. volume     a second server run with --no-rate-limits: a burst of buffered rows,
#                 SIGTERM right after the last answer
# Needs: cargo, curl, jq, and oha (installed with `cargo install oha --locked` when
# missing).
set -euo pipefail
cd "$(dirname "$0")/.."

SCALE=${LOADTEST_SCALE:-1}
n() { awk -v n="$1" -v s="$SCALE" 'BEGIN { v = int(n * s); if (v < 1) v = 1; print v }'; }
OHA_TIMEOUT=${LOADTEST_OHA_TIMEOUT:-300}

for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "loadtest: $tool is missing (apt-get install -y $tool)" >&2; exit 2; }
done
if ! command -v oha >/dev/null; then
  echo "loadtest: installing oha (cargo install oha --locked)" >&2
  cargo install oha --locked >&2
fi

echo "loadtest: building the release binary" >&2
cargo build --release --locked -p grantmatch-cli >&2
BIN=${CARGO_TARGET_DIR:-$PWD/target}/release/grantmatch

WORK=$(mktemp -d "${TMPDIR:-/tmp}/grantmatch-loadtest.XXXXXX")
DATA=$WORK/data
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [ -z "${LOADTEST_KEEP:-}" ]; then rm -rf "$WORK"; else echo "loadtest: kept $WORK" >&2; fi
}
trap cleanup EXIT

# A clean environment for the binary (env execs it: a background job's $! is its pid).
GM=(env -u GRANTMATCH_ADDR -u GRANTMATCH_NO_RATE_LIMITS -u GRANTMATCH_RATE_LIMIT_PER_TOKEN
    -u GRANTMATCH_RATE_LIMIT_PER_PARTNER -u GRANTMATCH_RATE_LIMIT_MATCHING
    -u GRANTMATCH_QUOTA_QUARTER_SHARE -u GRANTMATCH_SMTP_URL -u GRANTMATCH_LOG
    GRANTMATCH_DATA_DIR="$DATA" "$BIN")
gm() { "${GM[@]}" "$@"; }

# -- data: the tiny catalogue, with embeddings when the model is installed
MODEL_DIR=${GRANTMATCH_MODEL_DIR:-$HOME/.cache/grantmatch/model}
if [ -f "$MODEL_DIR/model.onnx" ] || [ -f "$MODEL_DIR/model_int8.onnx" ]; then
  MATCHING=real
  gm import fixtures/test-catalogues/tiny >&2
else
  MATCHING=unavailable
  gm import --skip-embeddings fixtures/test-catalogues/tiny >&2
fi
gm partner create --name load --tier standard --contact-email load@example.org >/dev/null
gm partner create --name probe --tier standard >/dev/null
PROBE=$(gm token create --partner probe --scopes grants:read,matching:use)
TOKENS=()
for _ in $(seq 1 14); do
  TOKENS+=("$(gm token create --partner load --scopes grants:read,matching:use,usage:read)")
done

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
  || echo $((20000 + RANDOM % 20000)))
BASE=http://127.0.0.1:$PORT
LOG=$WORK/server.log

start_server() {
  "${GM[@]}" serve --addr "127.0.0.1:$PORT" "$@" 2>>"$LOG" >/dev/null &
  SERVER_PID=$!
  for _ in $(seq 1 200); do
    if curl -fsS "$BASE/health" >/dev/null 2>&1; then return 0; fi
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "loadtest: server exited:" >&2; cat "$LOG" >&2; exit 1; }
    sleep 0.1
  done
  echo "loadtest: server not ready" >&2; cat "$LOG" >&2; exit 1
}

stop_server() {
  kill -TERM "$SERVER_PID"
  local rc=0
  for _ in $(seq 1 300); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "loadtest: server did not stop within 30 s after SIGTERM" >&2; exit 1
  fi
  wait "$SERVER_PID" || rc=$?
  SERVER_PID=
  if [ "$rc" -ne 0 ]; then echo "loadtest: server exited with $rc after SIGTERM" >&2; tail -20 "$LOG" >&2; exit 1; fi
}

# Responses seen by the client, by status (a file of "status count" lines per oha run).
RESULTS=$WORK/results
mkdir -p "$RESULTS"
RUN=0

# oha NAME TOKEN N C [oha options...] URL — one bounded run; its status counts are kept.
load() {
  local name=$1 token=$2 count=$3 conns=$4
  shift 4
  RUN=$((RUN + 1))
  local out=$RESULTS/$RUN-$name.json
  if ! timeout "$OHA_TIMEOUT" oha --no-tui --output-format json -n "$count" -c "$conns" \
      -H "Authorization: Bearer $token" "$@" >"$out"; then
    echo "loadtest: oha run $name failed or timed out" >&2; exit 1
  fi
  # A client-side error leaves it open whether the server answered: not comparable.
  local errors
  errors=$(jq '[.errorDistribution // {} | to_entries[].value] | add // 0' "$out")
  if [ "$errors" -ne 0 ]; then
    echo "loadtest: oha run $name had client errors: $(jq -c .errorDistribution "$out")" >&2; exit 1
  fi
  jq -r '.statusCodeDistribution | to_entries[] | "\(.key) \(.value)"' "$out" >"$RESULTS/$RUN-$name.status"
  printf 'loadtest: %-16s n=%-6s c=%-3s %s\n' "$name" "$count" "$conns" \
    "$(jq -c '.statusCodeDistribution' "$out")" >&2
}

DAY_START=$(date -u +%F)
start_server

# -- 1. matching at and above 10/s per partner (identical profile: cached embedding)
BODY='{"organization_id":"load-org","organization_profile":{"description":"Gemeinnütziger Verein für Digitalisierung und KI in kleinen Unternehmen."}}'
if [ "$MATCHING" = real ]; then
  # Wait for the model (probe partner: its rows are not counted), warming the cache.
  for i in $(seq 1 600); do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $PROBE" \
      -H 'Content-Type: application/json' -d "$BODY" "$BASE/api/v1/matching" || true)
    [ "$code" = 200 ] && break
    [ "$i" = 600 ] && { echo "loadtest: matching not ready after 60 s ($code)" >&2; tail -20 "$LOG" >&2; exit 1; }
    sleep 0.1
  done
fi
load matching "${TOKENS[0]}" "$(n 300)" 10 -m POST -T application/json -d "$BODY" "$BASE/api/v1/matching"
load matching-2tok "${TOKENS[1]}" "$(n 100)" 5 -m POST -T application/json -d "$BODY" "$BASE/api/v1/matching" &
P1=$!
load matching-3tok "${TOKENS[2]}" "$(n 100)" 5 -m POST -T application/json -d "$BODY" "$BASE/api/v1/matching"
wait "$P1"

# -- 2. one token far above 100/min (listings and 404s)
load token "${TOKENS[3]}" "$(n 1000)" 20 "$BASE/api/v1/grants?per_page=5"
load token-404 "${TOKENS[3]}" "$(n 200)" 10 "$BASE/api/v1/grants/00000000-0000-0000-0000-000000000000"

# -- 3. ten tokens at once above 1,000/min for the partner
PIDS=()
for i in $(seq 4 13); do
  load "partner-t$i" "${TOKENS[$i]}" "$(n 150)" 4 "$BASE/api/v1/grant_areas" &
  PIDS+=($!)
done
for p in "${PIDS[@]}"; do wait "$p"; done
load partner-usage "${TOKENS[0]}" "$(n 50)" 5 "$BASE/api/v1/usage/quota"

stop_server

# -- 4. volume without rate limits: buffered rows, SIGTERM right after the last answer
start_server --no-rate-limits
load volume-list "${TOKENS[4]}" "$(n 20000)" 50 "$BASE/api/v1/grants?per_page=2"
load volume-404 "${TOKENS[5]}" "$(n 5000)" 50 "$BASE/api/v1/regions/nope"
stop_server

# -- compare
DAY_END=$(date -u +%F)
PERIOD=day
[ "$DAY_START" = "$DAY_END" ] || PERIOD=quarter  # the run crossed midnight (UTC)
CLIENT_TOTAL=$(cat "$RESULTS"/*.status | awk '{ s += $2 } END { print s + 0 }')
CLIENT_OK=$(cat "$RESULTS"/*.status | awk '$1 >= 200 && $1 < 300 { s += $2 } END { print s + 0 }')
CLIENT_FAILED=$(cat "$RESULTS"/*.status | awk '$1 >= 400 { s += $2 } END { print s + 0 }')
BY_STATUS=$(cat "$RESULTS"/*.status | awk '{ s[$1] += $2 } END { for (k in s) printf "%s=%s ", k, s[k] }')

USAGE=$(gm usage --partner load --period "$PERIOD")
LEDGER_TOTAL=$(jq '.stats.total_requests' <<<"$USAGE")
LEDGER_OK=$(jq '.stats.successful_requests' <<<"$USAGE")
LEDGER_FAILED=$(jq '.stats.failed_requests' <<<"$USAGE")
FLUSHED=$(grep -o 'usage ledger flushed.*' "$LOG" | sed 's/\x1b\[[0-9;]*m//g' | tr '\n' ';')

echo "matching:            $MATCHING"
echo "client responses:    $CLIENT_TOTAL (2xx $CLIENT_OK, failed $CLIENT_FAILED; by status: $BY_STATUS)"
echo "ledger rows:         $LEDGER_TOTAL (2xx $LEDGER_OK, failed $LEDGER_FAILED; grantmatch usage --period $PERIOD)"
echo "by endpoint:         $(jq -c '.stats.by_endpoint' <<<"$USAGE")"
echo "shutdown flushes:    $FLUSHED"
if [ "$CLIENT_TOTAL" -eq "$LEDGER_TOTAL" ] && [ "$CLIENT_OK" -eq "$LEDGER_OK" ] \
   && [ "$CLIENT_FAILED" -eq "$LEDGER_FAILED" ]; then
  echo "OK: no lost ledger rows"
else
  echo "MISMATCH: the ledger does not hold every response" >&2
  exit 1
fi
