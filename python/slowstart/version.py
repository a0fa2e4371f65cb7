"""The package's version (pyproject.toml's `version`), below every module that names it."""

__version__ = "0.1.0"
