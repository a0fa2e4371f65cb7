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
import math
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.loading.defaults import limits
from slowstart.loading.scenario import load
from slowstart.paths import scenario_path
from slowstart.plot import axis_label
from slowstart.running.api import core_schema
from slowstart.running.batches import check_workers, run_configs
from slowstart.running.store import Store
from slowstart.units import U64_MAX, ScenarioError, parse_int, show

if TYPE_CHECKING:
    from matplotlib.figure import Figure

mpl_figure = lazy.module("matplotlib.figure")
pd = lazy.module("pandas")


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


def check_points(count: int, what: str) -> None:
    """Before a sweep's points are listed: at most the core's `sweep_points` of them."""
    most = limits()["sweep_points"]
    if count > most:
        raise ScenarioError(
            f"{what}: {count} runs, more than one sweep may have ({most}); split it or use "
            "fewer values"
        )


def parse_seeds(text: str) -> list[int]:
    """`1-5` or `1,4,9` (or both: `1-3,7`) → seeds, each a non-negative integer."""
    seeds: list[int] = []
    for piece in (p.strip() for p in text.split(",")):
        lo, dash, hi = piece.partition("-")
        try:
            first, last = int(lo), int(hi) if dash else int(lo)
        except ValueError:
            raise ScenarioError(f"--seeds {text}: expected seeds such as 1-5 or 1,4,9") from None
        if first < 0 or last < first or last > U64_MAX:
            raise ScenarioError(f"--seeds {text}: {show(piece)} is not a range low-high of seeds")
        check_points(len(seeds) + last - first + 1, f"--seeds {text}")
        seeds.extend(range(first, last + 1))
    if len(set(seeds)) != len(seeds):
        raise ScenarioError(f"--seeds {text}: a seed is listed twice")
    return seeds


def points(axes: dict[str, Sequence[str]], seeds: Sequence[int | None]) -> list[dict[str, Any]]:
    """The grid: every combination of the axes' values (first axis slowest), seeds innermost."""
    keys = list(axes)
    check_points(math.prod(len(axes[k]) for k in keys) * len(seeds), "sweep")
    return [
        {**dict(zip(keys, combo, strict=True)), "seed": seed}
        for combo in itertools.product(*(axes[k] for k in keys))
        for seed in seeds
    ]


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


Scenario = str | os.PathLike[str] | dict[str, Any]


def scenario_name(scenario: Scenario) -> str:
    """A dict's `name`, else the file's stem."""
    return str(scenario.get("name", "")) if isinstance(scenario, dict) else Path(scenario).stem


def sweep(
    scenario: Scenario | list[Scenario],
    vary: dict[str, Sequence[str]] | Iterable[str] | None = None,
    *,
    seeds: Sequence[int] | None = None,
    set: Sequence[str] = (),  # noqa: A002 - the documented keyword
    duration: str | None = None,
    jobs: int | None = None,
    grid: list[dict[str, Any]] | None = None,
    store: str | os.PathLike[str] | Store | None = None,
    rerun: bool = False,
    cluster: str | None = None,
    traces: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Run `scenario` (a file, a name in scenarios/ or a dict; or a list of them: a `scenario`
    column comes first) at every point of the grid and return one row per flow per run.

    `vary` maps override keys (as `--set` takes them) to values, or is a list of `KEY=V1,V2`
    strings; `seeds` defaults to the scenario's own; `set` applies to every point; `jobs`
    processes run the points (default: one per CPU), or `cluster` ("local:N" or
    "tcp://HOST:8786", a Dask cluster). Rows come in grid order whatever the order the runs
    finish in, so the table is the same for any `jobs` or cluster.

    With `store` (a path, see `slowstart.running.store`), every run is stored as it completes (its
    traces too with `traces=True`), and a point already stored is not run again unless
    `rerun`. `grid` (points, each a value per key and a seed, such as a sweep plan's) replaces
    `vary` and `seeds`. `progress(done, total)` is told after each batch of runs. The frame's
    `attrs["runs"]` counts the runs made, `attrs["stored"]` those read from the store.
    """
    if grid is not None:
        if not grid:
            raise ScenarioError("grid: an empty list of points; give at least one")
        axes: dict[str, list[str]] = {k: [] for k in grid[0] if k not in ("seed", "scenario")}
    else:
        axes = _axes(vary if vary is not None else {})
    check_workers(jobs, cluster)  # before the configs are built, not once the runs are due
    grid, configs = build(scenario, axes, seeds=seeds, set=set, duration=duration, grid=grid)
    outs, ran = run_configs(
        configs,
        points=grid,
        source="sweep",
        store=store,
        rerun=rerun,
        jobs=jobs,
        cluster=cluster,
        traces=traces,
        progress=progress,
    )
    rows = []
    for point, out in zip(grid, outs, strict=True):
        summary = out["summary"]
        run_fields = {k: summary[k] for k in RUN_FIELDS if k in summary}
        for flow in summary["flows"]:
            fields = {k: v for k, v in flow.items() if _scalar(v)}
            flow_fields = {("flow" if k == "id" else k): v for k, v in fields.items()}
            rows.append({**point, "seed": summary["seed"], **flow_fields, **run_fields})
    table = pd.DataFrame(rows)
    table.attrs.update(runs=ran, stored=len(set_of(configs)) - ran if store is not None else 0)
    return table


def set_of(configs: Sequence[dict[str, Any]]) -> list[str]:
    """The distinct configs (as canonical JSON) of a list."""
    return list(dict.fromkeys(json.dumps(c, sort_keys=True) for c in configs))


def _axes(vary: dict[str, Sequence[str]] | Iterable[str]) -> dict[str, list[str]]:
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
            if not values:  # nothing to run at all
                raise ScenarioError(f"vary.{key}: an empty list of values; give at least one")
            axes[key] = [str(v) for v in values]
    elif isinstance(vary, list | tuple) and all(isinstance(v, str) for v in vary):
        axes = parse_vary(vary)
    else:
        raise ScenarioError(
            f"vary: expected {{key: [values]}} or a list of 'KEY=V1,V2' strings, got {show(vary)}"
        )
    if not axes:
        raise ScenarioError("vary: give at least one key and its values")
    return axes


def _source(scenario: Scenario) -> Scenario:
    """A scenario name ("real-20mbps") as its file in scenarios/, as the CLI takes it."""
    if isinstance(scenario, str) and not scenario.endswith(".toml"):
        return scenario_path(scenario)
    return scenario


def build(
    scenario: Scenario | list[Scenario],
    axes: dict[str, list[str]],
    *,
    seeds: Sequence[int] | None = None,
    set: Sequence[str] = (),  # noqa: A002
    duration: str | None = None,
    grid: list[dict[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The grid's points and their canonical configs, every one checked before anything runs.
    `grid` (points with a value for each axis and a seed) replaces the product of the axes."""
    scenarios = scenario if isinstance(scenario, list) else [scenario]
    if not scenarios:
        raise ScenarioError("sweep: an empty list of scenarios; give at least one")
    if seeds is not None and not len(seeds):
        raise ScenarioError("seeds: an empty list; give at least one, or none for the scenario's")
    for item in set:
        # The point's value would replace this one, which would never run (nor be checked).
        key = item.partition("=")[0].strip()
        if key in axes:
            raise ScenarioError(
                f"--set {item}: {key} is also varied (--vary or the plan's axes), which "
                "sets it at every point; give its values there alone"
            )
    names = [scenario_name(s) for s in scenarios]
    if len(dict.fromkeys(names)) != len(names):
        raise ScenarioError(f"sweep: a scenario is named twice in {names}")
    many = isinstance(scenario, list)
    if seeds:
        check_points(len(seeds), "seeds")  # before a range of them is listed
    base = grid if grid is not None else points(axes, list(seeds) if seeds else [None])
    check_points(len(names) * len(base), "sweep")
    full = [{**({"scenario": name} if many else {}), **point} for name in names for point in base]
    by_name = dict(zip(names, (_source(s) for s in scenarios), strict=True))
    configs = []
    # The seed only sets the config's `seed`: a point is loaded once for all its seeds.
    loaded: dict[tuple[Any, ...], dict[str, Any]] = {}
    for point in full:
        sets = [*set, *(f"{k}={point[k]}" for k in axes)]
        name, seed = point.get("scenario", names[0]), point["seed"]
        once = (name, *sets, seed is None)
        if once in loaded:
            base = loaded[once]
            configs.append(base if seed is None else {**base, "seed": parse_int(seed, "seed")})
            continue
        try:
            config = load(by_name[name], set=sets, seed=seed, duration=duration)
        except ValueError as e:
            where = ", ".join(f"{k}={point[k]}" for k in point if k != "seed")
            raise ScenarioError(f"sweep point {where}: {e}") from None
        loaded[once] = config
        configs.append(config)
    return full, configs


def check_metric(metric: str) -> None:
    """Before any run: `metric` must be a number the core reports per flow (its summary
    schema) or per run (RUN_FIELDS)."""
    schema = core_schema()
    numbers = [k for k in schema["flow"] if k != "id" and k not in schema["text"]]
    numbers += RUN_FIELDS
    if metric not in numbers:
        raise ScenarioError(
            f"--metric {metric}: not a number the summary holds per flow; accepted: "
            + ", ".join(numbers)
        )


def default_metric(rows: pd.DataFrame) -> tuple[str, str]:
    """completion_s when every flow swept has a size and some complete, else goodput_bps
    (which every flow has); and why, in words."""
    if "size_bytes" not in rows.columns or rows["size_bytes"].isna().any():
        return "goodput_bps", "default: a flow has no size, so it never completes"
    if "completion_s" not in rows.columns or rows["completion_s"].isna().all():
        return "goodput_bps", "default: no flow completed within the run"
    return "completion_s", "default: every flow has a size"


def aggregate(rows: pd.DataFrame, keys: Sequence[str], metric: str) -> pd.DataFrame:
    """Median, min and max of `metric` over seeds, per grid point and flow; `runs` counts the
    runs, `valued` those with a value of `metric` (a flow that never completes has no
    completion_s)."""
    if metric not in rows.columns:
        accepted = ", ".join(c for c in rows.columns if c not in (*keys, "seed", "flow", "cc"))
        raise ScenarioError(f"--metric {metric}: not a summary field; accepted: {accepted}")
    groups = rows.groupby([*keys, "flow", "cc"], sort=False, dropna=False)[metric]
    table = groups.agg(["median", "min", "max", "size", "count"]).reset_index()
    return table.rename(columns={"size": "runs", "count": "valued"})


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


# Past this many series on one axes, lines differ by dash as well as colour.
COLOURS = 8


def plot(table: pd.DataFrame, keys: Sequence[str], metric: str) -> Figure:
    """`metric` (median over seeds, min-max bars) against the first varied key, one series per
    combination of the other keys and flow: lines when the key's values are numbers, else
    markers side by side at each value. A point with no value (say a flow that never
    completes) is a dotted grey line across the axes marked "no value", never a point on the
    scale; the legend sits outside the axes. The y axis names the metric's quantity and unit
    (plot.axis_label), the title the controller and what was varied."""
    x_key = keys[0]
    others = [*keys[1:], *(["flow"] if table["flow"].nunique() > 1 else [])]
    fig = mpl_figure.Figure(figsize=(8, 4))
    ax = fig.subplots()
    xs = list(dict.fromkeys(table[x_key]))
    series = list(table.groupby(others, sort=False)) if others else [((), table)]
    numeric = all(_is_number(v) for v in xs)
    width = 0.0 if numeric else 0.6 / max(len(series), 1)
    dashes = ["-", "--", ":", "-."]
    markers = ["o", "s", "^", "D"]
    missing_label = "no value (dotted)"
    for i, (label, line) in enumerate(series):
        label = label if isinstance(label, tuple) else (label,)
        name = ", ".join(f"{k}={v}" for k, v in zip(others, label, strict=True)) or metric
        shift = (i - (len(series) - 1) / 2) * width
        pos = [xs.index(v) + shift for v in line[x_key]]
        med = line["median"].astype(float)
        err = [med - line["min"].astype(float), line["max"].astype(float) - med]
        style = dashes[(i // COLOURS) % len(dashes)] if numeric else "none"
        ax.errorbar(
            pos,
            med,
            yerr=err,
            marker=markers[(i // COLOURS) % len(markers)],
            capsize=3,
            linestyle=style,
            color=f"C{i % COLOURS}",
            label=name,
        )
        for p in (p for p, m in zip(pos, med, strict=True) if m != m):
            ax.axvline(p, color="0.5", linestyle=":", linewidth=1.2, label=missing_label)
            ax.text(
                p,
                0.5,
                "no value",
                rotation=90,
                ha="right",
                va="center",
                fontsize=7,
                color="0.35",
                transform=ax.get_xaxis_transform(),
            )
            missing_label = "_"
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    if not numeric and sum(len(str(v)) for v in xs) > 60:
        ax.tick_params(axis="x", labelrotation=20)
    ax.set_xlabel(x_key)
    ax.set_ylabel(axis_label(metric))
    ccs = list(dict.fromkeys(table["cc"])) if "cc" in table.columns else []
    by = f" ({ccs[0]})" if len(ccs) == 1 else ""
    ax.set_title(f"{axis_label(metric)}{by} against {x_key}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig
