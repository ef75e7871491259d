# grantmatch — `make serve` runs the service on its embedded defaults, `make test` runs every test.
CARGO ?= cargo
BIN := target/release/grantmatch

.PHONY: serve test build test-rust lint fixtures clean

build:
	$(CARGO) build --release --locked -p grantmatch-cli

serve: build
	scripts/serve.sh

test: test-rust

test-rust:
	$(CARGO) test --workspace --locked

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

# Regenerates fixtures/catalogue from fixtures/source (committed; byte-identical output).
fixtures:
	python3 scripts/build_fixtures.py

clean:
	rm -rf target data
