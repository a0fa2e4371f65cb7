"""The package's version: the extension's (`_core.__version__`), which is the Cargo workspace's
(Cargo.toml `[workspace.package]`, its one owner; maturin gives it to pyproject.toml's dynamic
version)."""

from slowstart._core import __version__ as __version__
