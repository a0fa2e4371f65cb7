"""`slowstart compare` on a `[swarm]` scenario: real libtorrent swarms (swarm.py) beside the
simulated swarm of the same scenario and seeds.

Per population (uTP only, TCP only, 50-50), `runs` real swarms with seeds seed, seed + 1, ...
and the simulation of each seed: the same arrivals, access delays and transports (the real swarm
takes them from the simulation), so the two differ in what the peers do. Per run: the leechers'
completion times (median and last), each uplink's mean queueing delay and the occupancy of the
uplinks sampled every `swarm.queue_sample` (the emulators' logs against the simulated queues),
drops, the payload each peer uploaded, and libtorrent's request-queue depth
(`peer_info.download_queue_length` of the connections with requests out) against the model's
pipeline (`swarm.bittorrent.pipeline`). Each metric is then given as the median and range over
the runs, real beside simulated; the figure shows the completion times' and occupancies'
distributions and the request queues over time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.real.swarm import run_swarm
from slowstart.running.api import run_config
from slowstart.running.swarm_results import (
    COLOURS,
    LABELS,
    add_counts,
    ccdf,
    counts,
    ecdf,
    mean_of,
    uplink_samples,
)
from slowstart.tables import table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from slowstart.running.api import Result

mpl_figure = lazy.module("matplotlib.figure")
np = lazy.module("numpy")
pd = lazy.module("pandas")


# At least this many real runs per population for a median and spread worth reading; fewer is a
# quick look, and says so.
MIN_RUNS = 5
POPULATIONS = ("utp", "tcp")
METRICS = (
    "completion_median_s",
    "completion_last_s",
    "uplink_delay_ms",
    "uplink_occupancy_pkts",
    "uplink_occupancy_p99_pkts",
    "uplink_drops",
    "seed_up_MB",
    "leecher_up_MB",
    "request_queue",
)


def with_population(config: dict[str, Any], population: str, seed: int) -> dict[str, Any]:
    cfg = json.loads(json.dumps(config))
    cfg["swarm"]["population"] = population
    cfg["seed"] = seed
    return cfg


def run_metrics(result: Result, config: dict[str, Any], real: bool) -> dict[str, Any]:
    """One run's METRICS, the leechers' completion times and its uplink occupancy histogram."""
    s = result.summary
    leechers = [p for p in s["peers"] if not p["initial_seed"]]
    seeds = [p for p in s["peers"] if p["initial_seed"]]
    done = [p["completion_s"] for p in leechers if p["completion_s"] is not None]
    ups = [x for x in s["links"] if x["name"].endswith(".up") and x.get("forwarded")]
    # Until the last completion: a never-leave simulation idles on to its duration after it.
    last = max((p["done_s"] for p in leechers if p["done_s"] is not None), default=None)
    queues = result.queues
    if last is not None and len(queues):
        queues = queues[queues["t_s"] <= last]
    hist = counts(uplink_samples(queues, 0.0))
    samples = np.repeat(np.arange(len(hist)), hist)
    # The real peers' and the rate-sized model's mean depth; the fixed model's pipeline.
    depth = [p["request_queue_mean"] for p in leechers if p.get("request_queue_mean") is not None]
    if depth:
        request_queue = float(np.mean(depth))
    elif real:
        request_queue = None
    else:
        request_queue = float(config["swarm"]["bittorrent"]["pipeline"])
    m = {
        "completion_median_s": float(np.median(done)) if done else None,
        "completion_last_s": max(done) if done else None,
        "uplink_delay_ms": float(np.mean([x["mean_queue_delay_s"] for x in ups]) * 1e3)
        if ups
        else None,
        "uplink_occupancy_pkts": mean_of(hist),
        "uplink_occupancy_p99_pkts": float(np.percentile(samples, 99)) if len(samples) else None,
        "uplink_drops": sum(x["drops"] for x in s["links"] if x["name"].endswith(".up")),
        "seed_up_MB": sum(p["bytes_up"] for p in seeds) / 1e6,
        "leecher_up_MB": float(np.mean([p["bytes_up"] for p in leechers])) / 1e6,
        "request_queue": request_queue,
    }
    return {"metrics": m, "completions": done, "occupancy": hist.tolist()}


def _median_range(values: list[float | None]) -> tuple[float | None, list[float] | None]:
    v = [x for x in values if x is not None]
    if not v:
        return None, None
    return float(np.median(v)), [float(min(v)), float(max(v))]


def compare_swarm(
    config: dict[str, Any],
    runs: int = MIN_RUNS,
    populations: tuple[str, ...] = POPULATIONS,
    progress: Any = None,
) -> dict[str, Any]:
    """Real and simulated swarms per population, `runs` seeds each; the per-run metrics, their
    medians and ranges, pooled completion times and occupancy histograms, and the real runs'
    request-queue samples (`_requests`, for the figure)."""
    base = config.get("seed", 0)
    out: dict[str, Any] = {"scenario": config.get("name"), "runs": runs, "populations": {}}
    requests: dict[str, Any] = {}
    total, step = runs * len(populations), 0
    for population in populations:
        rows: dict[str, list[dict[str, Any]]] = {"sim": [], "real": []}
        reqs = []
        for k in range(runs):
            cfg = with_population(config, population, base + k)
            rows["sim"].append(run_metrics(run_config(cfg), cfg, real=False))
            real = run_swarm(cfg)
            rows["real"].append(run_metrics(real, cfg, real=True))
            reqs.append(real.connections)  # type: ignore[attr-defined]
            step += 1
            if progress is not None:
                progress(step, total)
        summary: dict[str, Any] = {}
        for side in ("sim", "real"):
            per = {m: [r["metrics"][m] for r in rows[side]] for m in METRICS}
            pooled = [c for r in rows[side] for c in r["completions"]]
            summary[side] = {
                "median": {},
                "range": {},
                "runs": [r["metrics"] for r in rows[side]],
                "completions": pooled,
                "completion_quartiles": [float(q) for q in np.percentile(pooled, [25, 50, 75])]
                if pooled
                else None,
                "occupancy": add_counts(r["occupancy"] for r in rows[side]).tolist(),
            }
            for m in METRICS:
                summary[side]["median"][m], summary[side]["range"][m] = _median_range(per[m])
        summary["diff"] = {
            m: _rel(summary["sim"]["median"][m], summary["real"]["median"][m]) for m in METRICS
        }
        out["populations"][population] = summary
        requests[population] = reqs
    out["_requests"] = requests
    return out


def _rel(sim: float | None, real: float | None) -> float | None:
    if sim is None or real is None or real == 0:
        return None
    return (sim - real) / real


def format_compare_swarm(c: dict[str, Any]) -> str:
    parts = []
    for population, p in c["populations"].items():
        rows = []
        for m in METRICS:
            sim, real = p["sim"], p["real"]
            d = p["diff"][m]
            rows.append(
                [
                    m,
                    _num(sim["median"][m]),
                    _span(sim["range"][m]),
                    _num(real["median"][m]),
                    _span(real["range"][m]),
                    "-" if d is None else f"{d:+.1%}",
                ]
            )
        head = f"{LABELS.get(population, population)} swarm, {c['runs']} runs each"
        parts.append(
            head
            + "\n"
            + table(
                ["metric", "sim median", "sim range", "real median", "real range", "diff"], rows
            )
        )
    if c["runs"] < MIN_RUNS:
        parts.append(f"(a quick look: {c['runs']} runs; the comparison takes {MIN_RUNS} or more)")
    return "\n\n".join(parts)


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def _span(r: list[float] | None) -> str:
    return "-" if r is None else f"{_num(r[0])}..{_num(r[1])}"


def plot_compare_swarm(c: dict[str, Any], ms_per_packet: float | None = None) -> Figure:
    """Completion-time ECDFs, uplink occupancy CCDFs and real request queues over time; real
    solid, simulated dashed, one colour per population."""
    fig = mpl_figure.Figure(figsize=(14, 4.2), layout="constrained")
    ax_c, ax_q, ax_r = fig.subplots(1, 3)
    for population, p in c["populations"].items():
        colour = COLOURS.get(population, "grey")
        label = LABELS.get(population, population)
        for side, style in (("real", "-"), ("sim", "--")):
            x, y = ecdf(p[side]["completions"])
            ax_c.step(x, y, where="post", ls=style, color=colour, label=f"{label} {side}")
            qx, qy = ccdf(np.asarray(p[side]["occupancy"]))
            ax_q.step(qx, qy, where="post", ls=style, color=colour, label=f"{label} {side}")
        frames = [f for f in c["_requests"].get(population, []) if len(f)]
        if frames:
            f = pd.concat(frames, ignore_index=True)
            f = f[f["downloading"] & (f["queue"] > 0)]
            if len(f):
                per_s = f.groupby(f["t_s"].round(0))["queue"].median()
                ax_r.plot(per_s.index, per_s.to_numpy(), color=colour, label=f"{label} real")
        model = p["sim"]["median"]["request_queue"]
        if model is not None:
            ax_r.axhline(model, color=colour, ls="--", lw=1)
    ax_c.set(xlabel="leecher completion time (s)", ylabel="fraction of leechers")
    ax_c.set_title("completion times")
    ax_q.set(xlabel="uplink queue (packets)", ylabel="P(queue > x)", yscale="log")
    ax_q.set_title("uplink occupancy, every sample")
    if ms_per_packet:
        top = ax_q.secondary_xaxis("top", functions=(lambda x: x * ms_per_packet, lambda x: x))
        top.set_xlabel("queueing delay (ms)")
    ax_r.set(xlabel="time (s)", ylabel="requests outstanding per connection (median)")
    ax_r.set_title("request queue (dashed: the model's mean)")
    for ax in (ax_c, ax_q, ax_r):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return fig


def save(c: dict[str, Any], out: Path, ms_per_packet: float | None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    fig = plot_compare_swarm(c, ms_per_packet)
    paths = [out / "compare-swarm.png", out / "compare-swarm.json"]
    fig.savefig(paths[0], dpi=120)
    body = {k: v for k, v in c.items() if not k.startswith("_")}
    paths[1].write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    for p in paths:
        print(f"wrote {p}", file=sys.stderr)
    return paths
