"""The figure of `slowstart reproduce ledbat`: what it judges, against time. RFC 6817's two
promises: alone, LEDBAT holds the bottleneck's queuing delay (one-way delay above the base)
at its TARGET; beside TCP it yields, so its share of the bottleneck stays small.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from slowstart import lazy
from slowstart.plot import plot_overlay
from slowstart.reproductions.experiment import missing_algorithms
from slowstart.running.measures import link_rate_bps

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from slowstart.reproductions.experiment import Experiment, Variant
    from slowstart.running.api import Result

mpl_figure = lazy.module("matplotlib.figure")
np = lazy.module("numpy")


# ledbat: the queuing delay is averaged from this time of the run on (once LEDBAT has settled),
# and the share over this long after Reno leaves slow start.
LEDBAT_SETTLED_S = 30.0
LEDBAT_HOLD_S = 30.0
SHARE_BIN_S = 1.0  # the share is drawn per second of delivery
COLOURS = ("tab:blue", "tab:orange")


def queue_delay_series(result: Result) -> tuple[np.ndarray, np.ndarray]:
    """The bottleneck's queuing delay in ms against time: bytes queued / line rate."""
    q = result.queues
    q = q[q["link"].astype(str) == "bottleneck"].sort_values("t_s")
    delay = q["queue_bytes"].to_numpy(dtype=float) * 8 / link_rate_bps(result) * 1e3
    return q["t_s"].to_numpy(), delay


def share_series(result: Result, flow: int, other: int) -> tuple[np.ndarray, np.ndarray]:
    """`flow`'s share of what `flow` and `other` deliver, per SHARE_BIN_S of the run: each
    bin's start and share (bins where neither delivers are left out)."""
    end = float(result.flows["t_s"].max())
    edges = np.arange(0.0, end + SHARE_BIN_S, SHARE_BIN_S)

    def delivered(f: int) -> np.ndarray:
        rows = result.flows[result.flows["flow"] == f].sort_values("t_s")
        t, d = rows["t_s"].to_numpy(), rows["delivered_bytes"].to_numpy(dtype=float)
        at = np.searchsorted(t, edges, side="right") - 1  # the last sample at or before
        return np.diff(np.where(at >= 0, d[np.clip(at, 0, None)], 0.0))

    mine, theirs = delivered(flow), delivered(other)
    both = mine + theirs
    keep = both > 0
    return edges[:-1][keep], mine[keep] / both[keep]


def _window(ax: Axes, start: float, end: float, colour: str, label: str | None) -> None:
    ax.axvspan(start, end, color=colour, alpha=0.08, label=label)


def ledbat_figures(exp: Experiment, results: list[Result], out: Path) -> list[Path]:
    """ledbat-delay-share.png: the queuing delay of each run alone with the target and the
    judged window, the queuing delay beside Reno, and LEDBAT's share beside Reno with the
    published bound and each run's judged window; then the cwnd overlay."""
    ran: list[tuple[Variant, Result]] = [
        (v, r)
        for v, r in zip(
            [v for v in exp.variants if not missing_algorithms(v)], results, strict=True
        )
    ]
    alone = [(v, r) for v, r in ran if v.bound == "="]
    beside = [(v, r) for v, r in ran if v.bound == "<"]
    fig = mpl_figure.Figure(figsize=(11, 9), layout="constrained")
    ax_alone, ax_beside, ax_share = fig.subplots(3, 1, sharex=True)

    for k, (v, r) in enumerate(alone):
        t, delay = queue_delay_series(r)
        ax_alone.plot(t, delay, color=COLOURS[k % 2], lw=0.8, label=v.label.split(":")[0])
    if alone:
        target_ms = alone[0][0].published * 1e3
        ax_alone.axhline(target_ms, color="k", ls="--", lw=1, label=f"published: {target_ms:g} ms")
        end = max(float(r.queues["t_s"].max()) for _, r in alone)
        _window(ax_alone, LEDBAT_SETTLED_S, end, "k", "judged: mean from here")
        ax_alone.set_ylim(0, 2.5 * target_ms)
    ax_alone.set_ylabel("queuing delay (ms)")
    ax_alone.set_title("Alone: the bottleneck's queuing delay (one-way delay above the base)")
    ax_alone.legend(loc="upper right", fontsize="small")

    for k, (v, r) in enumerate(beside):
        colour = COLOURS[k % 2]
        name = v.label.split(" vs ")[0]
        t, delay = queue_delay_series(r)
        ax_beside.plot(t, delay, color=colour, lw=0.8, label=f"{name} and reno")
        t, share = share_series(r, exp.flow, 1 - exp.flow)
        ax_share.step(t, share, where="post", color=colour, lw=1, label=f"{name}'s share")
        reno = r.summary["flows"][1 - exp.flow]
        if reno["slow_start_exit_s"] is not None:
            start = r.config["flows"][1 - exp.flow]["start_ns"] / 1e9 + reno["slow_start_exit_s"]
            _window(ax_share, start, start + LEDBAT_HOLD_S, colour, f"judged ({name})")
    ax_beside.set_ylabel("queuing delay (ms)")
    ax_beside.set_title("Beside Reno: the queuing delay LEDBAT sees")
    ax_beside.legend(loc="upper left", fontsize="small")
    if beside:
        bound = beside[0][0].published
        ax_share.axhline(bound, color="k", ls="--", lw=1, label=f"published: under {bound:.0%}")
    ax_share.set_ylim(0, 1.05)
    ax_share.set_ylabel(f"share of delivery ({SHARE_BIN_S:g} s bins)")
    ax_share.set_xlabel("time (s)")
    ax_share.set_title("Beside Reno: LEDBAT's share of what both flows deliver")
    ax_share.legend(loc="upper right", fontsize="small")
    for ax in (ax_alone, ax_beside, ax_share):
        ax.grid(alpha=0.3)
    fig.suptitle(exp.title)
    written = [out / f"{exp.name}-delay-share.png", out / f"{exp.name}-cwnd.png"]
    fig.savefig(written[0], dpi=120)
    curves = [(v.label, r.flows, None) for v, r in ran]
    plot_overlay(curves, exp.title, flow=exp.flow).savefig(written[1], dpi=120)
    return written
