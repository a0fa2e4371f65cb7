"""`slowstart reproduce atou`: the net100 notes' atou figure, simulated and over the UDP stack.

"Floyd's max_ssthresh is set to 100 segments and that stretches the slow start by about 1.8
seconds" (ORNL to NERSC, 87 ms, 1000-segment window, no delayed ACK; atou was their TCP over
UDP). Each variant (standard slow start, LSS) is simulated and, where root and /dev/net/tun are
there, run `runs` times on the simulator's own transport over UDP through the emulated path
(`slowstart real --stack udp`), median taken. Both are sized as the UDP stack sends (MSS 1424,
76 header bytes) and measured the same way, from the cwnd trace: seconds from the flow's start
until cwnd first reaches the 1000-segment window. The stretch is LSS's time less standard's.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart.loading.scenario import load
from slowstart.paths import scenario_path
from slowstart.plot import plot_overlay
from slowstart.real import testbed
from slowstart.real.udp import UDP_MSS, run_real_udp, udp_like
from slowstart.reproductions.experiment import Row
from slowstart.running.api import Result, run_config

if TYPE_CHECKING:
    from slowstart.reproductions.experiment import Experiment, Row

REAL_RUNS = 3
STRETCH = 1.8  # "stretches the slow start by about 1.8 seconds"


def time_to_window(result: Result, flow: int = 0) -> float | None:
    """Seconds from `flow`'s start until its cwnd first reaches its window cap (trace-based, so
    the same for a simulated and a real run)."""
    spec = result.config["flows"][flow]
    cap = spec.get("max_window_bytes")
    if cap is None:
        return None
    rows = result.flows[result.flows["flow"] == flow]
    hit = rows[rows["cwnd_bytes"] >= cap]
    if hit.empty:
        return None
    return float(hit["t_s"].min()) - spec["start_ns"] / 1e9


def _config(exp: Experiment, overrides: tuple[str, ...]) -> dict[str, Any]:

    # The MSS first, so that "1000seg" is 1000 of the UDP stack's segments.
    sets = [f"flow.{exp.flow}.mss={UDP_MSS}", *exp.common, *overrides]
    return udp_like(load(scenario_path(exp.scenario), set=sets))


def run_atou(
    exp: Experiment,
    out_dir: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
    runs: int = REAL_RUNS,
) -> tuple[list[Row], list[Path]]:
    say = progress or (lambda _: None)
    std, lss = exp.variants
    sims: list[Result] = []
    for v in (std, lss):
        say(f"{v.label}, simulated")
        sims.append(run_config(_config(exp, v.overrides)))
    sim_t = [time_to_window(r, exp.flow) for r in sims]
    rows = [
        Row(f"{v.label}, simulated", None, t, exp.tolerance)
        for v, t in zip(exp.variants, sim_t, strict=True)
    ]
    rows.append(Row("stretch, simulated", STRETCH, _diff(sim_t), exp.tolerance))

    reason = testbed.unavailable_reason()
    reals: list[list[Result]] = [[], []]
    if reason is None:
        for k, v in enumerate((std, lss)):
            for i in range(runs):
                say(f"{v.label}, UDP stack, run {i + 1} of {runs}")
                reals[k].append(run_real_udp(_config(exp, v.overrides)))
        real_t = [_median([time_to_window(r, exp.flow) for r in rs]) for rs in reals]
        spread = [[time_to_window(r, exp.flow) for r in rs] for rs in reals]
        for v, t, ts in zip(exp.variants, real_t, spread, strict=True):
            shown = ", ".join("-" if x is None else f"{x:.3f}" for x in ts)
            rows.append(
                Row(f"{v.label}, UDP stack (median of {runs}: {shown})", None, t, exp.tolerance)
            )
        rows.append(
            Row(f"stretch, UDP stack (median of {runs})", STRETCH, _diff(real_t), exp.tolerance)
        )
    else:
        say(f"UDP stack skipped: {reason}")
        rows.append(
            Row("stretch, UDP stack", STRETCH, None, exp.tolerance, pending=f"skipped: {reason}")
        )

    written: list[Path] = []
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        curves = [
            (f"{v.label}, simulated", r.flows, None)
            for v, r in zip(exp.variants, sims, strict=True)
        ]
        for v, rs in zip(exp.variants, reals, strict=True):
            curves += [(f"{v.label}, UDP run {i + 1}", r.flows, None) for i, r in enumerate(rs)]
        fig = plot_overlay(curves, exp.title, flow=exp.flow)
        written.append(out / f"{exp.name}-cwnd.png")
        fig.savefig(written[-1], dpi=120)
    return rows, written


def _median(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return statistics.median(got) if got else None


def _diff(times: list[float | None]) -> float | None:
    std, lss = times
    return None if std is None or lss is None else lss - std
