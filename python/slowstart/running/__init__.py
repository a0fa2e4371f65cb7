"""Running: a config on the core (`run`, `Result`), one swarm's results, what is measured of a
run, the results store, sweeps over many runs and `slowstart plan`. Above loading."""
