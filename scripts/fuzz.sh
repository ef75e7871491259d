#!/usr/bin/env bash
# Conformance fuzzing: schemathesis against the live server built from this checkout.
#
# Builds the release binary, imports the tiny test catalogue (with embeddings, so
# matching works) into a temporary data directory, creates a partner and a token,
# starts `grantmatch serve --no-rate-limits` on a free 127.0.0.1 port, waits until
# matching answers, and runs schemathesis (pinned, in a venv under
# ~/.cache/grantmatch/) on /api/v1/openapi.json with the checks
# not_a_server_error, response_schema_conformance and status_code_conformance.
# Any finding exits non-zero. The server is always stopped.
#
# Bounds (environment): FUZZ_MAX_EXAMPLES (default 30 per operation), FUZZ_TIME
# (default 420 s for the schemathesis run, a hard limit), FUZZ_SEED (default fixed,
# so CI runs are reproducible; set FUZZ_SEED=random for a new seed).
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
MAX_EXAMPLES=${FUZZ_MAX_EXAMPLES:-30}
MAX_TIME=${FUZZ_TIME:-420}
SEED=${FUZZ_SEED:-20261122}
BIN=${GRANTMATCH_BIN:-${CARGO_TARGET_DIR:-target}/release/grantmatch}
VENV=${GRANTMATCH_CACHE:-$HOME/.cache/grantmatch}/schemathesis-$SCHEMATHESIS_VERSION

log() { echo "fuzz: $*" >&2; }

log "building the release binary"
cargo build --release --locked -p grantmatch-cli >&2
log "model assets"
scripts/model/fetch.sh >&2

if [ ! -x "$VENV/bin/schemathesis" ]; then
  log "installing schemathesis==$SCHEMATHESIS_VERSION into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

mkdir -p target
WORK=$(mktemp -d "$PWD/target/fuzz.XXXXXX")
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

export GRANTMATCH_DATA_DIR="$WORK/data"
mkdir -p "$GRANTMATCH_DATA_DIR"
log "importing fixtures/test-catalogues/tiny into $GRANTMATCH_DATA_DIR"
"$BIN" import fixtures/test-catalogues/tiny >&2
"$BIN" partner create --name fuzz --tier standard --contact-email fuzz@example.org >/dev/null
TOKEN=$("$BIN" token create --partner fuzz --scopes grants:read,matching:use,usage:read 2>/dev/null)

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
"$BIN" serve --addr "127.0.0.1:$PORT" --no-rate-limits >"$WORK/server.log" 2>&1 &
SERVER_PID=$!

# The API answers at once; matching answers 503 until the model is loaded.
ready=
for _ in $(seq 1 240); do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    log "the server exited:"; cat "$WORK/server.log" >&2; exit 1
  fi
  code=$(curl -s -o "$WORK/matching.json" -w '%{http_code}' -X POST "$BASE/api/v1/matching" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    --data '{"organization_id": "fuzz", "organization_profile": {"description": "Verein für digitale Bildung"}}' || true)
  if [ "$code" = 200 ]; then ready=1; break; fi
  sleep 0.5
done
if [ -z "$ready" ]; then
  log "matching never became ready (last status $code):"; cat "$WORK/server.log" >&2; exit 1
fi
log "server ready on $BASE (pid $SERVER_PID)"

# Real identifiers for the path parameters (half of the generated cases use one, so
# the detail endpoints answer 200 and not only 404): records of the tiny catalogue by
# UUID and slug, and the matching requests made above.
curl -s -o /dev/null -X POST "$BASE/api/v1/matching" -H "Authorization: Bearer $TOKEN" \
  -H 'Content-Type: application/json' -H 'Prefer: respond-async' \
  --data '{"organization_id": "fuzz-async", "organization_profile": {"description": "KMU Digitalisierung"}}'
python3 - "$WORK/schemathesis.toml" "$WORK/matching.json" <<'PY'
import json, sys
out, matching = sys.argv[1], sys.argv[2]
tiny = "fixtures/test-catalogues/tiny"
def ids(file):
    rows = [json.loads(l) for l in open(f"{tiny}/{file}") if l.strip()]
    return [r["id"] for r in rows][:6] + [r["slug"] for r in rows][:6]
dicts = {
    "grant_ids": ("getGrant", ids("grants.jsonl")),
    "provider_ids": ("getGrantProvider", ids("grant_providers.jsonl")),
    "region_ids": ("getRegion", ids("regions.jsonl")),
    "area_ids": ("getGrantArea", ids("grant_areas.jsonl")),
    "entity_ids": ("getEligibleEntity", ids("eligible_entities.jsonl")),
    "group_ids": ("getTargetGroup", ids("target_groups.jsonl")),
}
mid = json.load(open(matching))["matching_request_id"]
with open(out, "w") as f:
    for name, (_, values) in dicts.items():
        f.write(f"[dictionaries.{name}]\nvalues = {json.dumps(values)}\n\n")
    f.write(f"[dictionaries.matching_ids]\nvalues = {json.dumps([mid])}\n\n")
    bindings = [(op, name) for name, (op, _) in dicts.items()]
    bindings += [("getMatching", "matching_ids"), ("getMatchingResults", "matching_ids")]
    for op, name in bindings:
        f.write(f'[[operations]]\ninclude-operation-id = "{op}"\n'
                f'parameters = {{ "path.id" = {{ dictionary = "{name}", probability = 0.5 }} }}\n\n')
PY

seed_args=()
if [ "$SEED" != random ]; then seed_args=(--seed "$SEED"); fi
status=0
# Run inside $WORK: schemathesis keeps a `.schemathesis/` cache in the working directory.
(cd "$WORK" && timeout --signal=INT --kill-after=30 "$MAX_TIME" \
  "$VENV/bin/schemathesis" --config-file "$WORK/schemathesis.toml" run "$BASE/api/v1/openapi.json" \
    --header "Authorization: Bearer $TOKEN" \
    --checks not_a_server_error,response_schema_conformance,status_code_conformance \
    --phases examples,coverage,fuzzing \
    --max-examples "$MAX_EXAMPLES" \
    --max-redirects 0 \
    --request-timeout 60 \
    --workers 1 \
    --generation-database none \
    --no-color \
    "${seed_args[@]}") || status=$?

if grep -q "panicked" "$WORK/server.log"; then
  log "the server log has a panic:"; grep -n -A3 "panicked" "$WORK/server.log" >&2; status=1
fi
if [ "$status" -eq 124 ] || [ "$status" -eq 130 ]; then
  log "schemathesis did not finish within ${MAX_TIME}s"
fi
if [ "$status" -ne 0 ]; then
  log "FAILED (exit $status); server log tail:"; tail -n 40 "$WORK/server.log" >&2
  exit "$status"
fi
log "no findings"
