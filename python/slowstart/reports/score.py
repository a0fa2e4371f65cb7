"""`slowstart score`: rate controllers side by side on a fixed suite of paths.

A suite is a TOML file (`suites/scorecard.toml` is the built-in one; `--suite FILE` another):

    version = 1                       # the suite format's version
    name = "slowstart scorecard"
    description = "..."

    [[path]]
    key = "satellite"                 # what --path selects and the tables call it
    title = "Satellite, 250 Mbps, 600 ms, 100 MB"
    source = "picoquic seed: C. Huitema, Faster slow start for satellite links? (2020)"
    scenario = "satellite"            # a scenario name or .toml file (beside the suite), or
                                      # an inline table written as a scenario file is
    set = ["trace.flow_interval=1ms"] # overrides, as --set takes them
    seeds = "1-5"                     # several for a path with randomness; default: its own
    metrics = ["time_to_90_s", ...]   # names in slowstart.reports.score_metrics
    flow = 0                          # the flow each controller drives (default 0)
    incumbent = 1                     # a flow whose harm is measured (optional)
    link = "bottleneck"               # the bottleneck link's name (default)
    figure = "10s"                    # cwnd shown over the flow's first this long

Every cell (path, controller, seed) is a run in the results store, keyed by its config, the
engine and the metrics' definitions (`slowstart.reports.score_metrics.metrics_version`), so a second
score with one more controller runs only that controller. A path with an incumbent also runs
once without the tested flow (per seed), for harm's "alone".
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from slowstart import lazy
from slowstart.loading.scenario import (
    apply_overrides,
    core_algorithms,
    load,
    read_scenario,
)
from slowstart.reports.score_metrics import (
    METRICS,
    Metric,
    Run,
    flow_rows,
    incumbent_numbers,
    measure_all,
    metrics_version,
)
from slowstart.reports.score_suite import PathSpec, Suite
from slowstart.reports.score_suite import load_suite as load_suite  # the documented API
from slowstart.reports.score_suite import select as select  # (docs/scorecard.md)
from slowstart.running.api import run_config
from slowstart.running.batches import check_workers, open_store, run_configs
from slowstart.running.measures import path_bdp_bytes
from slowstart.running.records import canonical, engine_version
from slowstart.tables import table
from slowstart.units import ScenarioError

np = lazy.module("numpy")

# cwnd figures are kept at most this many points per run.
FIGURE_POINTS = 300
SOURCE = "score"


# --- controllers --------------------------------------------------------------------------


def default_controllers() -> list[str]:
    """Every registered algorithm at its defaults, then CUBIC with each other slow-start rule
    the registry accepts (the rules are shared by the loss-based algorithms; on CUBIC, Linux's
    default, each is seen beside the others)."""
    algorithms = core_algorithms() or []
    out = [a["name"] for a in algorithms]
    cubic = next((a for a in algorithms if a["name"] == "cubic"), None)
    rule = next((p for p in (cubic or {}).get("params", []) if p["name"] == "slow_start"), None)
    if rule is not None:
        words = [w.strip() for w in rule["accepted"].split("|")]
        out += [f"cubic:slow_start={w}" for w in words if w != rule["default"]]
    return out


def check_controllers(ccs: Sequence[str]) -> list[str]:
    ccs = [c.strip() for c in ccs]
    for cc in ccs:
        if not cc:
            raise ScenarioError("--cc: an empty controller")
    if len(set(ccs)) != len(ccs):
        raise ScenarioError(f"--cc: a controller is given twice in {ccs}")
    return ccs


# --- configs ------------------------------------------------------------------------------


def _toml_string(text: str) -> str:
    """A TOML basic string holding `text` (JSON's escapes are TOML's)."""
    return json.dumps(text)


def _raw(path: PathSpec, seed: int | None) -> dict[str, Any]:
    return apply_overrides(read_scenario(path.scenario), set=list(path.set), seed=seed)


def cell_config(path: PathSpec, cc: str, seed: int | None) -> dict[str, Any]:
    """The canonical config of one cell: the path with `cc` on its tested flow."""
    raw = _raw(path, seed)
    flows = raw.get("flow")
    if not isinstance(flows, list) or path.flow >= len(flows):
        raise ScenarioError(f"{path.where}: flow = {path.flow}, but it has no such [[flow]]")
    if path.incumbent is not None and path.incumbent >= len(flows):
        raise ScenarioError(f"{path.where}: incumbent = {path.incumbent}, but no such [[flow]]")
    try:
        return load(raw, set=[f"flow.{path.flow}.cc={_toml_string(cc)}"])
    except ValueError as e:
        raise ScenarioError(f"{path.where}, cc {cc}: {e}") from None


def alone_config(path: PathSpec, seed: int | None) -> dict[str, Any]:
    """The path without its tested flow: what the incumbent has alone."""
    raw = _raw(path, seed)
    del raw["flow"][path.flow]
    try:
        return load(raw)
    except ValueError as e:
        raise ScenarioError(f"{path.where} without flow {path.flow}: {e}") from None


def version_of(spec: dict[str, Any]) -> str:
    """The engine's version, the metrics' and what the worker measures: a cell's key."""
    digest = hashlib.sha256(canonical(spec).encode()).hexdigest()[:12]
    return f"{engine_version()}+score.{metrics_version()}.{digest}"


# --- the worker's task --------------------------------------------------------------------


def cwnd_series(run: Any, span_s: float, points: int = FIGURE_POINTS) -> dict[str, list[float]]:
    """The tested flow's cwnd over BDP for its first `span_s` seconds, the largest sample in
    each of `points` equal bins (so no spike is lost)."""
    rows = flow_rows(run)
    rows = rows[rows["t"] <= span_s]
    if rows.empty:
        return {"t": [], "cwnd_bdp": []}
    bins = np.minimum((rows["t"].to_numpy() / span_s * points).astype(int), points - 1)
    peak = rows.groupby(bins)["cwnd_bytes"].max()
    bdp = path_bdp_bytes(run.result, run.flow)
    return {
        "t": [round(float(b) * span_s / points, 6) for b in peak.index],
        "cwnd_bdp": [round(float(c) / bdp, 5) for c in peak.to_numpy()],
    }


def score_task(item: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A worker's run of one cell (or of a path alone) and what the scorecard keeps of it."""
    config_json, spec = item
    start = time.perf_counter()
    result = run_config(json.loads(config_json))
    wall_s = time.perf_counter() - start
    if spec["role"] == "alone":
        extra = {"alone": incumbent_numbers(result, spec["incumbent"], *spec["window"])}
    else:
        run = Run(result, spec["flow"], spec["link"], spec["incumbent"], spec["alone"])
        extra = {"metrics": measure_all(run), "cwnd": cwnd_series(run, spec["figure_s"])}
    return {
        "summary": result.summary,
        "extra": extra,
        "wall_s": wall_s,
        "task_s": time.perf_counter() - start,
    }


# --- running ------------------------------------------------------------------------------


@dataclass
class Cell:
    """One path x controller: a run per seed."""

    path: PathSpec
    cc: str
    metrics: list[dict[str, float | None]] = field(default_factory=list)  # per seed
    cwnd: dict[str, list[float]] = field(default_factory=dict)  # the first seed's


@dataclass
class Scorecard:
    suite: Suite
    controllers: list[str]
    cells: dict[tuple[str, str], Cell]  # (path key, cc) -> cell
    runs: int = 0  # runs made
    stored: int = 0  # read from the store


Progress = Callable[[int, int], None]


def _run(
    configs: list[dict[str, Any]],
    specs: list[dict[str, Any]],
    points: list[dict[str, Any]],
    **kwargs: Any,
) -> tuple[list[dict[str, Any]], int]:
    return run_configs(
        configs,
        points=points,
        source=SOURCE,
        task=score_task,
        items=[(canonical(c), s) for c, s in zip(configs, specs, strict=True)],
        versions=[version_of(s) for s in specs],
        **kwargs,
    )


def score(
    suite: Suite,
    controllers: Sequence[str] | None = None,
    *,
    store: Any = None,
    rerun: bool = False,
    jobs: int | None = None,
    cluster: str | None = None,
    progress: Progress | None = None,
) -> Scorecard:
    """Run every cell of `suite` for `controllers` (default: `default_controllers()`) not
    already in `store`, and gather the metrics. Every config is built (and checked) first."""
    check_workers(jobs, cluster)
    ccs = check_controllers(controllers if controllers else default_controllers())
    # Every config first: a bad controller or path stops everything before any run.
    plan = [
        (path, cc, seed, cell_config(path, cc, seed))
        for path in suite.paths
        for cc in ccs
        for seed in path.seeds
    ]
    alone = [
        (path, seed, alone_config(path, seed))
        for path in suite.paths
        if path.incumbent is not None
        for seed in path.seeds
    ]
    the_store, close = open_store(store)
    made = 0
    total = len(plan) + len(alone)

    def phase(before: int, size: int) -> Progress:
        """Progress over both phases, a stored cell counting as done."""

        def tell(done: int, todo: int) -> None:
            if progress is not None:
                progress(before + size - todo + done, total)

        return tell

    common = {"store": the_store, "rerun": rerun, "jobs": jobs, "cluster": cluster}
    try:
        baseline: dict[tuple[str, int | None], dict[str, Any]] = {}
        if alone:
            windows = {
                (p.key, seed): [c["flows"][p.flow]["start_ns"] / 1e9, c["duration_ns"] / 1e9]
                for p, _cc, seed, c in plan
            }
            specs = [
                {"role": "alone", "incumbent": _shifted(p), "window": windows[(p.key, seed)]}
                for p, seed, _c in alone
            ]
            points = [{"path": p.key, "role": "alone", "seed": seed} for p, seed, _c in alone]
            tell = phase(0, len(alone))
            outs, ran = _run([c for *_, c in alone], specs, points, progress=tell, **common)
            made += ran
            for (p, seed, _c), out in zip(alone, outs, strict=True):
                baseline[(p.key, seed)] = out["extra"]["alone"]
        specs = [
            {
                "role": "cell",
                "flow": p.flow,
                "link": p.link,
                "incumbent": p.incumbent,
                "alone": baseline.get((p.key, seed)),
                "figure_s": p.figure_s,
            }
            for p, _cc, seed, _c in plan
        ]
        points = [{"path": p.key, "cc": cc, "seed": seed} for p, cc, seed, _c in plan]
        tell = phase(len(alone), len(plan))
        outs, ran = _run([c for *_, c in plan], specs, points, progress=tell, **common)
        made += ran
    finally:
        if close and the_store is not None:
            the_store.close()
    cells: dict[tuple[str, str], Cell] = {}
    for (p, cc, _seed, _c), out in zip(plan, outs, strict=True):
        cell = cells.setdefault((p.key, cc), Cell(p, cc))
        cell.metrics.append(out["extra"]["metrics"])
        if not cell.cwnd:
            cell.cwnd = out["extra"]["cwnd"]
    return Scorecard(suite, ccs, cells, runs=made, stored=total - made)


def _shifted(path: PathSpec) -> int:
    """The incumbent's index once the tested flow is removed."""
    assert path.incumbent is not None
    return path.incumbent - (1 if path.flow < path.incumbent else 0)


# --- the table ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A cell's metric over its seeds: the median, the spread, and its rank in the column."""

    median: float | None
    low: float | None
    high: float | None
    values: tuple[float | None, ...]
    rank: int | None = None  # 1 is best; None when the metric is not ranked
    best: bool = False


def _summarise(metric: Metric, values: list[float | None]) -> Value:
    """Median over seeds, a seed without a value counting as the worst (full rate never
    reached is later than any time): none when that falls on a seed without one."""
    known = [v for v in values if v is not None]
    if not known:
        return Value(None, None, None, tuple(values))
    worst = -math.inf if metric.better == "higher" else math.inf
    middle = statistics.median(v if v is not None else worst for v in values)
    return Value(middle if math.isfinite(middle) else None, min(known), max(known), tuple(values))


def column(card: Scorecard, path: PathSpec, metric: Metric) -> dict[str, Value]:
    """One column: each controller's value, ranked where the metric is (a controller with no
    value ranks after every one with a value) and there are two controllers or more: one
    alone would be best everywhere."""
    raw = {
        cc: _summarise(metric, [m.get(metric.name) for m in card.cells[(path.key, cc)].metrics])
        for cc in card.controllers
    }
    if not metric.ranked or len(card.controllers) < 2:
        return raw
    known = sorted((metric.badness(v.median), cc) for cc, v in raw.items() if v.median is not None)
    out = {}
    for cc, v in raw.items():
        if v.median is None:
            rank = len(known) + 1
        else:
            mine = metric.badness(v.median)
            rank = 1 + sum(1 for b, _ in known if b < mine and not math.isclose(b, mine))
        out[cc] = Value(v.median, v.low, v.high, v.values, rank, rank == 1 and v.median is not None)
    return out


def columns(card: Scorecard) -> list[tuple[PathSpec, Metric, dict[str, Value]]]:
    return [
        (path, METRICS[name], column(card, path, METRICS[name]))
        for path in card.suite.paths
        for name in path.metrics
    ]


def mean_ranks(card: Scorecard) -> dict[str, float | None]:
    """Each controller's mean rank over every ranked column (lower is better)."""
    ranks: dict[str, list[int]] = {cc: [] for cc in card.controllers}
    for _path, metric, col in columns(card):
        if metric.ranked:
            for cc, v in col.items():
                if v.rank is not None:
                    ranks[cc].append(v.rank)
    return {cc: (sum(r) / len(r) if r else None) for cc, r in ranks.items()}


# Display: bits per second as Mbps, everything else in its own unit.
SCALES = {"bps": (1e6, "Mbps")}


def shown_unit(metric: Metric) -> str:
    return SCALES.get(metric.unit, (1.0, metric.unit))[1]


def number(metric: Metric, value: float | None) -> str:
    if value is None:
        return "-"
    scale = SCALES.get(metric.unit, (1.0, metric.unit))[0]
    x = value / scale
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def cell_text(metric: Metric, v: Value) -> str:
    """The median, `*` when best of the column, and [min-max] over seeds when they differ."""
    text = number(metric, v.median) + ("*" if v.best else "")
    if v.median is not None and len(v.values) > 1:
        text += f" [{number(metric, v.low)}-{number(metric, v.high)}]"
        missing = sum(x is None for x in v.values)
        if missing:
            text += f" ({missing} -)"
    return text


def header(metric: Metric) -> str:
    unit = shown_unit(metric)
    return metric.name if unit == metric.unit and metric.unit == "s" else f"{metric.name} ({unit})"


LEGEND = (
    "* best of the column (lower is better, higher for goodput, nearest 1 for exit_cwnd_bdp; "
    "slow_start_exit_s is not ranked); [min-max] over seeds where a path runs several; "
    "- no value (not reached, or never left slow start)"
)


ALONE = (
    "one controller has no rank: give --cc again for each one to compare it with, or leave "
    "--cc out to rate every built-in"
)


def format_text(card: Scorecard) -> str:
    """Controllers as rows, one block of metric columns per path, the mean rank last."""
    blocks = [f"{card.suite.name} ({card.suite.file}, suite version {card.suite.version})"]
    cols = columns(card)
    for path in card.suite.paths:
        mine = [(m, c) for p, m, c in cols if p.key == path.key]
        seeds = ", ".join("scenario's" if s is None else str(s) for s in path.seeds)
        head = f"{path.key}: {path.title}\n  source: {path.source}\n  seeds: {seeds}"
        rows = [[cc, *(cell_text(m, c[cc]) for m, c in mine)] for cc in card.controllers]
        body = table(["cc", *(header(m) for m, _ in mine)], rows)
        blocks.append(head + "\n" + "\n".join("  " + line for line in body.splitlines()))
    ranks = mean_ranks(card)
    order = sorted(card.controllers, key=lambda cc: (ranks[cc] is None, ranks[cc] or 0.0))
    rows = [[cc, "-" if ranks[cc] is None else f"{ranks[cc]:.2f}"] for cc in order]
    body = table(["cc", "mean rank"], rows)
    blocks.append(
        "overall: mean rank over every ranked column\n"
        + "\n".join("  " + line for line in body.splitlines())
    )
    blocks.append(LEGEND)
    if len(card.controllers) < 2:
        blocks.append(ALONE)
    return "\n\n".join(blocks)


def as_json(card: Scorecard) -> dict[str, Any]:
    """The scorecard as data: the suite, the metrics' definitions, every cell."""
    cols = columns(card)
    used = list(dict.fromkeys(name for p in card.suite.paths for name in p.metrics))
    return {
        "suite": {
            "name": card.suite.name,
            "file": str(card.suite.file),
            "version": card.suite.version,
            "description": card.suite.description,
        },
        "controllers": card.controllers,
        "metrics": {
            name: {"unit": METRICS[name].unit, "better": METRICS[name].better}
            | {"doc": METRICS[name].doc}
            for name in used
        },
        "paths": [
            {
                "key": p.key,
                "title": p.title,
                "source": p.source,
                "seeds": list(p.seeds),
                "metrics": list(p.metrics),
                "cells": {
                    cc: {
                        m.name: {
                            "median": c[cc].median,
                            "min": c[cc].low,
                            "max": c[cc].high,
                            "values": list(c[cc].values),
                            "rank": c[cc].rank,
                            "best": c[cc].best,
                        }
                        for pp, m, c in cols
                        if pp.key == p.key
                    }
                    for cc in card.controllers
                },
            }
            for p in card.suite.paths
        ],
        "mean_rank": mean_ranks(card),
        "runs": card.runs,
        "stored": card.stored,
    }


def format_markdown(card: Scorecard) -> str:
    """The scorecard as markdown tables, the best of each column in bold (docs/scorecard.md
    holds the built-in one)."""
    cols = columns(card)
    parts = []
    for path in card.suite.paths:
        mine = [(m, c) for p, m, c in cols if p.key == path.key]
        lines = [
            f"### {path.key}: {path.title}",
            "",
            f"Source: {path.source}.",
            "",
            "| cc | " + " | ".join(header(m) for m, _ in mine) + " |",
            "|---" * (len(mine) + 1) + "|",
        ]
        for cc in card.controllers:
            cells = []
            for m, c in mine:
                text = cell_text(m, replace(c[cc], best=False))
                cells.append(f"**{text}**" if c[cc].best else text)
            lines.append(f"| {cc} | " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    ranks = mean_ranks(card)
    order = sorted(card.controllers, key=lambda cc: (ranks[cc] is None, ranks[cc] or 0.0))
    lines = ["### Mean rank over every ranked column", "", "| cc | mean rank |", "|---|---|"]
    lines += [f"| {cc} | {'-' if ranks[cc] is None else f'{ranks[cc]:.2f}'} |" for cc in order]
    parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"
