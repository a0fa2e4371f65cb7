"""The scorecard's files (`slowstart score --out DIR`): scorecard.html, one self-contained page
(the rank heat map, the metrics' definitions, per path its table with the best of each column
marked and a small figure of each controller's cwnd over the flow's first seconds), the
figures beside it as PNG, scorecard.json and scorecard.md.
"""

from __future__ import annotations

import datetime
import html
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from slowstart import lazy
from slowstart.plot import heat_colours
from slowstart.reports.report import CHECK, STYLE, _png, _table
from slowstart.reports.score import (
    LEGEND,
    Scorecard,
    as_json,
    cell_text,
    columns,
    format_markdown,
    header,
    mean_ranks,
    shown_unit,
)
from slowstart.reports.score_metrics import METRICS
from slowstart.running.records import engine_version

if TYPE_CHECKING:
    from matplotlib.figure import Figure

mpl_figure = lazy.module("matplotlib.figure")
np = lazy.module("numpy")


EXTRA_STYLE = """
td.best { font-weight: 700; background: #e8f5e9; }
.legend { color: #555; font-size: 13px; max-width: 900px; }
td.doc { text-align: left; max-width: 700px; }
"""
# Panels per row of a path's cwnd figure.
PANELS = 6


def ranked_order(card: Scorecard) -> list[str]:
    """Controllers by mean rank, best first (those without one last, as given)."""
    ranks = mean_ranks(card)
    return sorted(card.controllers, key=lambda cc: (ranks[cc] is None, ranks[cc] or 0.0))


def rank_figure(card: Scorecard) -> Figure:
    """Rows: every ranked path x metric, a line between paths; columns: controllers by mean
    rank, best on the left; colour: the rank in its row from best to worst on the heat maps'
    scale (plot.heat_colours), the rank written in; a cell without a value grey, "-"."""
    cols = [(p, m, c) for p, m, c in columns(card) if m.ranked]
    order = ranked_order(card)
    grid = np.full((len(cols), len(order)), np.nan)
    for i, (_p, _m, col) in enumerate(cols):
        ranks = [v.rank for v in col.values() if v.median is not None and v.rank is not None]
        worst = max(ranks, default=1)
        for j, cc in enumerate(order):
            if col[cc].median is not None and col[cc].rank is not None:
                grid[i, j] = 0.0 if worst == 1 else (col[cc].rank - 1) / (worst - 1)
    fig = mpl_figure.Figure(
        figsize=(max(5.0, 0.42 * len(order) + 3.2), max(3.0, 0.22 * len(cols) + 2.0))
    )
    ax = fig.subplots()
    image = ax.imshow(grid, cmap=heat_colours(), vmin=0, vmax=1, aspect="auto")
    for i, (_p, _m, col) in enumerate(cols):
        for j, cc in enumerate(order):
            label = "-" if col[cc].median is None else str(col[cc].rank)
            dark = not np.isnan(grid[i, j]) and grid[i, j] > 0.55
            colour = "white" if dark else "black"
            ax.text(j, i, label, ha="center", va="center", fontsize=6.5, color=colour)
    bar = fig.colorbar(image, ax=ax, shrink=0.6, ticks=[0, 1])
    bar.ax.set_yticklabels(["best", "worst"], fontsize=7)
    bar.set_label("rank in its row (grey: no value)", fontsize=7)
    for i in range(1, len(cols)):
        if cols[i][0].key != cols[i - 1][0].key:
            ax.axhline(i - 0.5, color="white", linewidth=2)
    ax.set_yticks(range(len(cols)), [f"{p.key} · {m.name}" for p, m, _ in cols], fontsize=7)
    ax.set_xticks(range(len(order)), order, fontsize=7, rotation=60, ha="left")
    ax.xaxis.tick_top()
    ax.set_title("Rank in each row (1 is best; - no value, ranked last, grey)", fontsize=9, pad=4)
    fig.tight_layout()
    return fig


def cwnd_figure(card: Scorecard, key: str) -> Figure:
    """One small panel per controller: cwnd over the path's BDP against time from the tested
    flow's start (the first seed), a dashed line at 1 BDP."""
    path = next(p for p in card.suite.paths if p.key == key)
    n = len(card.controllers)
    cols = min(PANELS, n)
    rows = math.ceil(n / cols)
    width, height = 2.0 * cols + 0.6, 1.45 * rows + 0.7
    fig = mpl_figure.Figure(figsize=(width, height))
    # Fixed margins (in inches) instead of tight_layout, which costs a second per figure.
    fig.subplots_adjust(
        left=0.55 / width,
        right=1 - 0.1 / width,
        bottom=0.5 / height,
        top=1 - 0.45 / height,
        wspace=0.12,
        hspace=0.45,
    )
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    for k, cc in enumerate(card.controllers):
        ax = axes[k // cols][k % cols]
        series = card.cells[(key, cc)].cwnd
        ax.plot(series.get("t", []), series.get("cwnd_bdp", []), color="C0", linewidth=1.0)
        ax.axhline(1.0, color="0.4", linestyle="--", linewidth=0.7)
        ax.set_title(cc, fontsize=7.5)
        ax.tick_params(labelsize=6.5)
        ax.grid(alpha=0.3)
    for k in range(n, rows * cols):
        axes[k // cols][k % cols].set_visible(False)
    ax0 = axes[0][0]
    ax0.set_xlim(0, path.figure_s)
    ax0.set_ylim(bottom=0)
    fig.supxlabel("seconds from the flow's start", fontsize=8, y=0.02)
    fig.supylabel("cwnd / BDP", fontsize=8, x=0.01)
    fig.suptitle(f"{path.key}: cwnd over the first {path.figure_s:g} s", fontsize=9, y=0.99)
    return fig


def _name(key: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in key)


def write(card: Scorecard, out_dir: str | Path) -> list[Path]:
    """Write scorecard.html, .json, .md and the figures (ranks.png, cwnd-<path>.png)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "scorecard.json", out / "scorecard.md"]
    written[0].write_text(json.dumps(as_json(card), indent=1) + "\n", encoding="utf-8")
    written[1].write_text(format_markdown(card), encoding="utf-8")
    ranks_png = out / "ranks.png"
    rank_figure(card).savefig(ranks_png, dpi=110)
    written.append(ranks_png)
    cols = columns(card)
    sections = []
    for path in card.suite.paths:
        png = out / f"cwnd-{_name(path.key)}.png"
        cwnd_figure(card, path.key).savefig(png, dpi=110)
        written.append(png)
        mine = [(m, c) for p, m, c in cols if p.key == path.key]
        rows = [
            [(cc, "")] + [(cell_text(m, c[cc]), "best" if c[cc].best else "") for m, c in mine]
            for cc in card.controllers
        ]
        seeds = ", ".join("the scenario's" if s is None else str(s) for s in path.seeds)
        sections.append(
            f'<h2 id="{html.escape(_name(path.key))}">{html.escape(path.key)}: '
            f"{html.escape(path.title)}</h2>"
            f'<p class="note">source: {html.escape(path.source)}<br>seeds: {seeds}</p>'
            + _table(["cc", *(header(m) for m, _ in mine)], rows)
            + _png(png)
        )
    ranks = mean_ranks(card)
    rank_rows = [
        [(cc, ""), ("-" if ranks[cc] is None else f"{ranks[cc]:.2f}", "")]
        for cc in ranked_order(card)
    ]
    used = list(dict.fromkeys(name for p in card.suite.paths for name in p.metrics))
    metric_rows = [
        [(name, ""), (shown_unit(METRICS[name]), ""), (METRICS[name].better_text, "")]
        + [(METRICS[name].doc, "doc")]
        for name in used
    ]
    generated = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    suite = card.suite
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(suite.name)}</title>"
        f"<style>{STYLE}{EXTRA_STYLE}</style></head><body>"
        f"<h1>{html.escape(suite.name)}</h1>"
        f'<p class="note">{html.escape(suite.description)}<br>suite {html.escape(str(suite.file))}'
        f" (version {suite.version}); {len(card.controllers)} controllers on "
        f"{len(suite.paths)} paths; engine {html.escape(engine_version())}; "
        f"generated {generated}.</p>"
        f'<p class="legend">{html.escape(LEGEND)}</p>'
        "<h2>Ranks</h2>"
        + _png(ranks_png)
        + _table(["cc", "mean rank"], rank_rows)
        + "<h2>Metrics</h2>"
        + _table(["metric", "unit", "better", "definition"], metric_rows)
        + "".join(sections)
        + f"<script>{CHECK}</script></body></html>"
    )
    page_path = out / "scorecard.html"
    page_path.write_text(page, encoding="utf-8")
    return [page_path, *written]
