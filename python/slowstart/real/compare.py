"""`slowstart compare`: a scenario simulated as a stack sends it beside real runs of it.

The simulation is sized like the stack (Linux TCP: MSS 1448 with byte counting and quick ACKs;
the UDP stack: MSS 1424); the real runs' median and range are set beside it per metric, with
the slow-start rounds (cwnd per round trip) of each, and a figure overlays their series.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.real.stacks import BOTH, STACKS
from slowstart.real.summary import MSS, cwnd_at
from slowstart.running.api import run_config

if TYPE_CHECKING:
    import pandas as pd

    from slowstart.running.api import Result

mpl_figure = lazy.module("matplotlib.figure")
np = lazy.module("numpy")


METRICS = ("completion_s", "slow_start_exit_s", "cwnd_at_exit_bytes", "retransmits", "loss_events")
METRICS += ("goodput_bps",)


OBJECT_METRICS = ("ttfb_s", "first_to_last_s", "total_s")

# Per `[[cross]]` source: its rate through the link (over its own time, so the simulation's
# earlier end does not matter) and its losses.
CROSS_METRICS = ("delivered_bps", "packets_dropped")


def _metrics(
    summary: dict[str, Any], flows: pd.DataFrame, config: dict[str, Any]
) -> dict[str, Any]:
    """The compared metrics: METRICS per flow (`flowN.` before the names of flows after the
    first), for a web flow OBJECT_METRICS per object (`objectK.`), and CROSS_METRICS per
    cross source (`crossK.`)."""
    m: dict[str, Any] = {}
    apps = {a["flow"]: a for a in summary.get("apps") or [] if a["kind"] == "web"}
    for f in summary["flows"]:
        i = f["id"]
        pre = f"flow{i}." if i else ""
        for k in METRICS:
            m[pre + k] = f.get(k)
        if m[pre + "cwnd_at_exit_bytes"] is None and f.get("slow_start_exit_s") is not None:
            at = f["slow_start_exit_s"] + config["flows"][i]["start_ns"] / 1e9
            m[pre + "cwnd_at_exit_bytes"] = cwnd_at(flows[flows["flow"] == i], at)
        for n, o in enumerate(apps.get(i, {}).get("objects", [])):
            for k in OBJECT_METRICS:
                m[f"{pre}object{n}.{k}"] = o[k]
    for c in summary.get("cross") or []:
        for k in CROSS_METRICS:
            m[f"cross{c['id']}.{k}"] = c[k]
    return m


def slow_start_rounds(
    flows: pd.DataFrame, summary: dict[str, Any], flow: int = 0, mss: int = MSS
) -> list[int]:
    """cwnd per round trip in slow start, in segments, until slow start ends (the first loss
    for Reno): the values cwnd holds for at least a fifth of the base RTT, in order. While
    cwnd is below the BDP each round's ACKs come as a train followed by a quiet gap, so every
    round shows as one such value; where ACKs no longer leave gaps, rounds merge."""
    f = flows[flows["flow"] == flow]
    s = next(x for x in summary["flows"] if x["id"] == flow)
    if s.get("slow_start_exit_s") is not None:
        f = f[f["t_s"] < s["slow_start_exit_s"] + f["t_s"].min()]
    srtt = f["srtt_s"][f["srtt_s"] > 0]
    if f.empty or srtt.empty:
        return []
    hold = float(srtt.min()) / 5
    rounds: list[int] = []
    value, since = None, 0.0
    for t, cwnd in zip(f["t_s"], f["cwnd_bytes"], strict=True):
        seg = round(cwnd / mss)
        if seg != value:
            if value is not None and t - since >= hold and (not rounds or rounds[-1] != value):
                rounds.append(value)
            value, since = seg, t
    return rounds


def _rel(sim: float | None, real: float | None) -> float | None:
    if sim is None or real is None:
        return None
    if real == 0:
        return 0.0 if sim == 0 else None
    return (sim - real) / real


def simulate_beside(config: dict[str, Any], reals: list[Result]) -> Result:
    """The simulation of `config`, on to the end of the longest real run when that lasted
    longer: a simulated web flow ends with its last byte, a real one once its last ACKs are
    back (SimConfig::run_to_end)."""
    sim = run_config(config)
    real_end = max((float(r.flows["t_s"].max()) for r in reals if len(r.flows)), default=0.0)
    if real_end > sim.summary["sim_time_s"]:
        longer = {**config, "run_to_end": True, "duration_ns": math.ceil(real_end * 1e9)}
        sim = run_config(longer)
    return sim


def compare(config: dict[str, Any], runs: int = 3, stack: str = "kernel") -> dict[str, Any]:
    """Simulate the config as the stack sends it and run it `runs` times for real on that
    stack (slowstart.real.stacks: Linux TCP with MSS 1448, the simulator's own transport over
    UDP with MSS 1424, quinn, or the flows' program pairs)."""
    chosen = STACKS[stack]
    like = chosen.like(config)
    reals = [chosen.run(config, None, None) for _ in range(runs)]
    settings, mss = chosen.flow_settings, chosen.mss(config)
    sim = simulate_beside(like, reals)
    sim_m = _metrics(sim.summary, sim.flows, config)
    real_m = [_metrics(r.summary, r.flows, config) for r in reals]
    keys = list(dict.fromkeys([*sim_m, *(k for m in real_m for k in m)]))
    median: dict[str, Any] = {}
    spread: dict[str, Any] = {}
    for k in keys:
        vals = [m[k] for m in real_m if m.get(k) is not None]
        median[k] = float(np.median(vals)) if vals else None
        spread[k] = [min(vals), max(vals)] if vals else None
    rounds = {
        "sim": slow_start_rounds(sim.flows, sim.summary, mss=mss),
        "real": [slow_start_rounds(r.flows, r.summary, mss=mss) for r in reals],
    }
    return {
        "stack": stack,
        "sim": sim.summary,
        "sim_flow_settings": settings,
        "slow_start_rounds": rounds,
        "real": [r.summary for r in reals],
        "metrics": {"sim": sim_m, "real": real_m, "real_median": median, "real_range": spread},
        "diff": {k: _rel(sim_m.get(k), median[k]) for k in keys},
        "_results": (sim, reals),
    }


def _digits(x: float) -> str:
    """Four significant digits, never an exponent."""
    return f"{x:.{max(0, 3 - math.floor(math.log10(abs(x))))}f}" if x else "0"


def plain(key: str, v: float | None) -> str:
    """A compared value in plain units by its name's suffix: ms or s, kB or MB, kbps to
    Gbps, counts as they are."""
    if v is None:
        return "-"
    if key.endswith("_s"):
        return f"{_digits(v * 1e3)} ms" if abs(v) < 1 else f"{_digits(v)} s"
    for suffix, units in (
        ("_bytes", ("B", "kB", "MB", "GB")),
        ("_bps", ("bps", "kbps", "Mbps", "Gbps")),
    ):
        if key.endswith(suffix):
            k = min(max(0, math.floor(math.log10(abs(v)) / 3)) if v else 0, 3)
            return f"{_digits(v / 1000**k)} {units[k]}"
    return f"{v:g}" if float(v).is_integer() else _digits(v)


def compare_both(config: dict[str, Any], runs: int = 3) -> dict[str, Any]:
    """`compare --stack both`: the kernel and the UDP comparisons of one config. Each stack
    has its own simulation, sized as that stack sends (MSS 1448 and 1424)."""
    return {"stack": "both", **{s: compare(config, runs=runs, stack=s) for s in BOTH}}


def overlay_plot(
    sim: Result, reals: list[Result], title: str | None = None, who: str = "Linux"
) -> Any:
    """cwnd and bytes in flight against time: the simulation and every real run (`who` ran
    it), one line style per flow."""
    fig = mpl_figure.Figure(figsize=(9, 6))
    axes = fig.subplots(2, 1, sharex=True)
    styles = ["-", "--", ":", "-."]
    ids = sorted(int(i) for i in sim.flows["flow"].unique())
    for ax, col, label in (
        (axes[0], "cwnd_bytes", "cwnd"),
        (axes[1], "inflight_bytes", "in flight"),
    ):
        for n, i in enumerate(ids):
            name = f" flow {i}" if len(ids) > 1 else ""
            ls = styles[n % len(styles)]
            for k, r in enumerate(reals):
                f = r.flows[r.flows["flow"] == i]
                ax.plot(
                    f["t_s"],
                    f[col] / 1e3,
                    color="tab:orange",
                    ls=ls,
                    alpha=0.5,
                    lw=1,
                    drawstyle="steps-post",
                    label=f"real ({who}){name}" if k == 0 else None,
                )
            s = sim.flows[sim.flows["flow"] == i]
            ax.plot(
                s["t_s"],
                s[col] / 1e3,
                color="tab:blue",
                ls=ls,
                lw=1.2,
                label=f"simulated{name}",
                drawstyle="steps-post",
            )
        ax.set_ylabel(f"{label} (kB)")
        ax.legend(loc="upper right")
    axes[1].set_xlabel("time (s)")
    axes[0].set_title(title or "simulated vs real")
    fig.tight_layout()
    return fig
