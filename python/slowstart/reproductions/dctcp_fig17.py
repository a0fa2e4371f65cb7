"""DCTCP's convergence and fairness across two bottlenecks (`slowstart reproduce dctcp`):
Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, Fig. 17, in the setup of ns-3's
examples/tcp/dctcp-example.cc (scenarios/dctcp-fig17.toml holds the topology).

The paper: each S1 sender gets 46 Mbps, each S3 sender 54 Mbps and each S2 sender 475 Mbps,
within 10% of their fair shares (Jain's index 0.99). ns-3's example, whose switches run RED with
min_th / max_th 20 / 60 packets at 1 Gbps and 50 / 150 at 10 Gbps instead of the paper's step,
reports 23, 74 and 471 Mbps, Jain's index above 0.99 in each group, and average queueing delays
of about 1 ms at T2 -> R1 and 200 us at T1 -> T2. Both markings run here: the step at the
paper's K (the scenario's), and ns-3's RED (q_w 1, gentle, forced marks instead of drops).

Rates are measured as ns-3 measures them: payload delivered from 4 s to 5 s (after one second
of staggered starts and three of convergence). `timescale` shrinks every time (starts, the run,
the window) for a cheaper run with the same rates and thresholds.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.loading.scenario import build_config, read_scenario
from slowstart.paths import scenario_path
from slowstart.reproductions.experiment import Row
from slowstart.running.api import Result, run_config
from slowstart.running.measures import delivered_between
from slowstart.units import ScenarioError, parse_time

if TYPE_CHECKING:
    from slowstart.reproductions.experiment import Experiment, Row

mpl_figure = lazy.module("matplotlib.figure")


SCENARIO = "dctcp-fig17"
WINDOW_S = (4.0, 5.0)  # ns-3: flowStartupWindow + convergenceTime, + measurementWindow
GROUPS = ("S1", "S2", "S3")
# Link directions whose queue ns-3 reports (CheckT2QueueSize, CheckT1QueueSize).
QUEUES = {"T2 -> R1": ("T2-R1", 1e9), "T1 -> T2": ("T1-T2", 10e9)}
# ns-3's RED thresholds (packets) in place of each step K: MinTh, MaxTh.
NS3_RED = {20: (20, 60), 65: (50, 150)}
MARKINGS = ("step", "ns3-red")


def _scaled(text: str, scale: float) -> str:
    """A scenario time ("715ms", "5s") times `scale`, in microseconds."""
    return f"{round(parse_time(text, 'time') * scale / 1000)}us"


def scenario(marking: str = "step", timescale: float = 1.0) -> dict[str, Any]:
    """The raw scenario: the step at K (`step`) or ns-3's RED (`ns3-red`) at every switch
    port, every time multiplied by `timescale`."""
    raw = copy.deepcopy(read_scenario(scenario_path(SCENARIO)))
    if marking not in MARKINGS:
        raise ScenarioError(f"marking: expected one of {', '.join(MARKINGS)}, got {marking!r}")
    if marking == "ns3-red":
        for link in raw["link"]:
            for key in ("queue", "reverse_queue"):
                q = link.get(key)
                if isinstance(q, dict) and q.get("kind") == "red":
                    low, high = NS3_RED[int(q["min_th"])]
                    # ns-3 RedQueueDisc: Gentle true and LInterm 50 (max_p 1/50) by default.
                    link[key] = {**q, "min_th": low, "max_th": high, "gentle": True}
    if timescale != 1.0:
        raw["duration"] = _scaled(raw["duration"], timescale)
        for f in raw["flow"]:
            f["start"] = _scaled(f["start"], timescale)
        for key in ("flow_interval", "queue_interval"):
            raw["trace"][key] = _scaled(raw["trace"][key], timescale)
    return raw


def run(marking: str = "step", timescale: float = 1.0) -> Result:
    return run_config(build_config(scenario(marking, timescale)))


def group_rates_mbps(result: Result, timescale: float = 1.0) -> dict[str, list[float]]:
    """Each sender's rate over the measurement window, Mbps, by group (S1, S2, S3)."""
    start, end = (t * timescale for t in WINDOW_S)
    rates: dict[str, list[float]] = {g: [] for g in GROUPS}
    for i, f in enumerate(result.config["flows"]):
        group = f["src"].split("-")[0]
        rates[group].append(delivered_between(result, i, start, end) * 8 / (end - start) / 1e6)
    return rates


def jain(xs: list[float]) -> float | None:
    """Jain's fairness index, (sum x)^2 / (n sum x^2)."""
    squares = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * squares) if squares else None


def queue_delay_ms(result: Result, link: str, rate_bps: float, timescale: float = 1.0) -> float:
    """Mean queueing delay of `link`'s forward direction over the window, ms: the queue's bytes
    at each sample over the line rate (ns-3 samples every 10 ms, in 1500-byte packets)."""
    start, end = (t * timescale for t in WINDOW_S)
    q = result.queues
    q = q[(q["link"].astype(str) == link) & (q["t_s"] >= start) & (q["t_s"] < end)]
    return float(q["queue_bytes"].mean()) * 8 / rate_bps * 1e3 if len(q) else float("nan")


def measure(result: Result, timescale: float = 1.0) -> dict[str, float | None]:
    """The rows' values: mean rate per group, the lowest Jain's index of the three groups, and
    the two queues' mean delays."""
    rates = group_rates_mbps(result, timescale)
    values: dict[str, float | None] = {g: sum(r) / len(r) for g, r in rates.items()}
    indices = [jain(r) for r in rates.values()]
    values["jain"] = None if None in indices else min(i for i in indices if i is not None)
    for label, (link, rate) in QUEUES.items():
        values[label] = queue_delay_ms(result, link, rate, timescale)
    return values


# Variant label -> (marking, value key); reproduce.py's variants carry the published values.
ROWS: dict[str, tuple[str, str]] = {
    "step at K (paper): S1 senders, mean rate": ("step", "S1"),
    "step at K (paper): S3 senders, mean rate": ("step", "S3"),
    "step at K (paper): S2 senders, mean rate": ("step", "S2"),
    "step at K (paper): Jain's index, lowest group": ("step", "jain"),
    "step at K: T2 -> R1 queueing delay": ("step", "T2 -> R1"),
    "step at K: T1 -> T2 queueing delay": ("step", "T1 -> T2"),
    "ns-3's RED: S1 senders, mean rate": ("ns3-red", "S1"),
    "ns-3's RED: S3 senders, mean rate": ("ns3-red", "S3"),
    "ns-3's RED: S2 senders, mean rate": ("ns3-red", "S2"),
    "ns-3's RED: Jain's index, lowest group": ("ns3-red", "jain"),
    "ns-3's RED: T2 -> R1 queueing delay": ("ns3-red", "T2 -> R1"),
    "ns-3's RED: T1 -> T2 queueing delay": ("ns3-red", "T1 -> T2"),
}


def run_fig17(
    exp: Experiment,
    out_dir: Any = None,
    progress: Callable[[str], None] | None = None,
    timescale: float = 1.0,
) -> tuple[list[Row], list[Path]]:
    """Both markings, one run each; a row per variant of `exp` (labels of ROWS)."""
    say = progress or (lambda _: None)
    results: dict[str, Result] = {}
    values: dict[str, dict[str, float | None]] = {}
    for marking in MARKINGS:
        say(f"{marking} marking ({timescale:g} x ns-3's times)")
        results[marking] = run(marking, timescale)
        values[marking] = measure(results[marking], timescale)
    rows = []
    for v in exp.variants:
        marking, key = ROWS[v.label]
        rows.append(Row(v.label, v.published, values[marking][key], exp.tolerance, v.bound, v.unit))
    written: list[Path] = []
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written.append(out / f"{exp.name}-rates.png")
        rates_figure(exp, results, timescale).savefig(written[-1], dpi=120)
    return rows, written


# The published per-group means, for the figure: (paper, ns-3's example).
PUBLISHED_MBPS = {"S1": (46, 23), "S2": (475, 471), "S3": (54, 74)}


def rates_figure(exp: Experiment, results: dict[str, Result], timescale: float) -> Any:
    """Each sender's rate over the window under both markings, the published group means as
    lines; and the T2 -> R1 queue over the run."""
    fig = mpl_figure.Figure(figsize=(12, 4.5), layout="constrained")
    ax, aq = fig.subplots(1, 2, width_ratios=(2, 1))
    colors = {"S1": "tab:blue", "S2": "tab:orange", "S3": "tab:green"}
    for k, (marking, result) in enumerate(results.items()):
        rates = group_rates_mbps(result, timescale)
        x = 0
        for group in GROUPS:
            xs = list(range(x, x + len(rates[group])))
            ax.scatter(
                xs,
                rates[group],
                marker="o" if k == 0 else "x",
                color=colors[group],
                label=f"{group}, {marking}",
            )
            for published, style in zip(PUBLISHED_MBPS[group], ("-", ":"), strict=True):
                ax.hlines(published, xs[0] - 0.4, xs[-1] + 0.4, colors=colors[group], ls=style)
            x += len(rates[group])
        q = result.queues
        q = q[q["link"].astype(str) == "T2-R1"].sort_values("t_s")
        aq.plot(q["t_s"], q["queue_bytes"] * 8 / 1e9 * 1e3, label=marking, lw=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("sender (S1 0-9, S2 10-29, S3 30-39)")
    ax.set_ylabel("rate from 4 s to 5 s (Mbps)")
    ax.set_title(f"{exp.name}: lines = published means (solid paper, dotted ns-3)")
    ax.legend(fontsize="small")
    aq.set_xlabel("time (s)")
    aq.set_ylabel("T2 -> R1 queueing delay (ms)")
    aq.legend(fontsize="small")
    return fig
