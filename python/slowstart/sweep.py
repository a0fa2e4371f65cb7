"""Sweeps: one scenario over a grid of overrides and seeds, the runs spread over processes.

`slowstart sweep real-20mbps --vary flow.0.cc=reno,cubic --vary path.buffer=0.5bdp,1bdp
--seeds 1-3` runs the 2 x 2 x 3 points; every flow of every run becomes one row of a table
(`sweep.parquet`): the varied keys, the seed, then the flow's summary. Several scenarios make
one more axis, `scenario`, the first. All configs are built before anything runs, so a bad
key or value stops the sweep at once, naming the field.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd

from slowstart.scenario import load
from slowstart.units import ScenarioError, show

if TYPE_CHECKING:
    from matplotlib.figure import Figure

T = TypeVar("T")
R = TypeVar("R")

# Run-level summary fields kept beside each flow's.
RUN_FIELDS = ("sim_time_s", "events")


def _values(key: str, text: str) -> list[str]:
    """`V1,V2,...`; a piece such as `b=0.3` (a `=` and no `:`) belongs to the algorithm before
    it, so `aimd:a=15,b=0.3,reno` is two values."""
    values: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if values and "=" in piece and ":" not in piece:
            values[-1] += f",{piece}"
        elif piece:
            values.append(piece)
        else:
            raise ScenarioError(f"--vary {key}={text}: an empty value")
    return values


def parse_vary(items: Iterable[str]) -> dict[str, list[str]]:
    """`KEY=V1,V2` items → {key: values}, keys in first-seen order; a repeated KEY adds values."""
    axes: dict[str, list[str]] = {}
    for item in items:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key or not text.strip():
            raise ScenarioError(f"--vary {item}: expected KEY=V1,V2,... such as flow.0.cc=reno,bbr")
        axes.setdefault(key, []).extend(_values(key, text))
    if not axes:
        raise ScenarioError("--vary: give at least one KEY=V1,V2,...")
    for key, values in axes.items():
        if len(set(values)) != len(values):
            raise ScenarioError(f"--vary {key}: a value is listed twice in {values}")
    return axes


def parse_seeds(text: str) -> list[int]:
    """`1-5` or `1,4,9` (or both: `1-3,7`) → seeds, each a non-negative integer."""
    seeds: list[int] = []
    for piece in (p.strip() for p in text.split(",")):
        lo, dash, hi = piece.partition("-")
        try:
            first, last = int(lo), int(hi) if dash else int(lo)
        except ValueError:
            raise ScenarioError(f"--seeds {text}: expected seeds such as 1-5 or 1,4,9") from None
        if first < 0 or last < first:
            raise ScenarioError(f"--seeds {text}: {show(piece)} is not a range low-high of seeds")
        seeds.extend(range(first, last + 1))
    if len(set(seeds)) != len(seeds):
        raise ScenarioError(f"--seeds {text}: a seed is listed twice")
    return seeds


def points(axes: dict[str, Sequence[str]], seeds: Sequence[int | None]) -> list[dict[str, Any]]:
    """The grid: every combination of the axes' values (first axis slowest), seeds innermost."""
    keys = list(axes)
    return [
        {**dict(zip(keys, combo, strict=True)), "seed": seed}
        for combo in itertools.product(*(axes[k] for k in keys))
        for seed in seeds
    ]


def _summary(config_json: str) -> dict[str, Any]:
    from slowstart import _core

    return json.loads(_core.run(config_json)["summary"])


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


Scenario = str | os.PathLike[str] | dict[str, Any]


def scenario_name(scenario: Scenario) -> str:
    """A dict's `name`, else the file's stem."""
    return str(scenario.get("name", "")) if isinstance(scenario, dict) else Path(scenario).stem


def sweep(
    scenario: Scenario | list[Scenario],
    vary: dict[str, Sequence[str]] | Iterable[str],
    *,
    seeds: Sequence[int] | None = None,
    set: Sequence[str] = (),  # noqa: A002 - the documented keyword
    duration: str | None = None,
    jobs: int | None = None,
) -> pd.DataFrame:
    """Run `scenario` (or each of a list: a `scenario` column comes first) at every point of
    the grid and return one row per flow per run.

    `vary` maps override keys (as `--set` takes them) to values, or is a list of `KEY=V1,V2`
    strings; `seeds` defaults to the scenario's own; `set` applies to every point; `jobs`
    processes run the points (default: one per CPU). Rows come in grid order whatever the
    order the runs finish in, so the table is the same for any `jobs`.
    """
    if isinstance(vary, dict):
        axes = {}
        for key, values in vary.items():
            # One value given alone is one value, not a string's letters.
            values = [values] if isinstance(values, str | int | float) else values
            if not isinstance(values, list | tuple):
                raise ScenarioError(
                    f"vary.{key}: expected a list of values such as ['reno', 'cubic'], "
                    f"got {show(values)}"
                )
            axes[key] = [str(v) for v in values]
    elif isinstance(vary, list | tuple) and all(isinstance(v, str) for v in vary):
        axes = parse_vary(vary)
    else:
        raise ScenarioError(
            f"vary: expected {{key: [values]}} or a list of 'KEY=V1,V2' strings, got {show(vary)}"
        )
    if not axes:
        raise ScenarioError("vary: give at least one key and its values")
    if jobs is not None and jobs < 1:
        raise ScenarioError(f"--jobs {jobs}: expected at least 1")
    scenarios = scenario if isinstance(scenario, list) else [scenario]
    names = [scenario_name(s) for s in scenarios]
    if len(dict.fromkeys(names)) != len(names):
        raise ScenarioError(f"sweep: a scenario is named twice in {names}")
    grid = [
        {**({"scenario": name} if isinstance(scenario, list) else {}), **point}
        for name in names
        for point in points(axes, list(seeds) if seeds else [None])
    ]
    by_name = dict(zip(names, scenarios, strict=True))
    configs = []
    for point in grid:
        sets = [*set, *(f"{k}={point[k]}" for k in axes)]
        source = by_name[point.get("scenario", names[0])]
        try:
            config = load(source, set=sets, seed=point["seed"], duration=duration)
        except ValueError as e:
            where = ", ".join(f"{k}={point[k]}" for k in point if k != "seed")
            raise ScenarioError(f"sweep point {where}: {e}") from None
        configs.append(json.dumps(config))
    summaries = run_parallel(_summary, configs, jobs=jobs)
    rows = []
    for point, summary in zip(grid, summaries, strict=True):
        run_fields = {k: summary[k] for k in RUN_FIELDS if k in summary}
        for flow in summary["flows"]:
            fields = {k: v for k, v in flow.items() if _scalar(v)}
            flow_fields = {("flow" if k == "id" else k): v for k, v in fields.items()}
            rows.append({**point, "seed": summary["seed"], **flow_fields, **run_fields})
    return pd.DataFrame(rows)


def run_parallel(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    jobs: int | None = None,
    chunksize: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[R]:
    """`fn` over `items` in `jobs` processes (default: one per CPU), results in item order;
    `progress(done)` after each result. `fn` must be a module-level function. Chunks default
    to a quarter of each process's share, for many short runs; long runs of unequal length
    balance better with `chunksize=1`."""
    out: list[R] = []
    if jobs == 1 or len(items) <= 1:
        for item in items:
            out.append(fn(item))
            if progress:
                progress(len(out))
        return out
    workers = min(jobs or os.cpu_count() or 1, len(items))
    chunk = chunksize or max(1, len(items) // (4 * workers))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for result in pool.map(fn, items, chunksize=chunk):
            out.append(result)
            if progress:
                progress(len(out))
    return out


def aggregate(rows: pd.DataFrame, keys: Sequence[str], metric: str) -> pd.DataFrame:
    """Median, min and max of `metric` over seeds, per grid point and flow."""
    if metric not in rows.columns:
        accepted = ", ".join(c for c in rows.columns if c not in (*keys, "seed", "flow", "cc"))
        raise ScenarioError(f"--metric {metric}: not a summary field; accepted: {accepted}")
    groups = rows.groupby([*keys, "flow", "cc"], sort=False, dropna=False)[metric]
    table = groups.agg(["median", "min", "max", "count"]).reset_index()
    return table.rename(columns={"count": "runs"})


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def plot(table: pd.DataFrame, keys: Sequence[str], metric: str) -> Figure:
    """`metric` (median over seeds, min-max bars) against the first varied key, one series per
    combination of the other keys and flow: lines when the key's values are numbers, else
    markers side by side at each value."""
    from matplotlib.figure import Figure  # only when a figure is asked for

    x_key = keys[0]
    others = [*keys[1:], *(["flow"] if table["flow"].nunique() > 1 else [])]
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    xs = list(dict.fromkeys(table[x_key]))
    series = list(table.groupby(others, sort=False)) if others else [((), table)]
    numeric = all(_is_number(v) for v in xs)
    width = 0.0 if numeric else 0.6 / max(len(series), 1)
    for i, (label, line) in enumerate(series):
        label = label if isinstance(label, tuple) else (label,)
        name = ", ".join(f"{k}={v}" for k, v in zip(others, label, strict=True)) or metric
        shift = (i - (len(series) - 1) / 2) * width
        pos = [xs.index(v) + shift for v in line[x_key]]
        med = line["median"].astype(float)
        err = [med - line["min"].astype(float), line["max"].astype(float) - med]
        style = "-" if numeric else "none"
        ax.errorbar(pos, med, yerr=err, marker="o", capsize=3, linestyle=style, label=name)
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    if not numeric and sum(len(str(v)) for v in xs) > 60:
        ax.tick_params(axis="x", labelrotation=20)
    ax.set_xlabel(x_key)
    ax.set_ylabel(metric)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig
