"""The scorecard's metrics (`slowstart score`), each defined once here: its unit, which way is
better, and its definition (the function's docstring, which the scorecard page shows).

A metric reads one run of one path (`Run`: the result, the flow under test, the bottleneck link
and, for harm, the incumbent's numbers in a run without the flow under test) and gives a number
in the unit it declares, or None where the run gives no value (full rate never reached, no
exit from slow start before the run ended). Times are measured from the tested flow's start.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.running.api import Result
from slowstart.running.measures import delivered_between, link_rate_bps, path_bdp_bytes

np = lazy.module("numpy")


# Share of the available rate that counts as full rate (the 90%; the summary's own
# time_to_full_bw_s uses 95%).
FULL_RATE_SHARE = 0.9


@dataclass(frozen=True)
class Run:
    """One run of a path, as the metrics read it."""

    result: Result
    flow: int  # the flow under test
    link: str = "bottleneck"  # the bottleneck's name in the summary and the queue trace
    incumbent: int | None = None  # the flow whose harm is measured
    # The incumbent's `incumbent_numbers` in the same path without the flow under test.
    alone: dict[str, float | None] | None = None

    @property
    def flow_summary(self) -> dict[str, Any]:
        """The tested flow's row of the summary."""
        return self.result.summary["flows"][self.flow]

    @property
    def start_s(self) -> float:
        """When the tested flow starts, seconds into the run."""
        return self.result.config["flows"][self.flow]["start_ns"] / 1e9


# Which way is better, in words (the page's and the documentation's).
BETTER = {"lower": "lower", "higher": "higher", "one": "nearest 1", "none": "not ranked"}


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str  # "s", "bps", "BDP", "packets", "x ideal", "fraction"
    # "lower", "higher", "one" (nearest 1, by log distance) or "none" (shown, not ranked)
    better: str
    compute: Callable[[Run], float | None]
    needs_incumbent: bool = False  # only on a path with an incumbent (harm)

    @property
    def doc(self) -> str:
        return " ".join((self.compute.__doc__ or "").split())

    def value(self, run: Run) -> float | None:
        value = self.compute(run)
        return None if value is None or not math.isfinite(value) else float(value)

    @property
    def better_text(self) -> str:
        return BETTER[self.better]

    @property
    def ranked(self) -> bool:
        return self.better != "none"

    def badness(self, value: float) -> float:
        """What ranking sorts by: lower is better."""
        if self.better == "higher":
            return -value
        if self.better == "one":
            return abs(math.log(value)) if value > 0 else math.inf
        return value


METRICS: dict[str, Metric] = {}


def metric(
    unit: str, better: str, needs_incumbent: bool = False
) -> Callable[[Callable[[Run], float | None]], Callable]:
    """Register a function of a Run as the metric of its name."""

    def register(fn: Callable[[Run], float | None]) -> Callable[[Run], float | None]:
        METRICS[fn.__name__] = Metric(fn.__name__, unit, better, fn, needs_incumbent)
        return fn

    return register


@cache
def metrics_version() -> str:
    """A hash of this module's source: a stored cell whose metrics were computed by other
    definitions is never reused."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


# --- what the metrics share -----------------------------------------------------------------


def flow_rows(run: Run, flow: int | None = None) -> Any:
    """The flow's trace rows, time from the tested flow's start (`t`)."""
    f = run.result.flows
    rows = f[f["flow"] == (run.flow if flow is None else flow)]
    return rows.assign(t=rows["t_s"] - run.start_s)


def available_bps(run: Run) -> float:
    """The rate the flow can reach: the bottleneck's, or its window cap over the base RTT when
    that is less (as the engine's `time_to_full_bw_s`)."""
    f, spec = run.flow_summary, run.result.config["flows"][run.flow]
    caps = [c for c in (spec.get("max_window_bytes"), spec.get("max_rwnd_bytes")) if c]
    rate = float(f["bottleneck_bps"])
    if caps and f["base_rtt_s"]:
        rate = min(rate, min(caps) // spec["mss"] * spec["mss"] * 8 / f["base_rtt_s"])
    return rate


def end_s(run: Run) -> float:
    """When the tested flow stops: its completion, else the end of the run (from its start)."""
    done = run.flow_summary["completion_s"]
    return done if done is not None else run.result.summary["sim_time_s"] - run.start_s


def held_mean(t: Any, values: Any, start_s: float, end_s: float) -> float | None:
    """The time-weighted mean of sampled `values` between two times, each sample held until
    the next (the one in force at `start_s` included); None with no sample by `end_s`."""
    t, values = np.asarray(t, dtype=float), np.asarray(values, dtype=float)
    keep = t < end_s
    t, values = t[keep], values[keep]
    before = int((t <= start_s).sum())
    first = before - 1 if before else 0
    t, values = np.maximum(t[first:], start_s), values[first:]
    held = np.diff(np.append(t, end_s))
    if not len(t) or held.sum() <= 0:
        return None
    return float((values * held).sum() / held.sum())


def incumbent_numbers(
    result: Result, incumbent: int, start_s: float, end_s: float
) -> dict[str, float | None]:
    """The incumbent's throughput (bits/s delivered) and mean smoothed RTT (time-weighted)
    between two times of the run: what harm compares with and without the flow under test."""
    if end_s <= start_s:
        return {"throughput_bps": None, "rtt_s": None}
    bits = delivered_between(result, incumbent, start_s, end_s) * 8
    rows = result.flows[result.flows["flow"] == incumbent]
    rtt = held_mean(rows["t_s"], rows["srtt_s"], start_s, end_s)
    return {"throughput_bps": bits / (end_s - start_s), "rtt_s": rtt}


def _harm(alone: float | None, shared: float | None, more_is_better: bool) -> float | None:
    """Ware et al., "Beyond Jain's Fairness Index" (HotNets 2019): (x - y) / x for a metric
    where more is better, (y - x) / y where less is, x alone and y with the newcomer."""
    if alone is None or shared is None:
        return None
    if more_is_better:
        return (alone - shared) / alone if alone else None
    return (shared - alone) / shared if shared else None


def _shared_numbers(run: Run) -> dict[str, float | None] | None:
    if run.incumbent is None or run.alone is None:
        return None
    start = run.start_s
    return incumbent_numbers(run.result, run.incumbent, start, start + end_s(run))


# --- the metrics ------------------------------------------------------------------------------


@metric("s", "lower")
def time_to_90_s(run: Run) -> float | None:
    """Time to full rate: the first time the flow's goodput over the last base RTT reaches 90%
    of the rate available to it (the bottleneck's, or its window cap over the base RTT),
    read from the flow's trace samples."""
    rtt = run.flow_summary["base_rtt_s"]
    rows = flow_rows(run)
    if not rtt or rows.empty:
        return None
    t, delivered = rows["t"].to_numpy(), rows["delivered_bytes"].to_numpy().astype(float)
    # Bytes delivered one base RTT before each sample: the last sample at or before then.
    before = np.searchsorted(t, t - rtt, side="right") - 1
    earlier = np.where(before >= 0, delivered[np.maximum(before, 0)], 0.0)
    rate = (delivered - earlier) * 8 / rtt
    reached = np.flatnonzero((t >= rtt) & (rate >= FULL_RATE_SHARE * available_bps(run)))
    return float(t[reached[0]]) if len(reached) else None


@metric("s", "none")
def slow_start_exit_s(run: Run) -> float | None:
    """When the controller leaves its initial slow start (or startup): the summary's
    slow_start_exit_s. Shown, not ranked by itself: early is not better (see exit_cwnd_bdp)."""
    return run.flow_summary["slow_start_exit_s"]


@metric("BDP", "one")
def exit_cwnd_bdp(run: Run) -> float | None:
    """cwnd when the controller left slow start, over the path's BDP (bottleneck rate x base
    RTT): the largest cwnd sampled before the exit. 1 fills the pipe; below 1 leaves it
    underused, above 1 queues or drops the excess. Best: nearest 1."""
    exit_s = run.flow_summary["slow_start_exit_s"]
    if exit_s is None:
        return None
    rows = flow_rows(run)
    cwnd = rows[rows["t"] <= exit_s]["cwnd_bytes"]
    return float(cwnd.max()) / path_bdp_bytes(run.result, run.flow) if len(cwnd) else None


@metric("packets", "lower")
def overshoot_drops(run: Run) -> float | None:
    """Packets of the flow that queues dropped while it was in its initial slow start (the
    summary's slow_start_drops): what overshooting the path cost."""
    return float(run.flow_summary["slow_start_drops"])


@metric("s", "lower")
def peak_queue_delay_s(run: Run) -> float | None:
    """Overshoot as delay: the largest queue at the bottleneck from the flow's start until one
    base RTT after it left its initial slow start (the end of the run if it never did), as the
    time it takes to drain at the line rate (a trace's mean rate). Not a fixed first 10 round
    trips: the satellite's slow start lasts 15."""
    q = run.result.queues
    exit_s = run.flow_summary["slow_start_exit_s"]
    horizon = run.start_s + (
        exit_s + run.flow_summary["base_rtt_s"]
        if exit_s is not None
        else run.result.summary["sim_time_s"]
    )
    rows = q[(q["link"].astype(str) == run.link) & q["t_s"].between(run.start_s, horizon)]
    peak = float(rows["queue_bytes"].max()) if len(rows) else 0.0
    return peak * 8 / link_rate_bps(run.result, run.link)


@metric("s", "lower")
def queue_delay_s(run: Run) -> float | None:
    """Self-inflicted queueing delay: the bottleneck's mean queueing delay (bytes queued over
    the line rate, time-weighted) from the flow's start until it stops."""
    q = run.result.queues
    rows = q[q["link"].astype(str) == run.link]
    start = run.start_s
    queued = held_mean(rows["t_s"], rows["queue_bytes"], start, start + end_s(run))
    return 0.0 if queued is None else queued * 8 / link_rate_bps(run.result, run.link)


@metric("s", "lower")
def completion_s(run: Run) -> float | None:
    """The transfer's completion time: from the flow's start (its handshake included) to its
    last byte delivered in order; none for a transfer still running at the end."""
    return run.flow_summary["completion_s"]


def ideal_completion_s(run: Run) -> float | None:
    """A transfer's least completion time: one RTT of handshake, the data's wire bytes
    (headers included) at the bottleneck rate, and half an RTT to the receiver; a web object
    waits a whole RTT instead (its request goes there first). None unless it has a size."""
    f, spec = run.flow_summary, run.result.config["flows"][run.flow]
    app = spec.get("app") or {}
    if app.get("kind") == "web":
        objects = app.get("response_bytes") or []
        if len(objects) != 1:
            return None
        size, wait = objects[0], 1.0
    else:
        size, wait = f["size_bytes"], 0.5
    if not size:
        return None
    segments = math.ceil(size / spec["mss"])
    wire_bits = (size + segments * spec["header_bytes"]) * 8
    rtt = f["base_rtt_s"]
    return (rtt if spec["handshake"] else 0.0) + wait * rtt + wire_bits / f["bottleneck_bps"]


@metric("x ideal", "lower")
def completion_x_ideal(run: Run) -> float | None:
    """Completion time over the ideal one (handshake + size at the bottleneck rate + the RTTs
    a request and the last byte need): 1 is the most any controller could do."""
    done, ideal = run.flow_summary["completion_s"], ideal_completion_s(run)
    return None if done is None or not ideal else done / ideal


@metric("bps", "higher")
def goodput_bps(run: Run) -> float | None:
    """Bytes delivered in order x 8 over the flow's active time (to completion, else to the
    end of the run): the summary's goodput_bps."""
    return run.flow_summary["goodput_bps"]


@metric("fraction", "lower", needs_incumbent=True)
def harm_throughput(run: Run) -> float | None:
    """Harm to the incumbent's throughput (Ware et al., HotNets 2019): (alone - with) / alone,
    its bits/s delivered while the tested flow runs, with it and in the same path without it.
    0 is no harm, 1 starves it; negative, the incumbent gained."""
    shared = _shared_numbers(run)
    if shared is None or run.alone is None:
        return None
    return _harm(run.alone["throughput_bps"], shared["throughput_bps"], more_is_better=True)


@metric("fraction", "lower", needs_incumbent=True)
def harm_delay(run: Run) -> float | None:
    """Harm to the incumbent's delay (Ware et al., HotNets 2019): (with - alone) / with, its
    mean smoothed RTT while the tested flow runs, with it and without it."""
    shared = _shared_numbers(run)
    if shared is None or run.alone is None:
        return None
    return _harm(run.alone["rtt_s"], shared["rtt_s"], more_is_better=False)


def measure_all(run: Run) -> dict[str, float | None]:
    """Every metric of the run (the harm metrics only where the path has an incumbent)."""
    return {name: m.value(run) for name, m in METRICS.items()}
