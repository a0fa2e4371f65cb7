"""The net100 notes' two figures with cross traffic or parallel streams (`reproduce blast`,
`reproduce parallel`).

blast: "Tom Kelly's scalable TCP [...] compares the performance of Kelly's TCP with Floyd and
standard TCP. The test is from California to Cern. Each flow was run independently with a UDP
blast injected at around 3 seconds into each flow." The notes publish the figure, not numbers:
what is compared is the order of the recoveries, as ratios (standard / HighSpeed, HighSpeed /
Scalable recovery time, each published as "> 1").

parallel: "4 parallel streams [...] WAD-tuned with AIMD (0.125,4) [...] One stream uses Floyd's
modified slow start, and in this particular test, attains only 29 Mbs compared with 38 Mbs for
the other stream. The aggregate parallel stream achieved 82 Mbs." The scenario holds the four
streams; the single-stream variants keep its first flow only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.loading.scenario import apply_overrides, build_config, read_scenario
from slowstart.paths import scenario_path
from slowstart.plot import plot_overlay
from slowstart.reproductions.experiment import Row
from slowstart.running.api import Result, run_config

if TYPE_CHECKING:
    from slowstart.reproductions.experiment import Experiment, Row

mpl_figure = lazy.module("matplotlib.figure")
np = lazy.module("numpy")


BLAST_START_S = 3.0  # scenarios/net100-blast.toml's [[cross]] start


def recovery_s(result: Result, blast_s: float = BLAST_START_S, flow: int = 0) -> float | None:
    """Seconds from the blast's start until `flow`'s cwnd is back at its window cap, after the
    blast first took it below; None if it never falls or never comes back."""
    cap = result.config["flows"][flow]["max_window_bytes"]
    rows = result.flows[result.flows["flow"] == flow].sort_values("t_s")
    after = rows[rows["t_s"] >= blast_s]
    below = after[after["cwnd_bytes"] < cap]
    if below.empty:
        return None
    cut = float(below["t_s"].iloc[0])
    back = after[(after["t_s"] > cut) & (after["cwnd_bytes"] >= cap)]
    return None if back.empty else float(back["t_s"].iloc[0]) - blast_s


def total_goodput_mbps(summary: dict[str, Any]) -> float:
    """Every flow's goodput added up, Mbps (the notes' "aggregate")."""
    return sum(f["goodput_bps"] for f in summary["flows"]) / 1e6


def _config(exp: Experiment, overrides: tuple[str, ...], flows: int | None) -> dict[str, Any]:
    """The experiment's scenario with `overrides`, keeping its first `flows` flows (all: None)."""
    raw = read_scenario(scenario_path(exp.scenario))
    if flows is not None:
        raw["flow"] = raw["flow"][:flows]
    apply_overrides(raw, set=[*exp.common, *overrides])
    return build_config(raw)


def _run(exp: Experiment, overrides: tuple[str, ...], flows: int | None = None) -> Result:
    return run_config(_config(exp, overrides, flows))


def _overlay(exp: Experiment, labels: list[str], results: list[Result], out_dir: Any) -> list[Path]:
    if out_dir is None:
        return []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    curves = [(label, r.flows, None) for label, r in zip(labels, results, strict=True)]
    # Each cross source's sending interval (the blast), the same in every variant.
    config = results[0].config
    spans = [
        (
            c.get("start_ns", 0) / 1e9,
            (c.get("stop_ns") or config["duration_ns"]) / 1e9,
            f"UDP {c['kind']} at {c['rate_bps'] / 1e6:g} Mbps",
        )
        for c in config.get("cross") or []
    ]
    fig = plot_overlay(curves, exp.title, flow=exp.flow, spans=spans)
    path = out / f"{exp.name}-cwnd.png"
    fig.savefig(path, dpi=120)
    return [path]


def run_blast(
    exp: Experiment,
    out_dir: Any = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[Row], list[Path]]:
    say = progress or (lambda _: None)
    results = []
    for v in exp.variants:
        say(v.label)
        results.append(_run(exp, v.overrides))
    times = [recovery_s(r, flow=exp.flow) for r in results]
    rows = [
        Row(f"{v.label}: recovery", v.published, t, exp.tolerance, unit=" s")
        for v, t in zip(exp.variants, times, strict=True)
    ]
    # Each slower than the next: standard / HighSpeed and HighSpeed / Scalable above 1.
    for k in (0, 1):
        (a, ta), (b, tb) = [(exp.variants[j].label, times[j]) for j in (k, k + 1)]
        ratio = None if ta is None or tb is None else ta / tb
        rows.append(Row(f"{a} / {b}: recovery time", 1.0, ratio, 0.0, ">", unit="x"))
    return rows, _overlay(exp, [v.label for v in exp.variants], results, out_dir)


def run_parallel(
    exp: Experiment,
    out_dir: Any = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[Row], list[Path]]:
    say = progress or (lambda _: None)
    rows, results = [], []
    for k, v in enumerate(exp.variants):
        say(v.label)
        # The first variant is the scenario's four streams, the others one stream.
        result = _run(exp, v.overrides, None if k == 0 else 1)
        results.append(result)
        rows.append(Row(v.label, v.published, total_goodput_mbps(result.summary), exp.tolerance))
    # The shapes as ratios: what LSS costs one stream, what four streams get over one.
    four, aimd, lss = rows
    for label, a, b in (("with LSS / without", lss, aimd), ("4 streams / one stream", four, aimd)):
        ours = None if a.ours is None or not b.ours else a.ours / b.ours
        published = round(a.published / b.published, 2) if a.published and b.published else None
        rows.append(Row(label, published, ours, exp.tolerance, unit="x"))
    labels = [v.label for v in exp.variants]
    written = _overlay(exp, labels, results, out_dir)
    if out_dir is not None:
        written.append(Path(out_dir) / f"{exp.name}-throughput.png")
        throughput_figure(exp.title, labels, results).savefig(written[-1], dpi=120)
    return rows, written


def throughput_figure(title: str, labels: list[str], results: list[Result]) -> Any:
    """Every run's delivery rate, all its flows added, in bins of five base RTTs (Mbps): a
    window-limited stream delivers a window per RTT, in bursts that shorter bins would alias."""
    fig = mpl_figure.Figure(figsize=(11, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for label, r in zip(labels, results, strict=True):
        end = r.summary["sim_time_s"]
        width = 5 * r.summary["flows"][0]["base_rtt_s"]
        edges = np.arange(0.0, end + 1e-9, width)  # whole bins only
        total = np.zeros(len(edges))
        for _, rows in r.flows.groupby("flow"):
            rows = rows.sort_values("t_s")
            t, d = rows["t_s"].to_numpy(), rows["delivered_bytes"].to_numpy()
            idx = np.searchsorted(t, edges, side="right") - 1
            total += np.where(idx >= 0, d[np.maximum(idx, 0)], 0)
        ax.step(edges[1:], np.diff(total) * 8 / width / 1e6, where="pre", label=label)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("delivered, all streams (Mbps, 5-RTT bins)")
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return fig
