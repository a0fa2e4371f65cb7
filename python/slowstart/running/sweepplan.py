"""Sweep plans: a sweep written down as a TOML file (`slowstart sweep plan.toml`).

    scenario = "real-20mbps"          # or scenarios = ["a", "b"]: a scenario axis
    seeds = "1-3"                     # or [1, 2, 3]; default: the scenario's seed
    metrics = ["goodput_bps"]         # flow summary fields to tabulate (default: see below)
    set = ["flow.0.size=1MB"]         # overrides at every point
    duration = "10s"

    [axes]                            # the grid: every combination, first axis slowest
    "flow.0.cc" = ["reno", "cubic"]
    "path.rtt" = { range = "10ms..200ms", count = 5, spacing = "log" }

    [sample]                          # and/or random points of a box, reproducible by seed
    count = 20
    seed = 7
    box = { "path.rate" = "1Mbps..100Mbps", "path.buffer" = { range = "0.5bdp..4bdp" } }

A range is two quantities of one unit; `count` values from one end to the other, evenly
spaced (`lin`, the default) or by a constant ratio (`log`). Ends written as whole numbers give
whole numbers. Sampled points are combined with every point of the grid.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slowstart.loading.scenario import read_toml
from slowstart.running.sweeps import check_points, parse_seeds, points
from slowstart.units import U64_MAX, ScenarioError, show, split_quantity

KEYS = {"scenario", "scenarios", "seeds", "metrics", "set", "duration", "axes", "sample"}
SAMPLE_KEYS = ("count", "seed", "box")


@dataclass
class Plan:
    scenarios: list[str]
    axes: dict[str, list[str]]
    samples: list[dict[str, str]] = field(default_factory=list)
    seeds: list[int] | None = None
    metrics: list[str] = field(default_factory=list)
    set: list[str] = field(default_factory=list)
    duration: str | None = None

    def keys(self) -> list[str]:
        return [*self.axes, *(self.samples[0] if self.samples else {})]

    def size(self) -> int:
        """How many points `grid` lists, known before it lists them."""
        axes = math.prod(len(values) for values in self.axes.values())
        return axes * max(1, len(self.samples)) * len(self.seeds or [None]) * len(self.scenarios)

    def grid(self) -> list[dict[str, Any]]:
        """Every point: the grid of the axes, each with every sampled point, seeds innermost."""
        check_points(self.size(), "plan")
        base = points(self.axes, [None]) if self.axes else [{"seed": None}]
        out = []
        for point in base:
            for sample in self.samples or [{}]:
                for seed in self.seeds or [None]:
                    out.append({**{k: v for k, v in point.items() if k != "seed"}, **sample})
                    out[-1]["seed"] = seed
        return out


def _number(x: float, whole: bool) -> str:
    if whole:
        return str(round(x))
    text = f"{x:.4g}"
    if "e" in text:  # 4 significant digits without exponent notation
        digits = max(0, 3 - math.floor(math.log10(abs(x)))) if x else 0
        text = f"{x:.{digits}f}"
    return text


def _ends(key: str, text: str) -> tuple[float, float, str, bool]:
    """`"10ms..200ms"`: low end, high end, their unit, whether both are whole numbers."""
    lo_text, dots, hi_text = text.partition("..")
    where = f"axes.{key}"
    # "1ms...10ms" would read ".10ms" as the high end.
    if not dots or not lo_text.strip() or not hi_text.strip() or ".." in f"{lo_text}.{hi_text}":
        raise ScenarioError(f'{where}: expected a range such as "10ms..200ms", got {show(text)}')
    expected = 'a range such as "10ms..200ms"'
    lo, lo_unit = split_quantity(lo_text, where, expected)
    hi, hi_unit = split_quantity(hi_text, where, expected)
    # A bare end is not read in the other end's unit: only zero goes without one
    # ("0..10ms" is still zero; units.py).
    if lo_unit != hi_unit and not (lo == 0 and not lo_unit):
        raise ScenarioError(f"{where}: both ends of {show(text)} need the same unit")
    if hi > U64_MAX:
        raise ScenarioError(f"{where}: the high end of {show(text)} is too large")
    if lo >= hi:
        raise ScenarioError(f"{where}: the low end of {show(text)} must be below the high end")
    whole = lo.denominator == 1 and hi.denominator == 1 and "." not in lo_text + hi_text
    return float(lo), float(hi), hi_unit, whole


def _spacing(key: str, spec: dict[str, Any], lo: float, hi: float) -> str:
    spacing = spec.get("spacing", "lin")
    if spacing not in ("lin", "log"):
        raise ScenarioError(f"axes.{key}.spacing: expected lin or log, got {show(spacing)}")
    if spacing == "log" and (lo <= 0 or hi <= 0):
        raise ScenarioError(f"axes.{key}: a log range needs both ends above zero")
    return spacing


def range_values(key: str, spec: dict[str, Any] | str) -> list[str]:
    """A range axis (`{range = "10ms..200ms", count = 5, spacing = "log"}`) → its values."""
    if isinstance(spec, str):
        spec = {"range": spec}
    unknown = set(spec) - {"range", "count", "spacing"}
    if unknown:
        raise ScenarioError(
            f"axes.{key}: unknown key {sorted(unknown)[0]!r} (range, count, spacing)"
        )
    lo, hi, unit, whole = _ends(key, str(spec.get("range", "")))
    count = spec.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or count < 2:
        raise ScenarioError(
            f"axes.{key}.count: expected an integer of at least 2, got {show(count)}"
        )
    check_points(count, f"axes.{key}.count")
    log = _spacing(key, spec, lo, hi) == "log"
    values = []
    for i in range(count):
        f = i / (count - 1)
        x = lo * (hi / lo) ** f if log else lo + (hi - lo) * f
        values.append(_number(x, whole) + unit)
    return list(dict.fromkeys(values))  # whole numbers of a short range can repeat


def sample_box(box: dict[str, Any], count: int, seed: int) -> list[dict[str, str]]:
    """`count` points drawn uniformly (log-uniformly for `spacing = "log"`) from the box."""
    rng = random.Random(seed)
    ranges = {}
    for key, spec in box.items():
        spec = {"range": spec} if isinstance(spec, str) else dict(spec)
        lo, hi, unit, whole = _ends(key, str(spec.get("range", "")))
        ranges[key] = (lo, hi, unit, whole, _spacing(key, spec, lo, hi) == "log")
    out = []
    for _ in range(count):
        point = {}
        for key, (lo, hi, unit, whole, log) in ranges.items():
            u = rng.random()
            x = (
                math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * u)
                if log
                else lo + (hi - lo) * u
            )
            point[key] = _number(x, whole) + unit
        out.append(point)
    return out


def _list_of_str(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ScenarioError(f"{where}: expected a list of strings, got {show(value)}")
    return value


def load_plan(path: str | os.PathLike[str]) -> Plan:
    """Read and check a plan file; scenario names are resolved as the CLI resolves them."""
    path = Path(path)
    raw = read_toml(path, "sweep plan")
    for key in ("axes", "sample"):
        if not isinstance(raw.get(key, {}), dict):
            raise ScenarioError(f"{key}: expected a table ([{key}]), got {show(raw[key])}")
    unknown = set(raw) - KEYS
    if unknown:
        raise ScenarioError(
            f"{path}: unknown key {sorted(unknown)[0]!r} (accepted: {', '.join(sorted(KEYS))})"
        )
    scenarios = _list_of_str(raw.get("scenarios", raw.get("scenario", [])), "scenario")
    if not scenarios:
        raise ScenarioError(f'{path}: name the scenario (scenario = "...")')
    # A scenario named relative to the plan file, else a name in scenarios/.
    scenarios = [str(path.parent / s) if (path.parent / s).is_file() else s for s in scenarios]
    axes: dict[str, list[str]] = {}
    for key, spec in raw.get("axes", {}).items():
        if isinstance(spec, list):
            if not spec:
                raise ScenarioError(f"axes.{key}: an empty list")
            axes[key] = [str(v) for v in spec]
        elif isinstance(spec, dict | str):
            axes[key] = range_values(key, spec)
        else:
            axes[key] = [str(spec)]
    samples: list[dict[str, str]] = []
    if "sample" in raw:
        sample = raw["sample"]
        for key in sample:
            if key not in SAMPLE_KEYS:
                raise ScenarioError(
                    f"sample.{key}: unknown key (accepted: {', '.join(SAMPLE_KEYS)})"
                )
        count, seed, box = sample.get("count"), sample.get("seed", 0), sample.get("box")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ScenarioError(f"sample.count: expected a positive integer, got {show(count)}")
        check_points(count, "sample.count")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ScenarioError(f"sample.seed: expected an integer, got {show(seed)}")
        if not isinstance(box, dict) or not box:
            raise ScenarioError(
                'sample.box: expected a table of ranges, such as {"path.rtt" = "10ms..200ms"}'
            )
        overlap = set(box) & set(axes)
        if overlap:
            raise ScenarioError(f"sample.box.{sorted(overlap)[0]}: already an axis")
        samples = sample_box(box, count, int(seed))
    if not axes and not samples:
        raise ScenarioError(f"{path}: give [axes] or [sample] (what the sweep varies)")
    seeds = raw.get("seeds")
    if isinstance(seeds, str):
        seeds = parse_seeds(seeds)
    elif isinstance(seeds, int):
        seeds = [seeds]
    elif seeds is not None and not (
        isinstance(seeds, list) and all(isinstance(s, int) for s in seeds)
    ):
        raise ScenarioError(f'seeds: expected "1-5" or a list of integers, got {show(seeds)}')
    return Plan(
        scenarios=scenarios,
        axes=axes,
        samples=samples,
        seeds=seeds or None,
        metrics=_list_of_str(raw.get("metrics", []), "metrics"),
        set=_list_of_str(raw.get("set", []), "set"),
        duration=raw.get("duration"),
    )


def is_plan(path: str | os.PathLike[str]) -> bool:
    """A TOML file with [axes] or [sample] and no path or topology of its own."""
    p = Path(path)
    if p.suffix != ".toml" or not p.is_file():
        return False
    try:
        raw = read_toml(p, "file")
    except ScenarioError:  # the scenario's loader says why
        return False
    return ("axes" in raw or "sample" in raw) and not ({"path", "topology", "flow"} & set(raw))
