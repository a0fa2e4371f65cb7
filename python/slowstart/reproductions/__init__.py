"""Reproductions: published experiments as data (`reproduce.EXPERIMENTS`), the figures and
runs of their own, and the swarm study; `slowstart reproduce`. Above real runs (some
experiments run a real part)."""
