"""slowstart: a deterministic packet-level simulator of how connections ramp up.

import slowstart
r = slowstart.run("scenarios/satellite.toml", cc="reno")
r.summary, r.flows, r.queues, r.plot()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from slowstart.api import ControllerFault, Result, run, run_config
    from slowstart.guests import Controller
    from slowstart.scenario import load
    from slowstart.store import results
    from slowstart.sweeps import sweep
    from slowstart.units import ScenarioError

__all__ = [
    "Controller",
    "ControllerFault",
    "Result",
    "ScenarioError",
    "algorithms",
    "load",
    "results",
    "run",
    "run_config",
    "sweep",
]
__version__ = "0.1.0"

# Imported on first use, so the CLI's error paths and `list` need not load pandas, and the
# command's first moments load nothing (slowstart.launch: Ctrl-C then ends it without a trace).
_LAZY = {"Controller": "slowstart.guests", "ScenarioError": "slowstart.units"}
_LAZY |= {"Result": "slowstart.api", "run": "slowstart.api", "run_config": "slowstart.api"}
_LAZY["ControllerFault"] = "slowstart.api"
_LAZY["load"] = "slowstart.scenario"
_LAZY["sweep"] = "slowstart.sweeps"
_LAZY["results"] = "slowstart.store"


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'slowstart' has no attribute {name!r}")


def algorithms() -> list[dict]:
    """The core's algorithms: name, summary, source and params (name, doc, default, accepted)."""
    from slowstart.scenario import core_algorithms

    found = core_algorithms()
    if found is None:
        raise ImportError("the slowstart._core extension is not built (run `make setup`)")
    return found
