#!/usr/bin/env bash
# HTTP load test of the real server (see BENCHMARKS.md): starts `grantmatch serve` on a
# copy of an imported catalogue with rate limits switched off, drives it with wrk over
# keep-alive and prints median/p99 latency and throughput per endpoint:
#
#   GET  /api/v1/grants/:id                 (rotating over every grant id)
#   GET  /api/v1/grants?q=Digitalisierung
#   POST /api/v1/matching  (synchronous)    a realistic ~100-word profile, new text each
#                                           request (one connection: latency), and the
#                                           same profile repeated (query vectors cached)
#
# plus the start-up figures: re-import of the unchanged catalogue, server start until
# /health answers, until the model is loaded.
#
# and, for the matching target, the bare model time of the same profile measured right
# after in the same session (criterion: match_end_to_end/model_only).
#
# Usage: scripts/loadtest.sh [--data DIR] [--duration SECS] [--connections N] [--port P]
#                            [--no-model-bench]
#   --data DIR   a data directory with fixtures/catalogue imported WITH embeddings (it is
#                copied, never modified); default: import into a fresh one (the model
#                embeds 1,434 grants once, about two minutes on two cores)
# Env: GRANTMATCH_BIN (default target/release/grantmatch, built when missing),
#      GRANTMATCH_MODEL_DIR / GRANTMATCH_MODEL_VARIANT as for the CLI.
# Needs wrk (Debian: apt-get install -y wrk) and python3 (no packages).
# Results: target/bench-results/loadtest.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
HERE=$ROOT/scripts/loadtest

DATA_SRC=""
DURATION=10
CONNECTIONS=32
PORT=18080
MODEL_BENCH=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data) DATA_SRC=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --connections) CONNECTIONS=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    --no-model-bench) MODEL_BENCH=0; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "loadtest.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

command -v wrk >/dev/null || { echo "loadtest.sh: wrk is missing (apt-get install -y wrk)" >&2; exit 1; }
BIN=${GRANTMATCH_BIN:-${CARGO_TARGET_DIR:-target}/release/grantmatch}
if [[ ! -x "$BIN" ]]; then
  cargo build --release --locked -p grantmatch-cli
fi
BIN=$(realpath "$BIN")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/grantmatch-loadtest.XXXXXX")
DATA=$WORK/data
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
export GRANTMATCH_DATA_DIR=$DATA GRANTMATCH_LOG=warn

now() { date +%s.%N; }
since() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 3))" "$1" "$(now)"; }

mkdir -p "$DATA"
if [[ -n "$DATA_SRC" ]]; then
  [[ -f "$DATA_SRC/catalogue/CURRENT" ]] || { echo "loadtest.sh: $DATA_SRC has no imported catalogue" >&2; exit 1; }
  cp -r "$DATA_SRC/catalogue" "$DATA/"
else
  echo "importing fixtures/catalogue with embeddings (first time: the model embeds every grant)" >&2
  "$BIN" import fixtures/catalogue
fi
snap=$(cat "$DATA/catalogue/CURRENT")
[[ -f "$DATA/catalogue/$snap/embeddings.json" ]] || { echo "loadtest.sh: the catalogue has no embeddings" >&2; exit 1; }

echo "re-importing the unchanged catalogue" >&2
t=$(now)
"$BIN" import fixtures/catalogue 2> "$WORK/import.log"
IMPORT_S=$(since "$t")
grep -E "embeddings:" "$WORK/import.log" >&2 || true
snap=$(cat "$DATA/catalogue/CURRENT")

"$BIN" partner create --name loadtest --tier enterprise --contact-email loadtest@example.org >/dev/null
TOKEN=$("$BIN" token create --partner loadtest --scopes grants:read,matching:use 2>/dev/null)
export LOADTEST_TOKEN=$TOKEN

SERVE_ARGS=(serve --addr "127.0.0.1:$PORT")
if "$BIN" serve --help | grep -q -- "--no-rate-limits"; then
  SERVE_ARGS+=(--no-rate-limits)
  RATE_LIMITS="off (--no-rate-limits)"
else
  RATE_LIMITS="not configurable in this build (none applied)"
fi
BASE="http://127.0.0.1:$PORT"
t=$(now)
"$BIN" "${SERVE_ARGS[@]}" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
until curl -sf "$BASE/health" >/dev/null; do
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
  sleep 0.02
done
START_S=$(since "$t")

# The matching body: fixtures/eval profile p01 (97 words) with a placeholder that the
# wrk script replaces by a counter ("Anfrage Nr. __N__.").
python3 - "$WORK/body.json" <<'PY'
import json, sys
p = json.load(open("fixtures/eval/profiles.json"))[0]["request"]
p["organization_profile"]["description"] += " Anfrage Nr. __N__."
open(sys.argv[1], "w").write(json.dumps(p, ensure_ascii=False))
PY
until [[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
      -H 'Content-Type: application/json' --data-binary @"$WORK/body.json" "$BASE/api/v1/matching")" == 200 ]]; do
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
  sleep 0.1
done
MODEL_S=$(since "$t")

# Every grant id, as paths for GET /grants/:id.
python3 - "$DATA/catalogue/$snap/grants.jsonl" "$WORK/grant-paths.txt" <<'PY'
import json, sys
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        out.write("/api/v1/grants/%s\n" % json.loads(line)["id"])
PY

results=()
run() { # name, wrk args...
  local name=$1; shift
  echo "wrk: $name" >&2
  local line
  line=$(wrk --latency "$@" | grep '^{' | tail -1)
  [[ -n "$line" ]] || { echo "loadtest.sh: no result for $name" >&2; exit 1; }
  results+=("\"$name\": $line")
}
WRK_THREADS=2
LOADTEST_PATHS=$WORK/grant-paths.txt run get_grant_by_id -t$WRK_THREADS -c"$CONNECTIONS" \
  -d"${DURATION}s" -s "$HERE/get.lua" "$BASE/"
run search_q_digitalisierung -t$WRK_THREADS -c"$CONNECTIONS" -d"${DURATION}s" -s "$HERE/get.lua" \
  "$BASE/api/v1/grants?q=Digitalisierung"
LOADTEST_BODY=$WORK/body.json LOADTEST_UNSEEN=1 LOADTEST_RUN=$$ run matching_unseen_sequential \
  -t1 -c1 -d"$((DURATION * 2))s" --timeout 30s -s "$HERE/matching.lua" "$BASE/api/v1/matching"
LOADTEST_BODY=$WORK/body.json LOADTEST_UNSEEN=1 LOADTEST_RUN=$$-c4 run matching_unseen_4_connections \
  -t1 -c4 -d"$((DURATION * 2))s" --timeout 30s -s "$HERE/matching.lua" "$BASE/api/v1/matching"
LOADTEST_BODY=$WORK/body.json LOADTEST_UNSEEN=0 run matching_repeated_sequential \
  -t1 -c1 -d"${DURATION}s" -s "$HERE/matching.lua" "$BASE/api/v1/matching"

kill "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""

# The bare model time for the same profile (two model calls: query text, keywords).
MODEL_MS=null
if [[ $MODEL_BENCH == 1 ]] && command -v cargo >/dev/null; then
  echo "criterion: match_end_to_end/model_only (bare model time of the same profile)" >&2
  cargo bench --locked -p grantmatch-benches --bench matching -- --quick 'match_end_to_end/model_only' >/dev/null 2>&1 || true
  MODEL_MS=$(python3 -c '
import json, sys
try:
    print(json.load(open(sys.argv[1]))["median"]["point_estimate"] / 1e6)
except Exception:
    print("null")' target/criterion/match_end_to_end/model_only/1434/new/estimates.json)
fi

mkdir -p target/bench-results
OUT=target/bench-results/loadtest.json
{
  printf '{\n "meta": {"when": "%s", "cpus": %s, "load_average": "%s", "duration_s": %s, "connections": %s, "rate_limits": "%s", "binary": "%s"},\n' \
    "$(date -u +%FT%TZ)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$DURATION" "$CONNECTIONS" "$RATE_LIMITS" "$BIN"
  printf ' "startup": {"import_unchanged_s": %s, "server_health_s": %s, "server_model_ready_s": %s},\n' \
    "$IMPORT_S" "$START_S" "$MODEL_S"
  printf ' "model_only_median_ms": %s,\n' "$MODEL_MS"
  printf ' "wrk": {\n  %s\n }\n}\n' "$(printf '%s\n' "${results[@]}" | paste -sd, | sed 's/,"/,\n  "/g')"
} > "$OUT"
python3 - "$OUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m, s = r["meta"], r["startup"]
print(f"\nload test, {m['when']}, {m['cpus']} CPUs, load average {m['load_average']}, rate limits {m['rate_limits']}")
print(f"re-import of the unchanged catalogue: {s['import_unchanged_s']} s; server start: /health after "
      f"{s['server_health_s']} s, model loaded after {s['server_model_ready_s']} s")
print("| endpoint | connections | requests/s | p50 ms | p90 ms | p99 ms | errors | non-2xx |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
conns = {"matching_unseen_sequential": 1, "matching_unseen_4_connections": 4, "matching_repeated_sequential": 1}
for name, w in r["wrk"].items():
    print(f"| {name} | {conns.get(name, m['connections'])} | {w['rps']:.0f} | {w['p50_ms']:.3g} | {w['p90_ms']:.3g} "
          f"| {w['p99_ms']:.3g} | {w['errors']} | {w['non_2xx']} |")
model = r.get("model_only_median_ms")
if model:
    w = r["wrk"]["matching_unseen_sequential"]
    print(f"\nPOST /matching, new 97-word profile: p50 {w['p50_ms']:.1f} ms = {w['p50_ms'] / model:.2f} x the bare "
          f"model time of that profile ({model:.1f} ms, criterion match_end_to_end/model_only, same session)")
print(f"\nwritten to {sys.argv[1]}")
PY
