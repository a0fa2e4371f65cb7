"""Loading: a scenario (a TOML file or a dict, with overrides) → the canonical config the core
runs, by the core's loader (crates/slowstart-config/src/scenario/) with this package as its host
for the user's files: the scenario file, your own controllers and trace files it names; the
core's defaults and accepted words as a scenario writes them; the generated reference pages.
The first layer above the base modules (units, paths, lazy, ...): it imports nothing from the
layers after it (tests/test_package_layout.py)."""
