"""slowstart: a deterministic packet-level simulator of how connections ramp up.

import slowstart
r = slowstart.run("scenarios/satellite.toml", cc="reno")
r.summary, r.flows, r.queues, r.plot()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from slowstart import lazy

if TYPE_CHECKING:
    from slowstart.loading.guests import Controller
    from slowstart.loading.scenario import load
    from slowstart.running.api import ControllerFault, Result, run, run_config
    from slowstart.running.store import results
    from slowstart.running.sweeps import sweep
    from slowstart.units import ScenarioError
    from slowstart.version import __version__

__all__ = [
    "__version__",
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
# pandas, `import slowstart` loads no extension (__version__ is the extension's), and the
# command's first moments load nothing (slowstart.launch: Ctrl-C then ends it without a trace).
_LAZY = {
    "__version__": "slowstart.version",
    "Controller": "slowstart.loading.guests",
    "ScenarioError": "slowstart.units",
    "Result": "slowstart.running.api",
    "run": "slowstart.running.api",
    "run_config": "slowstart.running.api",
    "ControllerFault": "slowstart.running.api",
    "load": "slowstart.loading.scenario",
    "sweep": "slowstart.running.sweeps",
    "results": "slowstart.running.store",
}
_MODULES = {name: lazy.module(module) for name, module in _LAZY.items()}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(_MODULES[name], name)
    raise AttributeError(f"module 'slowstart' has no attribute {name!r}")


def algorithms() -> list[dict]:
    """The core's algorithms: name, summary, source and params (name, doc, default, accepted)."""
    found = _MODULES["load"].core_algorithms()  # slowstart.loading.scenario's
    if found is None:
        raise ImportError("the slowstart._core extension is not built (run `make setup`)")
    return found
