"""Published experiments, as data, and running them beside the published numbers.

To add one, append an `Experiment` to `EXPERIMENTS`: a scenario, overrides shared by all
variants, and per variant its own overrides and the published value of one summary metric.
A variant may read another value (`metric`: a dotted path into the summary such as
`apps.0.objects.0.stalls`, or a function of it) and may compare against a bound (`bound`:
"<" when the publication says "under", ">" for "over"). An experiment may draw its own
figures (`figures`) instead of the cwnd overlay.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slowstart.api import Result, run
from slowstart.app_figures import request_ramp_figures, window_grid_figures
from slowstart.paths import scenario_path
from slowstart.plan import first_object
from slowstart.plot import plot_overlay

Metric = str | Callable[[dict[str, Any]], float | None]


@dataclass(frozen=True)
class Variant:
    label: str
    overrides: tuple[str, ...]
    published: float
    metric: Metric | None = None  # default: the experiment's flow metric
    bound: str = "="  # "=": within tolerance; "<" / ">": published is an upper / lower bound
    unit: str | None = None  # default: the experiment's unit


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    source: str
    scenario: str  # file stem in scenarios/
    metric: str  # key of summary["flows"][flow]
    unit: str
    tolerance: float  # relative, e.g. 0.10 for ±10%
    common: tuple[str, ...]
    variants: tuple[Variant, ...]
    flow: int = 0
    # Figures and tables of its own: (experiment, results by variant, folder) -> paths written.
    figures: Callable[[Experiment, list[Result], Path], list[Path]] | None = field(
        default=None, compare=False
    )


def summary_value(summary: dict[str, Any], path: str) -> Any:
    """`flows.0.slow_start_exit_s`-style lookup; None where the path has no value."""
    node: Any = summary
    for part in path.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node


def variant_value(exp: Experiment, v: Variant, summary: dict[str, Any]) -> float | None:
    metric = v.metric if v.metric is not None else f"flows.{exp.flow}.{exp.metric}"
    return metric(summary) if callable(metric) else summary_value(summary, metric)


EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in [
        Experiment(
            name="floyd",
            title="Floyd's early loss: seconds from an early slow-start loss to the window cap",
            source="net100, Floyd's TCP slow-start and AIMD mods (ns-2, 500 Mbps, 80 ms, 3500 seg)",
            scenario="lfn-early-loss",
            metric="time_to_window_cap_s",
            unit="s",
            tolerance=0.10,
            common=("flow.0.abc=false",),
            variants=(
                Variant("standard TCP", ("flow.0.delayed_ack=false",), 284),
                Variant("standard TCP (del ACK)", ("flow.0.delayed_ack=true",), 577),
                Variant(
                    "standard TCP, jumbo frames",
                    ("flow.0.delayed_ack=false", "flow.0.mss=8960"),
                    47,
                ),
                Variant(
                    "standard TCP (del ACK), jumbo frames",
                    ("flow.0.delayed_ack=true", "flow.0.mss=8960"),
                    91,
                ),
            ),
        ),
        Experiment(
            name="bittorrent",
            title="A new seeding uTP connection: when the seed leaves slow start",
            source="libtorrent blog, slow start (BitTorrent request slow start, libtorrent 1.0.6)",
            scenario="bittorrent-request-slowstart",
            metric="slow_start_exit_s",
            unit="s",
            tolerance=0.25,
            common=(),
            variants=(
                Variant(
                    "request queue by rate only (before 1.0.6)",
                    ("app.0.app_slow_start=false",),
                    3.2,
                ),
                Variant(
                    "request slow start (1.0.6)", ("app.0.app_slow_start=true",), 1.0, bound="<"
                ),
            ),
            figures=request_ramp_figures,
        ),
        Experiment(
            name="web-initcwnd",
            title="A 17 kB page on a new connection, 10 Mbps, 50 ms RTT",
            source="Habets 2011, Optimizing TCP slow start (initcwnd/initrwnd)",
            scenario="web-initcwnd",
            metric="apps.0.objects.0 (first object of the web flow)",
            unit="",
            tolerance=0.25,
            common=(),
            variants=(
                Variant(
                    "defaults of the time (initcwnd 3, initrwnd 4): first to last byte",
                    (),
                    0.170,
                    metric="apps.0.objects.0.first_to_last_s",
                    unit=" s",
                ),
                Variant(
                    "defaults of the time: stalls (published 4-6)",
                    (),
                    5,
                    metric="apps.0.objects.0.stalls",
                ),
                Variant(
                    "initcwnd 20, initrwnd 20: round trips in all",
                    ("flow.0.initcwnd=20", "flow.0.initrwnd=20"),
                    2,
                    metric=lambda s: (first_object(s) or {}).get("round_trips"),
                ),
                Variant(
                    "initcwnd 20, initrwnd 20: first to last byte (single-digit ms)",
                    ("flow.0.initcwnd=20", "flow.0.initrwnd=20"),
                    0.0099,
                    metric="apps.0.objects.0.first_to_last_s",
                    bound="<",
                    unit=" s",
                ),
            ),
            figures=window_grid_figures,
        ),
    ]
}


@dataclass
class Row:
    label: str
    published: float
    ours: float | None
    tolerance: float
    bound: str = "="
    unit: str | None = None

    @property
    def rel_diff(self) -> float | None:
        return None if self.ours is None else (self.ours - self.published) / self.published

    @property
    def verdict(self) -> str:
        rel = self.rel_diff
        if rel is None:
            return "not reached"
        if self.bound == "<":
            return "ok" if rel <= self.tolerance else "off"
        if self.bound == ">":
            return "ok" if rel >= -self.tolerance else "off"
        return "ok" if abs(rel) <= self.tolerance else "off"

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "published": self.published,
            "bound": self.bound,
            "ours": self.ours,
            "rel_diff": self.rel_diff,
            "verdict": self.verdict,
        }


def unknown_experiment(names: list[str]) -> str | None:
    for name in names:
        if name not in EXPERIMENTS:
            return f"reproduce: unknown experiment {name!r} (accepted: {', '.join(EXPERIMENTS)})"
    return None


def run_experiment(
    exp: Experiment,
    out_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[Row], list[Path]]:
    """Run every variant (telling `progress` each label); plot them into `out_dir` if given."""
    scenario = scenario_path(exp.scenario)
    rows: list[Row] = []
    results: list[Result] = []
    for v in exp.variants:
        if progress:
            progress(v.label)
        result = run(scenario, set=[*exp.common, *v.overrides])
        ours = variant_value(exp, v, result.summary)
        rows.append(Row(v.label, v.published, ours, exp.tolerance, v.bound, v.unit))
        results.append(result)
    written: list[Path] = []
    if out_dir is not None and exp.figures is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = exp.figures(exp, results, out)
    elif out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        curves = [
            (v.label, r.flows, v.published) for v, r in zip(exp.variants, results, strict=True)
        ]
        fig = plot_overlay(curves, f"{exp.title}\n(dashed: published)", flow=exp.flow)
        written.append(out / f"{exp.name}-cwnd.png")
        fig.savefig(written[-1], dpi=120)
    return rows, written


def format_table(exp: Experiment, rows: list[Row]) -> str:
    """A plain table: published, ours, relative difference, verdict."""
    head = f"{exp.name}: {exp.title}\n  source: {exp.source}\n  metric: {exp.metric}"
    width = max(len(r.label) for r in rows)
    lines = [
        head,
        f"  {'variant':<{width}}  {'published':>10}  {'ours':>10}  {'diff':>7}  verdict "
        f"(±{exp.tolerance:.0%})",
    ]
    for r in rows:
        unit = exp.unit if r.unit is None else r.unit
        ours = "-" if r.ours is None else f"{r.ours:.1f}" if abs(r.ours) >= 10 else f"{r.ours:.3g}"
        diff = "-" if r.rel_diff is None else f"{r.rel_diff:+.1%}"
        published = f"{'' if r.bound == '=' else r.bound}{r.published:g}"
        lines.append(
            f"  {r.label:<{width}}  {published:>9}{unit}  {ours:>9}{unit}  {diff:>7}  {r.verdict}"
        )
    ok = sum(r.verdict == "ok" for r in rows)
    lines.append(f"  {ok}/{len(rows)} within ±{exp.tolerance:.0%}")
    return "\n".join(lines)
