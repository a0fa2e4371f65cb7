"""Loading: a scenario (a TOML file or a dict, with overrides) → the canonical config the core
runs, checked by the core's own rules; the core's defaults and accepted words as a scenario
writes them; the applications, queues and your own controllers a scenario names; the
generated reference pages. The first layer above the base modules (units, paths, lazy, ...):
it imports nothing from the layers after it (tests/test_package_layout.py)."""
