"""What the documentation's Playground (docs/playground.md) is built with: each scenario of
`scenarios/` as the loader resolves it (the canonical JSON the engine in the browser runs,
crates/slowstart-web), what its sliders start from, and the core's registry of algorithms; and
the reproductions whose headline figures run live on their pages (`LIVE`), each variant's
config beside its published value. docs/hooks.py writes them into the site as
playground/data.json and playground/experiments.json beside the module and Plotly."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from slowstart import _core, paths
from slowstart.loading.scenario import load
from slowstart.paths import scenario_path
from slowstart.reproductions.experiment import runnable
from slowstart.reproductions.reproduce import EXPERIMENTS
from slowstart.running.result import RunKind
from slowstart.units import parse_buffer

# Scenarios for `slowstart real` (real-*) and swarms ([swarm], no [[flow]]) are left out: the
# page draws flows over one path.
_LEFT_OUT = ("real-",)


def _fraction(x: Any) -> list[int] | None:
    return None if x is None else [x.numerator, x.denominator]


def path_settings(raw: dict[str, Any], config: dict[str, Any]) -> dict[str, Any] | None:
    """A `[path]` scenario's slider values and how its keys fill the config (scenario.py
    `expand_path`): a reverse key left out follows its forward key; `buffer` is kept as
    written (BDPs and times re-resolve when rate or RTT move). None for the general form."""
    if "path" not in raw:
        return None
    p, bottleneck = raw["path"], config["links"][1]
    buffer = parse_buffer(p.get("buffer", "1bdp"), "path.buffer")
    forward = bottleneck["forward"]
    return {
        "rate_bps": forward["rate_bps"],
        "rtt_ns": forward["delay_ns"] + bottleneck["reverse"]["delay_ns"],
        "buffer": {
            "packets": _fraction(buffer.packets),
            "bytes": buffer.bytes,
            "time_ns": buffer.time_ns,
            "bdp": _fraction(buffer.bdp),
        },
        "loss": forward.get("loss", 0.0),
        "initcwnd": config["flows"][0]["initcwnd"],
        # The keys a slider cannot stand for: a rate trace, a Gilbert-Elliott loss.
        "rate_trace": "rate_trace_ms" in forward,
        "loss_table": "gilbert_elliott" in forward,
        "reverse_rate": "reverse_rate" in p,
        "reverse_buffer": "reverse_buffer" in p,
    }


def scenario(path: Path) -> dict[str, Any] | None:
    """One scenario for the page, or None if the page does not draw it."""
    text = path.read_text("utf-8")
    raw = tomllib.loads(text)
    if path.stem.startswith(_LEFT_OUT):
        return None
    config = load(path)
    if RunKind.of(config) is RunKind.SWARM:  # the browser's engine runs flows
        return None
    return {
        "name": path.stem,
        "description": raw.get("description", ""),
        "toml": text,
        "config": config,
        "path": path_settings(raw, config),
    }


def data() -> dict[str, Any]:
    """Every scenario the page offers, and the algorithms with their parameters."""
    scenarios = [s for f in paths.scenario_files() if (s := scenario(f)) is not None]
    return {"scenarios": scenarios, "algorithms": json.loads(_core.algorithms())}


# The reproductions drawn live on their pages: a run takes well under a second in the browser
# for satellite and web-initcwnd; Floyd's runs to the window cap take seconds each, so its page
# runs them when asked (docs/playground/live.js).
LIVE = ("floyd", "satellite", "web-initcwnd")


def experiment(name: str) -> dict[str, Any]:
    """An experiment's variants as the page runs them: the config `reproduce` runs
    (reproduce.py `run_variant`), the published value and the summary path of ours. Variants
    measured by a function of the run rather than a summary value are left out."""
    exp = EXPERIMENTS[name]
    variants = []
    for v in exp.variants:
        metric = v.metric if v.metric is not None else f"flows.{exp.flow}.{exp.metric}"
        if callable(metric) or v.measure is not None or runnable(v) is not None:
            continue
        config = load(scenario_path(v.scenario or exp.scenario), set=[*exp.common, *v.overrides])
        variants.append(
            {
                "label": v.label,
                "config": config,
                "published": v.published,
                "bound": v.bound,
                "metric": metric,
                "unit": v.unit or exp.unit,
            }
        )
    return {
        "name": name,
        "title": exp.title,
        "tolerance": exp.tolerance,
        "variants": variants,
    }


def experiments() -> dict[str, Any]:
    return {name: experiment(name) for name in LIVE}
