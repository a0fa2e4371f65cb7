# `make demo` and `make test` are all a fresh machine needs. Setup is idempotent: the stamp is
# newer than every source it was built from, so a second run does nothing.

VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.setup-stamp
RUST_SOURCES := Cargo.toml Cargo.lock $(shell find crates -name '*.rs' -o -name Cargo.toml)

.PHONY: setup demo test test-stress rust-test python-test lint fmt bench browser tshark clean

setup: $(STAMP)

$(VENV)/bin/maturin:
	@echo "setup: creating $(VENV) (the first time also builds the Rust extension: minutes)"
	@python3 -m venv $(VENV)
	@$(VENV)/bin/pip install --quiet --upgrade pip
	@$(VENV)/bin/pip install --quiet 'maturin>=1.16,<2'

# Installs the package's deps (quietly, from pyproject.toml), then builds the extension in
# release mode and installs the package (editable); the build's log is shown only if it fails.
$(STAMP): $(VENV)/bin/maturin pyproject.toml $(RUST_SOURCES)
	@echo "setup: installing dependencies and building the extension (log: $(VENV)/setup.log)"
	@$(PY) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
		print("\n".join(p["dependencies"] + p["optional-dependencies"]["dev"]))' \
		> $(VENV)/requirements.txt
	@$(VENV)/bin/pip install --quiet -r $(VENV)/requirements.txt
	@VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin develop --release --extras dev \
		> $(VENV)/setup.log 2>&1 || { cat $(VENV)/setup.log; exit 1; }
	@$(PY) -c 'import slowstart._core'
	@touch $@

demo: setup
	$(VENV)/bin/slowstart reproduce floyd
	$(VENV)/bin/slowstart report out/results.duckdb --out out/report.html

# Debian's chromium, for the report's browser test (tests/test_report.py skips without it).
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
		>/dev/null; } || echo "chromium not installed: the report's browser test will skip"

# Debian's tshark, for the capture test (tests/test_exports.py skips without it). Its package asks
# whether non-root users may capture; the answer is preset (no), so nothing prompts.
tshark:
	@command -v tshark >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& apt-get update -qq \
		&& echo "wireshark-common wireshark-common/install-setuid boolean false" \
			| debconf-set-selections \
		&& DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null; } \
		|| echo "tshark not installed: the capture test will skip"

test: setup browser tshark rust-test lint python-test

# The Python suite 5 times alone, then 3 times beside a CPU-bound process on one core and a
# `slowstart real` transfer; every failure by test name (tests/stress.py; logs in out/stress).
# Not part of `make test`. E.g. make test-stress STRESS="--runs 2 --loaded 2 tests/test_real.py",
# or STRESS=--whole for all of `make test`.
STRESS ?=
test-stress: setup browser tshark
	$(PY) tests/stress.py $(STRESS)

rust-test:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo test --workspace --exclude slowstart-py

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

python-test: setup
	$(VENV)/bin/pytest

fmt: setup
	cargo fmt --all
	$(VENV)/bin/ruff format .

bench: setup
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) target out
