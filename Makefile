# `make demo` and `make test` are all a fresh machine needs. Setup is idempotent: the stamp is
# newer than every source it was built from, so a second run does nothing.

VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.setup-stamp
RUST_SOURCES := Cargo.toml Cargo.lock $(shell find crates -name '*.rs' -o -name Cargo.toml)

.PHONY: setup demo test rust-test python-test lint fmt bench clean

setup: $(STAMP)

$(VENV)/bin/maturin:
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet 'maturin>=1.16,<2'

# Builds the extension in release mode and installs the package (editable) with its deps.
$(STAMP): $(VENV)/bin/maturin pyproject.toml $(RUST_SOURCES)
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin develop --release --extras dev
	touch $@

demo: setup
	$(VENV)/bin/slowstart reproduce floyd

test: setup rust-test lint python-test

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
