"""`slowstart report STORE_OR_DIR --out report.html`: one self-contained HTML page of what a
results store holds.

For every reproduction whose runs are all in the store: its table (variant, published, ours,
difference, verdict, by the rule in `reproductions.experiment.VERDICT_RULE`) and its figures,
made again from the stored runs (nothing is simulated). For each swarm study: its findings with
their verdicts and its figures, from the stored runs likewise. For sweeps (runs stored with
source `sweep`, grouped by scenario and varied keys): the metric against the first varied key,
one interactive plot per flow, and a heatmap over the first two keys when there are two or more.
Plotly's script is embedded once, so the page reads offline; matplotlib figures are embedded as
PNG. A small script at the end of the page records in `<body data-figures>` how many figures
were drawn, for tests in a browser.
"""

from __future__ import annotations

import base64
import datetime
import html
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.loading.scenario import load
from slowstart.paths import scenario_path
from slowstart.plot import axis_label
from slowstart.reproductions.reproduce import (
    EXPERIMENTS,
    VERDICT_RULE,
    cells,
    headers,
    missing_algorithms,
    run_experiment,
    tally,
)
from slowstart.reproductions.swarm import stored_studies
from slowstart.reproductions.swarm_figures import write_outputs
from slowstart.reproductions.swarm_findings import (
    FINDING_COLUMNS,
    FINDING_NOTES,
    describe,
    findings,
)
from slowstart.reproductions.swarm_findings import tally as swarm_tally
from slowstart.reproductions.swarm_study import SOURCE, TITLE
from slowstart.running.records import engine_version, run_key
from slowstart.running.store import Store
from slowstart.running.sweeps import aggregate, default_metric
from slowstart.units import ScenarioError, split_quantity

if TYPE_CHECKING:
    from slowstart.running.store import Store

go = lazy.module("plotly.graph_objects")
pd = lazy.module("pandas")
plotly_offline = lazy.module("plotly.offline")


STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1150px;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 13px; }
th, td { padding: 3px 9px; border-bottom: 1px solid #e4e4e4; text-align: right; }
th:first-child, td:first-child { text-align: left; }
td.ok { color: #1b5e20; font-weight: 600; } td.off { color: #b71c1c; font-weight: 600; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
.note { color: #555; font-size: 13px; } .figure { margin: 0.8em 0; }
"""

# Marks every figure drawn (a loaded image, a plotly plot with its SVG), for browser tests.
CHECK = """
window.addEventListener("load", function () {
  var figs = document.querySelectorAll(".figure");
  var drawn = 0;
  figs.forEach(function (f) {
    var img = f.querySelector("img");
    if (img ? (img.complete && img.naturalWidth > 0) : f.querySelector(".main-svg")) drawn++;
  });
  document.body.setAttribute("data-figures", drawn + "/" + figs.length);
});
"""


@dataclass
class Section:
    title: str
    body: str


def _png(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return (
        f'<div class="figure"><img alt="{html.escape(path.name)}" '
        f'src="data:image/png;base64,{data}"></div>'
    )


def _table(headers: list[str], rows: list[list[tuple[str, str]]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{c}">{html.escape(v)}</td>' if c else f"<td>{html.escape(v)}</td>"
            for v, c in row
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def reproductions(store: Store, sources: set[str]) -> list[Section]:
    """A section per reproduction whose every run is stored."""
    sections = []
    keys = store.keys()
    for name, exp in EXPERIMENTS.items():
        if f"reproduce {name}" not in sources:
            continue
        wanted = [
            run_key(
                load(scenario_path(v.scenario or exp.scenario), set=[*exp.common, *v.overrides])
            )
            for v in exp.variants
            if not missing_algorithms(v)
        ]
        if not set(wanted) <= keys:
            missing = len(set(wanted) - keys)
            sections.append(
                Section(
                    f"{name}: {exp.title}",
                    f'<p class="note">{missing} of its runs are not in this store (made by '
                    f"another engine version, or never run): run <code>slowstart reproduce "
                    f"{name}</code> to complete it.</p>",
                )
            )
            continue
        with tempfile.TemporaryDirectory() as tmp:
            rows, written = run_experiment(exp, tmp, store=store)
            figures = "".join(_png(p) for p in written if p.suffix == ".png")
        table_rows = []
        for r in rows:
            *shown, verdict = cells(exp, r)
            table_rows.append(
                [(c, "") for c in shown] + [(verdict, verdict if verdict in ("ok", "off") else "")]
            )
        body = (
            f'<p class="note">source: {html.escape(exp.source)}<br>metric: '
            f"{html.escape(exp.metric)}; {tally(exp, rows)}</p>"
            + _table(headers(exp), table_rows)
            + f'<p class="note">{html.escape(VERDICT_RULE)}</p>'
            + figures
        )
        sections.append(Section(f"{name}: {exp.title}", body))
    if "reproduce swarm" in sources:
        sections += swarm_studies(store)
    return sections


def swarm_studies(store: Store) -> list[Section]:
    """A section per swarm study in the store: its findings with their verdicts and the
    study's figures, made again from the stored runs (`reproductions.swarm.stored_studies`)."""
    studies = stored_studies(store)
    if not studies:
        return [
            Section(
                f"swarm: {TITLE}",
                '<p class="note">Its runs in this store were made by another engine version: '
                "run <code>slowstart reproduce swarm</code> again to see its findings.</p>",
            )
        ]
    sections = []
    for study in studies:
        rows = findings(study)
        with tempfile.TemporaryDirectory() as tmp:
            written = write_outputs(study, rows, tmp)
            figures = "".join(_png(p) for p in written if p.suffix == ".png")
        table = _table(
            FINDING_COLUMNS,
            [
                [(r.label, ""), (r.published, ""), (r.ours, ""), (r.tolerance, "")]
                + [(r.verdict, r.verdict if r.verdict in ("ok", "off") else "")]
                for r in rows
            ],
        )
        body = (
            f'<p class="note">source: {html.escape(SOURCE)}<br>'
            f"{html.escape('; '.join([*study.notes, describe(study)]))}; {swarm_tally(rows)}</p>"
            f"{table}"
            f'<p class="note">{html.escape(FINDING_NOTES)}</p>'
            f"{figures}"
        )
        sections.append(Section(f"swarm: {TITLE}", body))
    return sections


def _order(values: list[Any]) -> list[Any]:
    """Axis values by their quantity when each is one ("10ms" before "200ms"), else as met."""
    try:
        keyed = [(split_quantity(v, "axis", "a quantity"), v) for v in values]
    except (ValueError, TypeError):
        return values
    return [v for (q, _u), v in sorted(keyed, key=lambda kv: kv[0][0])] if keyed else values


def sweeps(store: Store) -> tuple[list[Section], list[str]]:
    """A section per sweep in the store, and the plotly figures' HTML."""
    runs = store.con.execute("SELECT key, point FROM runs WHERE source = 'sweep'").fetchall()
    if not runs:
        return [], []
    signature = {key: tuple(k for k in json.loads(p or "{}") if k != "seed") for key, p in runs}
    table = store.table("flows")
    table = table[table["source"] == "sweep"].copy()
    table["_axes"] = table["key"].map(signature)
    sections = []
    figures = []
    for (scenario, axes), rows in table.groupby(["scenario", "_axes"], sort=False):
        axes = [a for a in axes if a != "scenario"]
        if not axes:
            continue
        rows = rows.dropna(axis=1, how="all")
        metric, why = default_metric(rows)
        agg = aggregate(rows, axes, metric)
        x_key = axes[0]
        xs = _order(list(dict.fromkeys(agg[x_key])))
        parts = [
            f'<p class="note">{len(rows)} flow rows from {rows["key"].nunique()} runs; '
            f"varied: {html.escape(', '.join(axes))}; metric {metric} ({why}): median over "
            f"seeds, bars from min to max.</p>"
        ]
        for flow, per_flow in agg.groupby("flow", sort=True):
            fig = go.Figure()
            others = axes[1:]
            groups = per_flow.groupby(others, sort=False) if others else [((), per_flow)]
            for label, line in groups:
                label = label if isinstance(label, tuple) else (label,)
                name = ", ".join(f"{k}={v}" for k, v in zip(others, label, strict=True)) or metric
                line = line.set_index(x_key).reindex(xs)
                fig.add_trace(
                    go.Scatter(
                        x=[str(x) for x in xs],
                        y=line["median"],
                        error_y={
                            "type": "data",
                            "symmetric": False,
                            "array": line["max"] - line["median"],
                            "arrayminus": line["median"] - line["min"],
                        },
                        mode="lines+markers",
                        name=name,
                    )
                )
            fig.update_layout(
                title=f"{scenario}, flow {flow}: {metric} against {x_key}",
                xaxis_title=x_key,
                yaxis_title=axis_label(metric),
                height=420,
                margin={"l": 60, "r": 20, "t": 50, "b": 50},
            )
            figures.append(fig.to_html(full_html=False, include_plotlyjs=False))
            parts.append(f'<div class="figure">{figures[-1]}</div>')
            if len(axes) >= 2:
                y_key = axes[1]
                ys = _order(list(dict.fromkeys(per_flow[y_key])))
                grid = per_flow.groupby([y_key, x_key])["median"].median().unstack(x_key)
                grid = grid.reindex(index=ys, columns=xs)
                heat = go.Figure(
                    go.Heatmap(
                        z=grid.to_numpy(dtype=float),
                        x=[str(x) for x in xs],
                        y=[str(y) for y in ys],
                        colorbar={"title": axis_label(metric)},
                        # plot.heat_colours: lower is better and light; a gap stays blank
                        colorscale="Viridis",
                        reversescale=True,
                        hoverongaps=False,
                    )
                )
                heat.update_layout(
                    title=f"{scenario}, flow {flow}: median {metric} over {x_key} and {y_key}",
                    xaxis_title=x_key,
                    yaxis_title=y_key,
                    xaxis_type="category",
                    yaxis_type="category",
                    height=420,
                    margin={"l": 80, "r": 20, "t": 50, "b": 50},
                )
                figures.append(heat.to_html(full_html=False, include_plotlyjs=False))
                parts.append(f'<div class="figure">{figures[-1]}</div>')
        missing = agg[agg["valued"] < agg["runs"]]
        if len(missing):
            parts.append(
                f'<p class="note">{len(missing)} points have runs without a {metric} '
                "(a gap in the plot, a blank cell in the heatmap).</p>"
            )
        sections.append(Section(f"sweep of {scenario} over {', '.join(axes)}", "".join(parts)))
    return sections, figures


def report(source: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Write the report of a store (or of a folder holding `results.duckdb`) to `out`."""
    path = Path(source)
    if path.is_dir():
        candidates = [path / "results.duckdb", *sorted(path.glob("*.duckdb"))]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise ScenarioError(f"{path}: no results store (*.duckdb) in this folder")
        path = found
    with Store(path, read_only=True) as store:
        runs = store.runs()
        sources = set(runs["source"]) if len(runs) else set()
        sections = reproductions(store, sources)
        sweep_sections, _ = sweeps(store)
    sections += sweep_sections
    generated = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = "".join(f"<h2>{html.escape(s.title)}</h2>{s.body}" for s in sections)
    if not sections:
        body = '<p class="note">This store holds no reproduction or sweep runs yet.</p>'
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<title>slowstart report</title>"
        f"<style>{STYLE}</style>"
        f'<script type="text/javascript">{plotly_offline.get_plotlyjs()}</script>'
        "</head><body>"
        "<h1>slowstart report</h1>"
        f'<p class="note">{html.escape(str(path))}: {len(runs)} runs; engine '
        f"{html.escape(engine_version())}; generated {generated}.</p>"
        f"{body}<script>{CHECK}</script></body></html>"
    )
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out
