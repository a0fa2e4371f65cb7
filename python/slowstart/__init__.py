"""slowstart: a deterministic packet-level simulator of how connections ramp up.

import slowstart
r = slowstart.run("scenarios/satellite.toml", cc="reno")
r.summary, r.flows, r.queues, r.plot()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.version import __version__ as __version__

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

# Imported on first use (slowstart.lazy), so the CLI's error paths and `list` need not load
# pandas, and the command's first moments load nothing (slowstart.launch: Ctrl-C then ends it
# without a trace).
_LAZY = {
    "Controller": "slowstart.guests",
    "ScenarioError": "slowstart.units",
    "Result": "slowstart.api",
    "run": "slowstart.api",
    "run_config": "slowstart.api",
    "ControllerFault": "slowstart.api",
    "load": "slowstart.scenario",
    "sweep": "slowstart.sweeps",
    "results": "slowstart.store",
}
_MODULES = {name: lazy.module(module) for name, module in _LAZY.items()}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(_MODULES[name], name)
    raise AttributeError(f"module 'slowstart' has no attribute {name!r}")


def algorithms() -> list[dict]:
    """The core's algorithms: name, summary, source and params (name, doc, default, accepted)."""
    found = _MODULES["load"].core_algorithms()  # slowstart.scenario's
    if found is None:
        raise ImportError("the slowstart._core extension is not built (run `make setup`)")
    return found
