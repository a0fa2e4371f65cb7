# `make demo` and `make test` are all a fresh machine needs. Setup is idempotent: the stamp is
# newer than every source it was built from, so a second run does nothing. A stamp carries the
# time its build started, so a source edited during the build is rebuilt next time.

VENV := .venv
PY := $(VENV)/bin/python
# The extension's optional cargo features: EXTENSION_FEATURES=jit builds in wasmtime, the
# WebAssembly JIT that `make bench` measures and `make test` does not build (its build time:
# docs/performance.md, "Your own controller"). The stamp names the features installed.
EXTENSION_FEATURES ?=
STAMP := $(VENV)/.setup-stamp$(if $(EXTENSION_FEATURES),-$(EXTENSION_FEATURES))
RUST_SOURCES := Cargo.toml Cargo.lock $(shell find crates -name '*.rs' -o -name Cargo.toml)

.PHONY: setup demo wheel crates test test-stress test-faults test-explore rust-test python-test lint fmt bench browser node tshark programs ns2 \
	guests bpf web docs \
	figures clean

setup: $(STAMP)

# The WebAssembly guests the tests and benchmarks run (examples/: the built-ins as a guest,
# Reno alone as one, a faulty one, the template), built with the rustup target, which is added where missing.
WASM_TARGET := wasm32-unknown-unknown
GUEST_STAMP := target/$(WASM_TARGET)/release/.guests-stamp
GUEST_SOURCES := Cargo.lock $(shell find crates/slowstart-cc crates/slowstart-guest examples \
	-name '*.rs' -o -name Cargo.toml)

guests: $(GUEST_STAMP)

$(GUEST_STAMP): $(GUEST_SOURCES)
	@mkdir -p $(@D) && touch $@.started
	@rustup target list --installed 2>/dev/null | grep -qx $(WASM_TARGET) \
		|| rustup target add $(WASM_TARGET)
	cargo build --quiet --release --target $(WASM_TARGET) \
		-p builtin-guest -p reno-guest -p faulty-guest -p wasm-controller
	@mv $@.started $@

# The engine for the browser (crates/slowstart-web), which the docs' Playground runs: the same
# rustup target, its own profile `web` (Cargo.toml: fat LTO, no unwinding).
WEB_WASM := target/$(WASM_TARGET)/web/slowstart_web.wasm
WEB_SOURCES := Cargo.toml Cargo.lock $(shell find crates/slowstart-web crates/slowstart-sim \
	crates/slowstart-cc crates/slowstart-transport crates/slowstart-config crates/slowstart-link \
	crates/slowstart-apps -name '*.rs' -o -name Cargo.toml)

web: $(WEB_WASM)

$(WEB_WASM): $(WEB_SOURCES)
	@rustup target list --installed 2>/dev/null | grep -qx $(WASM_TARGET) \
		|| rustup target add $(WASM_TARGET)
	cargo build --quiet --profile web --target $(WASM_TARGET) -p slowstart-web
	@touch $@

$(VENV)/bin/maturin:
	@echo "setup: creating $(VENV) (the first time also builds the Rust extension: minutes)"
	@python3 -m venv $(VENV)
	@$(VENV)/bin/pip install --quiet --upgrade pip
	@$(VENV)/bin/pip install --quiet 'maturin>=1.16,<2'

# Installs the package's deps (quietly, from pyproject.toml), then builds the extension in
# release mode and installs the package (editable); the build's log is shown only if it fails.
$(STAMP): $(VENV)/bin/maturin pyproject.toml $(RUST_SOURCES)
	@echo "setup: installing dependencies and building the extension (log: $(VENV)/setup.log)"
	@touch $(VENV)/.setup-started
	@$(PY) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
		print("\n".join(p["dependencies"] + sum(p["optional-dependencies"].values(), [])))' \
		> $(VENV)/requirements.txt
	@$(VENV)/bin/pip install --quiet -r $(VENV)/requirements.txt
	@VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin develop --release \
		$(if $(EXTENSION_FEATURES),--features $(EXTENSION_FEATURES)) \
		> $(VENV)/setup.log 2>&1 || { cat $(VENV)/setup.log; exit 1; }
	@$(PY) -c 'import slowstart._core'
	@rm -f $(VENV)/.setup-stamp*
	@mv $(VENV)/.setup-started $@

# The wheel (abi3, Python 3.11+) and the sdist into $(DIST). The wheel has wasmtime built in
# (feature jit: a user's WebAssembly controller runs 1.6 times as fast as on wasmi, for 20
# minutes more of building here, once; docs/performance.md). WHEEL_FEATURES=$(EXTENSION_FEATURES)
# builds it from `make setup`'s release build instead, as tests/test_wheel.py does. The
# scenarios, the suite, the traces and the examples git tracks are copied into the wheel's data
# first (pyproject.toml, [tool.maturin]).
DIST ?= dist
WHEEL_FEATURES ?= jit
WHEEL_DATA := python/wheel-data/platlib/slowstart/_data
WHEEL_FOLDERS := scenarios suites traces examples/python examples/wasm-controller examples/bpf

wheel: setup
	@find $(WHEEL_DATA) -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +
	@git ls-files -z $(WHEEL_FOLDERS) | xargs -0 cp --parents -t $(WHEEL_DATA)
	$(VENV)/bin/maturin build --quiet --release --out $(DIST) \
		$(if $(WHEEL_FEATURES),--features $(WHEEL_FEATURES))
	$(VENV)/bin/maturin sdist --out $(DIST) >/dev/null

demo: setup
	$(VENV)/bin/slowstart reproduce floyd
	$(VENV)/bin/slowstart report out/results.duckdb --out out/report.html

# Debian's chromium, for the report's browser test (tests/test_report.py skips without it).
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
		>/dev/null; } || echo "chromium not installed: the report's browser test will skip"

# Debian's nodejs, for the check that the Playground's settings make the loader's configs
# (tests/test_playground.py skips without it).
node:
	@command -v node >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs \
		>/dev/null; } || echo "nodejs not installed: the Playground's settings test will skip"

# Debian's tshark, for the capture test (tests/test_exports.py skips without it). Its package asks
# whether non-root users may capture; the answer is preset (no), so nothing prompts.
tshark:
	@command -v tshark >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& apt-get update -qq \
		&& echo "wireshark-common wireshark-common/install-setuid boolean false" \
			| debconf-set-selections \
		&& DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null; } \
		|| echo "tshark not installed: the capture test will skip"

# Debian's ns2, for the check of what ns-2's agents send (tests/test_ns2_agents.py skips without
# it) and the ns-2 timing in `make bench`.
ns2:
	@command -v ns >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ns2 \
		>/dev/null; } || echo "ns2 not installed: the ns-2 agent tests will skip"

# Debian's ngtcp2 examples (gtlsserver, gtlsclient: QUIC with qlog) and curl, the program pairs
# the root-only tests run through the emulated path (tests/test_programs.py skips without them).
programs:
	@{ command -v gtlsserver && command -v gtlsclient && command -v curl; } >/dev/null \
		|| { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq \
		&& DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ngtcp2-server ngtcp2-client \
			curl >/dev/null; } \
		|| echo "ngtcp2-server, ngtcp2-client or curl not installed: the program-pair tests will skip"

# Debian's clang, libbpf-dev and bpftool, then the example BPF congestion controllers and the
# faulty ones (examples/bpf/Makefile: build/*.bpf.o against this kernel's BTF), which
# tests/test_bpf_examples.py checks and the simulator's eBPF tests run; those skip without them.
bpf:
	@{ command -v clang && command -v bpftool && test -r /usr/include/bpf/bpf_helpers.h; } \
		>/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
		&& apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang \
			libbpf-dev bpftool >/dev/null; } \
		|| echo "clang, libbpf-dev or bpftool not installed: the BPF examples will not build"
	@$(MAKE) --no-print-directory -C examples/bpf \
		|| echo "examples/bpf not built: the BPF example tests will skip"

test: setup guests web browser node tshark programs ns2 bpf rust-test lint docs python-test

# The Python suite 5 times alone, then 3 times beside a CPU-bound process on one core and a
# `slowstart real` transfer; every failure by test name (tests/stress.py; logs in out/stress).
# Not part of `make test`. E.g. make test-stress STRESS="--runs 2 --loaded 2 tests/test_real.py",
# or STRESS=--whole for all of `make test`.
STRESS ?=
test-stress: setup guests browser tshark programs
	$(PY) tests/stress.py $(STRESS)

# The fault-injection tests that take minutes or root (marked `faults`: tests/test_faults.py,
# tests/test_real.py): SIGKILL during store writes, a disk filling under the store, a read-only
# store, a Dask worker SIGKILLed, the emulator killed mid-run. Not part of `make test`; the
# figures each gave are in docs/testing.md.
test-faults: setup guests
	$(VENV)/bin/pytest -m faults -n 0 -rs

# The property tests (proptest, Hypothesis) with fresh random cases, EXPLORE times; each
# failure's minimal case is printed and saved (proptest-regressions/, .hypothesis/).
EXPLORE ?= 5
test-explore: setup guests
	for i in $$(seq $(EXPLORE)); do \
		PROPTEST_RNG_SEED=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ') PROPTEST_CASES=1024 \
			cargo test -q --workspace --exclude slowstart-py || exit 1; \
		HYPOTHESIS_PROFILE=explore $(VENV)/bin/pytest -q tests/test_loader_hypothesis.py \
			|| exit 1; \
	done

# Property tests draw from fixed seeds in `make test`, so a run fails only on a change (a new
# case a random seed finds is a bug to fix, not a reason for CI to fail at random). Fresh cases:
# `make test-explore` (docs/testing.md).
PROPTEST_RNG_SEED ?= 20261127
HYPOTHESIS_PROFILE ?= suite
export PROPTEST_RNG_SEED HYPOTHESIS_PROFILE

rust-test: guests web
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo test --workspace --exclude slowstart-py
	RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --quiet
	@$(MAKE) --no-print-directory crates

# The crates others depend on, as crates.io would take them: packaged and each built from its
# package alone, against the others packaged beside it (slowstart-quinn needs four more,
# docs/install.md), then put through the publish dry run together (its build is the one
# `cargo package` just made).
PUBLISHED := -p slowstart-cc -p slowstart-guest -p slowstart-transport -p slowstart-config \
	-p slowstart-wasm -p slowstart-bpf -p slowstart-quinn
# Cargo unpacks the packages of its local overlay registry under registry/src/-<hash> and
# reuses what it unpacked and built before, as if a published version could not change: a
# second `make test` in one folder would verify a crate against its dependencies as packaged the
# first time. So ours go first: their unpacked sources, and the builds made from them (those
# whose library names an overlay's path).
crates:
	rm -rf $${CARGO_HOME:-$$HOME/.cargo}/registry/src/-*/slowstart-*
	for lib in target/debug/deps/libslowstart_*.rlib; do \
		grep -qs "registry/src/-" "$$lib" || continue; \
		rm -rf "$$lib" target/debug/.fingerprint/$$(basename "$$lib" .rlib | sed 's/^lib//; s/_/-/g'); \
	done
	cargo package --quiet --allow-dirty $(PUBLISHED)
	cargo publish --quiet --dry-run --allow-dirty --no-verify $(PUBLISHED)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

python-test: setup guests
	$(VENV)/bin/pytest

fmt: setup
	cargo fmt --all
	$(VENV)/bin/ruff format .

# The documentation site (mkdocs.yml, docs/) into site/; --strict fails on a broken link, a
# missing page or a notebook cell that raises.
docs: setup web
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

# The site's figures and reproduction tables, made again from fresh runs (docs/make_figures.py).
figures: setup
	$(PY) docs/make_figures.py

# With the JIT built in; a later `make setup` or `make test` builds the extension without it again.
bench: guests bpf
	@$(MAKE) --no-print-directory setup EXTENSION_FEATURES=jit
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) target out site
