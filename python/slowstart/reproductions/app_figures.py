"""Figures and tables of the two application reproductions (`slowstart reproduce bittorrent`
and `slowstart reproduce web-initcwnd`)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING

from slowstart import lazy
from slowstart.paths import scenario_path
from slowstart.plot import plot_heatmap, plot_request_ramp
from slowstart.running.plan import grid

if TYPE_CHECKING:
    from slowstart.reproductions.experiment import Experiment
    from slowstart.running.api import Result

np = lazy.module("numpy")


# The initcwnd × initrwnd grid of the web reproduction, in segments.
GRID_WINDOWS = (2, 3, 4, 10, 16, 20)


def request_ramp_figures(exp: Experiment, results: list[Result], out: Path) -> list[Path]:
    """cwnd, bytes in flight and outstanding requests against time, one panel per setting."""
    runs = [
        (v.label, r.flows, r.apps, r.summary["flows"][exp.flow]["slow_start_exit_s"])
        for v, r in zip(exp.variants, results, strict=True)
    ]
    exits = [x for *_, x in runs if x is not None]
    until = max(exits) + 1.0 if exits else None
    fig = plot_request_ramp(runs, exp.title, flow=exp.flow, until_s=until)
    path = out / f"{exp.name}-requests.png"
    fig.savefig(path, dpi=120)
    return [path]


def window_grid_figures(exp: Experiment, results: list[Result], out: Path) -> list[Path]:
    """The initcwnd × initrwnd grid of the scenario's object: a CSV, a text table and a heatmap
    of first-to-last-byte time annotated with the stall count."""
    config = results[0].config
    size = config["flows"][exp.flow]["app"]["response_bytes"][0]
    rows = grid(scenario_path(exp.scenario), [size], GRID_WINDOWS, GRID_WINDOWS, exp.common)
    written = [out / f"{exp.name}-grid.csv", out / f"{exp.name}-grid.txt"]
    keys = ["initcwnd", "initrwnd", "stalls", "round_trips", "first_to_last_s", "total_s"]
    with written[0].open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    n = len(GRID_WINDOWS)
    ftl = np.array([r["first_to_last_s"] * 1e3 for r in rows]).reshape(n, n)
    stalls = np.array([r["stalls"] for r in rows]).reshape(n, n)
    header = "initcwnd \\ initrwnd " + "".join(f"{c:>14}" for c in GRID_WINDOWS)
    lines = [f"{exp.title}: stalls / first-to-last byte (ms), {size:,} B object", header]
    for i, c in enumerate(GRID_WINDOWS):
        cells = "".join(f"{f'{stalls[i, j]} / {ftl[i, j]:.1f}':>14}" for j in range(n))
        lines.append(f"{c:>19} {cells}")
    written[1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    labels = np.array(
        [f"{ftl[i, j]:.0f} ms\n{stalls[i, j]} st" for i in range(n) for j in range(n)]
    ).reshape(n, n)
    fig = plot_heatmap(
        ftl,
        labels,
        list(GRID_WINDOWS),
        list(GRID_WINDOWS),
        f"{exp.title}\nfirst-to-last byte and stalls, {size:,} B",
        "first-to-last byte (ms)",
    )
    written.append(out / f"{exp.name}-heatmap.png")
    fig.savefig(written[-1], dpi=120)
    return written
