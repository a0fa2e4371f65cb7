"""Modules imported on first use, declared at module level: `pd = lazy.module("pandas")`, then
`pd.DataFrame(...)` imports pandas the first time an attribute is read.

The commands that need no frame, file or figure (`slowstart list`, `run --json`, `--help`)
then load no heavy library (tests/test_startup.py), while every import stays at the top of its
module, where tests/test_package_layout.py sees it. The standard library's
`importlib.util.LazyLoader` (and `lazy_loader.load`, built on it) imports a submodule's parent
at once: `matplotlib.figure` would load matplotlib and numpy with it. This proxy imports
nothing until it is used, submodules included. An import that fails (libtorrent, an optional
dependency) raises its ImportError at the first use, where the caller turns it into one line.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule(ModuleType):
    """A stand-in for the module `name`, imported on first attribute access. Every read goes
    to the module itself, so what a test patches there is seen through the stand-in too."""

    def __getattr__(self, attr: str) -> Any:
        module = self.__dict__.get("_module")
        if module is None:
            module = importlib.import_module(self.__name__)
            self.__dict__["_module"] = module
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r}>"


def module(name: str) -> Any:
    """The module `name` (absolute, e.g. "matplotlib.figure"), imported when first used."""
    return LazyModule(name)
