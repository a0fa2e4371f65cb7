"""The swarm study's figures (Testa and Rossi's Fig. 2 and 3 beside ours) and the files
`slowstart reproduce swarm` writes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from slowstart import lazy
from slowstart.reproductions.swarm_findings import Finding
from slowstart.reproductions.swarm_study import (
    PUBLISHED_QUEUE_MEANS,
    PUBLISHED_TCP_ABOVE_100,
    Study,
)
from slowstart.running.swarm_results import (
    COLOURS,
    LABELS,
    POPULATIONS,
    SEEDINGS,
    ccdf,
    ecdf,
    legend,
    ms_axis,
    new_figure,
    quartiles,
    rank_panel,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


mpl_figure = lazy.module("matplotlib.figure")
np = lazy.module("numpy")
pd = lazy.module("pandas")


# The paper's random-stay uplink queues (Fig. 2): mean packets per population, and the share of
# TCP samples above 100 packets.


# --- the reproduction's figures -----------------------------------------------------------------


def _panels(n: int, width: float = 11, height: float = 4) -> tuple[Figure, list[Axes]]:
    fig = new_figure(width, height)
    return fig, list(fig.subplots(1, n, squeeze=False)[0])


def plot_ranks(study: Study) -> Figure:
    """(a) Completion time against completion rank, one run (the first seed) per setting."""
    fig, axes = _panels(2)
    first = min(r.seed for r in study.runs)
    for ax, seeding in zip(axes, SEEDINGS, strict=True):
        series = []
        for p in POPULATIONS:
            runs = [r for r in study.of(p, seeding) if r.seed == first]
            if runs:
                peers = runs[0].peers
                done = peers[peers["completion_rank"].notna()].sort_values("completion_rank")
                series.append((p, done))
        rank_panel(ax, study.discard, series)
        ax.set_title(f"{LABELS[seeding]} (seed {first})")
    legend(axes[0], fontsize="small")
    fig.suptitle("Completion time by completion rank, one run per setting")
    return fig


def plot_cdfs(study: Study) -> Figure:
    """(b) Completion-time CDFs per population, never-leave and random-stay."""
    fig, axes = _panels(2)
    for ax, seeding in zip(axes, SEEDINGS, strict=True):
        for p in POPULATIONS:
            frame = study.downloads(p, seeding)
            if len(frame):
                x, y = ecdf(frame["completion_s"])
                ax.step(x, y, where="post", color=COLOURS[p], label=f"{LABELS[p]} ({len(x)})")
        ax.set_xlabel("completion time (s)")
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
        ax.set_title(LABELS[seeding])
        legend(ax, fontsize="small", title="population (downloads)")
    fig.suptitle("Completion time of the kept downloads, all repetitions")
    return fig


def plot_queues(study: Study) -> Figure:
    """(c) CCDF of uplink queue occupancy (10 Hz samples over the measurement window)."""
    fig, axes = _panels(2, height=4.4)
    for ax, seeding in zip(axes, SEEDINGS, strict=True):
        for p in POPULATIONS:
            hist = study.queue_hist(p, seeding)
            if hist.sum():
                x, y = ccdf(hist)
                ax.step(x, y, where="post", color=COLOURS[p], label=LABELS[p])
        ax.set_xlim(0, study.buffer)
        ax.set_ylim(0, 1)
        ax.set_xlabel("uplink queue (packets)")
        ax.set_ylabel("P(queue > x)")
        ax.grid(alpha=0.3)
        ax.set_title(LABELS[seeding])
        if seeding == "random_stay":
            # Published: each population's mean (dashed), TCP's share above 100 packets (x).
            for p, mean in PUBLISHED_QUEUE_MEANS.items():
                ax.axvline(mean, color=COLOURS[p], linestyle="--", linewidth=1)
            ax.plot([100], [PUBLISHED_TCP_ABOVE_100], "x", color=COLOURS["tcp"], markersize=9)
            ax.plot([], [], "k--", linewidth=1, label="published mean")
            ax.plot([], [], "kx", label="published: TCP > 100 pkt")
        ms_axis(ax, study.ms_per_packet)
        legend(ax, fontsize="small", title="population")
    fig.suptitle("Uplink queue occupancy, every uplink sampled at 10 Hz, CCDF")
    return fig


def plot_breakdown(study: Study) -> Figure:
    """(d) The 50-50 CDFs, uTP and TCP peers apart."""
    fig, axes = _panels(2)
    for ax, seeding in zip(axes, SEEDINGS, strict=True):
        frame = study.downloads("mixed", seeding)
        for t in ("utp", "tcp"):
            part = frame[frame["transport"] == t]
            if len(part):
                x, y = ecdf(part["completion_s"])
                ax.step(x, y, where="post", color=COLOURS[t], label=f"{LABELS[t]} ({len(x)})")
        ax.set_xlabel("completion time (s)")
        ax.set_ylabel("CDF")
        ax.set_ylim(0, 1)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
        ax.set_title(f"50-50, {LABELS[seeding]}")
        legend(ax, fontsize="small", title="peers (downloads)")
    fig.suptitle("50-50 swarms: completion time of uTP and TCP peers")
    return fig


def plot_buffers(study: Study) -> Figure:
    """(e) Completion time (mean, 1st and 3rd quartile) against the uplink buffer, uTP and TCP
    peers of the 50-50 random-stay swarm apart."""
    fig = new_figure(7, 4.4)
    ax = fig.subplots()
    for k, t in enumerate(("utp", "tcp")):
        xs, mean, q1, q3 = [], [], [], []
        for b in study.buffers:
            c = study.downloads("mixed", "random_stay", b, t)["completion_s"]
            q = quartiles(c)
            if q is None:
                continue
            xs.append(b * (1 + 0.03 * (k - 0.5)))  # side by side on the log axis
            mean.append(float(c.mean()))
            q1.append(q[0])
            q3.append(q[2])
        # The quartiles as bars of their own: a skewed sample's mean may lie outside them.
        colour = COLOURS[t]
        ax.vlines(xs, q1, q3, color=colour, lw=1.2)
        ax.plot(xs, q1, "_", xs, q3, "_", color=colour, markersize=8)
        ax.plot(xs, mean, marker="o", color=colour, label=f"{LABELS[t]} peers")
    ax.set_xscale("log")
    ax.set_yscale("log")  # a buffer below uTP's target costs several times the others
    low, high = ax.get_ylim()
    ticks = [v for v in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000) if low <= v <= high]
    ax.set_yticks(ticks, [str(v) for v in ticks])
    ax.set_xlabel("uplink buffer B (packets)")
    ax.set_ylabel("completion time (s): mean, 1st-3rd quartile")
    ax.set_xticks(list(study.buffers), [str(b) for b in study.buffers])
    ax.minorticks_off()
    ax.grid(alpha=0.3)
    ms_axis(ax, study.ms_per_packet, study.buffers)
    legend(ax, fontsize="small")
    ax.set_title("50-50 random stay: completion time against the uplink buffer")
    return fig


def write_outputs(study: Study, rows: list[Finding], out_dir: str | os.PathLike[str]) -> list[Path]:
    """swarm-*.png (the five figures), swarm-peers.parquet (every peer of every run, with its
    setting and seed) and swarm-findings.json."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = {
        "swarm-rank.png": plot_ranks,
        "swarm-cdf.png": plot_cdfs,
        "swarm-queues.png": plot_queues,
        "swarm-breakdown.png": plot_breakdown,
    }
    if study.buffers:
        figures["swarm-buffer.png"] = plot_buffers
    written = []
    for name, draw in figures.items():
        draw(study).savefig(out / name, dpi=120)
        written.append(out / name)
    frames = [
        r.peers.assign(
            population=r.setting.population,
            seeding=r.setting.seeding,
            buffer_packets=r.setting.buffer,
            seed=r.seed,
        )
        for r in study.runs
    ]
    written.append(out / "swarm-peers.parquet")
    pd.concat(frames, ignore_index=True).to_parquet(written[-1], index=False)
    written.append(out / "swarm-findings.json")
    written[-1].write_text(json.dumps([r.as_dict() for r in rows], indent=2) + "\n")
    return written
