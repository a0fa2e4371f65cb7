"""What the documentation's Playground (docs/playground.md) is built with: each scenario of
`scenarios/` as its TOML text (which the engine in the browser reads with the core's loader,
crates/slowstart-web), what its sliders and labels start from, and the core's registry of
algorithms; and
the reproductions whose headline figures run live on their pages (`LIVE`), each variant's
config beside its published value. docs/hooks.py writes them into the site as
playground/data.json and playground/experiments.json beside the module and Plotly."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from slowstart import _core, paths
from slowstart.loading.defaults import defaults
from slowstart.loading.scenario import load
from slowstart.paths import scenario_path
from slowstart.reproductions.experiment import runnable
from slowstart.reproductions.reproduce import EXPERIMENTS
from slowstart.running.result import RunKind

# Scenarios for `slowstart real` (real-*) and swarms ([swarm], no [[flow]]) are left out: the
# page draws flows over one path.
_LEFT_OUT = ("real-",)


def _size(n: int) -> str:
    return f"{n / 1e6:.4g} MB" if n >= 10**6 else f"{n / 1e3:.4g} kB"


def path_settings(raw: dict[str, Any], config: dict[str, Any]) -> dict[str, Any] | None:
    """A `[path]` scenario's slider starting values, read from the config the loader makes of it
    (the bottleneck, link 1); the sliders then give `--set` items, which the engine's loader
    reads. None for the general form."""
    if "path" not in raw:
        return None
    p, bottleneck = raw["path"], config["links"][1]
    forward = bottleneck["forward"]
    rate, rtt = forward["rate_bps"], forward["delay_ns"] + bottleneck["reverse"]["delay_ns"]
    queue = forward["queue"]
    bdp_bytes = rate * rtt / 8e9
    buffer = p.get("buffer", defaults("path")["buffer"])  # as written, else the core's default
    in_bdp = "bdp" in str(buffer) and "bytes" in queue and bdp_bytes > 0
    size = _size(queue["bytes"]) if "bytes" in queue else f"{queue['packets']} packets"
    return {
        "rate_bps": rate,
        "rtt_ns": rtt,
        # The buffer in BDPs where the scenario gives it so (the slider's position), and as
        # the label shows it.
        "buffer_bdp": round(queue["bytes"] / bdp_bytes, 2) if in_bdp else None,
        "buffer_text": f"{buffer} ({size})",
        "loss": forward.get("loss", 0.0),
        # The keys a slider cannot stand for: a rate trace, a Gilbert-Elliott loss.
        "rate_trace": "rate_trace_ms" in forward,
        "loss_table": "gilbert_elliott" in forward,
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
    ccs = {json.dumps(f["cc"], sort_keys=True): f["cc"] for f in config["flows"]}
    return {
        "name": path.stem,
        "description": raw.get("description", ""),
        "toml": text,
        # The flows' controllers (the label of "the scenario's") and the initial window's slider.
        "ccs": list(ccs.values()),
        "initcwnd": config["flows"][0]["initcwnd"],
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
