"""`slowstart reproduce prague`: picoquic's L4S test (picoquictest/l4s_test.c, PR #1378), what
it judges and its figure. Each controller runs once; three rows read that run: the losses
(retransmissions, picoquic's `nb_retransmission_total`), how far the RTT rose above its minimum
(the bottleneck's largest queueing delay, bytes queued over the line rate, sampled every 1 ms)
and when the fourth response was complete.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from slowstart import lazy
from slowstart.reproductions.ledbat_figures import queue_delay_series

if TYPE_CHECKING:
    from slowstart.reproductions.experiment import Experiment
    from slowstart.running.api import Result

mpl_figure = lazy.module("matplotlib.figure")


def rtt_rise_ms(result: Result, after_s: float = 0.0) -> float | None:
    """The RTT's largest rise above its minimum from `after_s` on, ms: the bottleneck's largest
    queueing delay."""
    t, delay = queue_delay_series(result)
    delay = delay[t >= after_s]
    return float(delay.max()) if len(delay) else None


def rtt_rise_after_first_response_ms(result: Result) -> float | None:
    """`rtt_rise_ms` once the first response is complete: without slow start's overshoot."""
    first = result.summary["apps"][0]["objects"][0]
    return rtt_rise_ms(result, after_s=first["total_s"])


def l4s_figures(exp: Experiment, results: list[Result], out: Path) -> list[Path]:
    """prague-l4s.png: cwnd and the bottleneck's queueing delay against time, one line per
    controller (the first run of each; the other rows read the same runs), with each one's
    published RTT peak dashed."""
    seen: dict[tuple[str, ...], tuple[str, Result]] = {}
    for v, r in zip(exp.variants, results, strict=False):
        seen.setdefault(v.overrides, (v.label.split(":")[0], r))
    fig = mpl_figure.Figure(figsize=(9, 6), layout="constrained")
    cwnd_ax, queue_ax = fig.subplots(2, 1, sharex=True)
    colour = {}
    for label, r in seen.values():
        f = r.flows[r.flows["flow"] == 0]
        cwnd_ax.plot(f["t_s"], f["cwnd_bytes"] / 1e3, label=label, lw=0.8)
        t, delay = queue_delay_series(r)
        (line,) = queue_ax.plot(t, delay, label=label, lw=0.8)
        colour[label] = line.get_color()
    # The published RTT peaks (the experiment's own rows), dashed in their controller's colour.
    for v in exp.variants:
        label = v.label.split(":")[0]
        if v.measure is rtt_rise_ms and v.published is not None and label in colour:
            queue_ax.axhline(v.published, color=colour[label], ls="--", lw=0.8)
            queue_ax.annotate(
                f"{label}: published peak, {v.published:g} ms",
                (1, v.published),
                xycoords=("axes fraction", "data"),
                xytext=(-2, 2),
                textcoords="offset points",
                ha="right",
                fontsize=8,
                color=colour[label],
            )
    for ms, what in ((5, "CE step (Prague)"), (20, "tail drop")):
        queue_ax.axhline(ms, color="grey", ls=":", lw=0.8)
        queue_ax.annotate(what, (0, ms), xytext=(2, 2), textcoords="offset points", fontsize=8)
    cwnd_ax.set_ylabel("cwnd (kB)")
    queue_ax.set_ylabel("bottleneck queueing delay (ms)")
    queue_ax.set_xlabel("time (s)")
    cwnd_ax.legend(fontsize=8)
    cwnd_ax.set_title(exp.title, fontsize=10)
    path = out / "prague-l4s.png"
    fig.savefig(path, dpi=120)
    return [path]
