"""Measurements of a whole run (summary and traces) that the reproductions compare.

A summary metric (`reproduce.Variant.metric`) sees only `summary.json`; these read the traces too:
the bottleneck queue once a flow has settled, or a flow's share of what was delivered over a
window of the run.
"""

from __future__ import annotations

from collections.abc import Callable

from slowstart import lazy
from slowstart.running.api import Result

np = lazy.module("numpy")


Measure = Callable[[Result], float | None]


def link_rate_bps(result: Result, link: str = "bottleneck") -> int:
    """The forward line rate of `link` (its `:reverse` direction with that suffix)."""
    name, _, direction = link.partition(":")
    for spec in result.config["links"]:
        if spec["name"] == name:
            return int(spec["reverse" if direction else "forward"]["rate_bps"])
    raise KeyError(f"no link {name!r}")


def queue_delay_s(result: Result, start_s: float, end_s: float | None = None) -> float | None:
    """Mean queuing delay of the bottleneck between `start_s` and `end_s` (default: the end):
    bytes queued / line rate, averaged over time (each sample held until the next)."""
    q = result.queues
    q = q[q["link"].astype(str) == "bottleneck"].sort_values("t_s")
    if q.empty:
        return None
    end = float(q["t_s"].iloc[-1]) if end_s is None else end_s
    t = q["t_s"].to_numpy()
    b = q["queue_bytes"].to_numpy().astype(float)
    keep = (t >= start_s) & (t < end)
    if keep.sum() < 2:
        return None
    t, b = t[keep], b[keep]
    dt = [*(t[1:] - t[:-1]), end - t[-1]]
    mean_bytes = float((b * dt).sum() / sum(dt))
    return mean_bytes * 8 / link_rate_bps(result)


def delivered_between(result: Result, flow: int, start_s: float, end_s: float) -> int:
    """Bytes `flow` delivered in order between two times of the run."""
    rows = result.flows[result.flows["flow"] == flow]

    def at(t: float) -> int:
        before = rows[rows["t_s"] <= t]["delivered_bytes"]
        return int(before.max()) if len(before) else 0

    return at(end_s) - at(start_s)


def share_after_slow_start(result: Result, flow: int, other: int, hold_s: float) -> float | None:
    """`flow`'s share of what `flow` and `other` deliver over `hold_s` seconds from when `other`
    leaves slow start (its `slow_start_exit_s`, measured from its own start)."""
    flows = result.summary["flows"]
    exit_s = flows[other]["slow_start_exit_s"]
    if exit_s is None:
        return None
    start = float(result.config["flows"][other]["start_ns"]) / 1e9 + exit_s
    mine = delivered_between(result, flow, start, start + hold_s)
    theirs = delivered_between(result, other, start, start + hold_s)
    return mine / (mine + theirs) if mine + theirs else None


def goodput_mbps(summary: dict, flow: int = 0) -> float | None:
    """A flow's goodput in Mbps (the net100 notes' unit)."""
    bps = summary["flows"][flow]["goodput_bps"]
    return None if bps is None else bps / 1e6


def settled_queue_delay(start_s: float) -> Measure:
    """Mean bottleneck queuing delay from `start_s` to the end of the run, seconds."""
    return lambda result: queue_delay_s(result, start_s)


def share_once_avoiding(flow: int, other: int, hold_s: float) -> Measure:
    """`flow`'s share of the delivery over `hold_s` s after `other` leaves slow start."""
    return lambda result: share_after_slow_start(result, flow, other, hold_s)


def path_bdp_bytes(result: Result, flow: int = 0) -> float:
    """The flow's bottleneck rate x its base RTT / 8."""
    f = result.summary["flows"][flow]
    return f["bottleneck_bps"] * f["base_rtt_s"] / 8


def flow_facts(result: Result, flow: int = 0) -> dict[str, float | int | None]:
    """What the satellite comparison reports per variant."""
    f = result.summary["flows"][flow]
    return {
        "completion_s": f["completion_s"],
        "time_to_full_bw_s": f["time_to_full_bw_s"],
        "slow_start_exit_s": f["slow_start_exit_s"],
        "retransmits": f["retransmits"],
        "drops": f["drops"],
        "max_cwnd_bdp": f["max_cwnd_bytes"] / path_bdp_bytes(result, flow),
    }


FACTS = ("completion_s", "time_to_full_bw_s", "slow_start_exit_s", "retransmits", "max_cwnd_bdp")


def facts_table(labels: list[str], results: list[Result], flow: int = 0) -> str:
    """A markdown table of `flow_facts` per run."""
    lines = ["| variant | " + " | ".join(FACTS) + " |", "|---" * (len(FACTS) + 1) + "|"]
    for label, result in zip(labels, results, strict=True):
        facts = flow_facts(result, flow)
        cells = [
            "-"
            if facts[k] is None
            else f"{facts[k]:.3g}"
            if isinstance(facts[k], float)
            else str(facts[k])
            for k in FACTS
        ]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def full_bdp_bytes(result: Result, flow: int = 0) -> float:
    """What the path holds: its BDP plus the bottleneck queue (Rapid Start's "full BDP")."""
    queue = 0
    for spec in result.config["links"]:
        if spec["name"] == "bottleneck":
            queue = int(spec["forward"]["queue"].get("bytes", 0))
    return path_bdp_bytes(result, flow) + queue


def _first_recovery(result: Result, flow: int):
    """The flow's trace from its first recovery phase on, or None if it never entered one."""
    rows = result.flows[result.flows["flow"] == flow].sort_values("t_s")
    phase = rows["phase"].astype(str)
    start = rows[phase == "recovery"]
    if start.empty:
        return None
    return rows[rows["t_s"] >= float(start["t_s"].iloc[0])]


def acked_until_resume_bdp(result: Result, flow: int = 0) -> float | None:
    """Bytes delivered from the first loss until the sender may send again (bytes in flight
    no longer above cwnd), in full BDPs (draft-kazuho-ccwg-rapid-start-02, Appendix A)."""
    rows = _first_recovery(result, flow)
    if rows is None:
        return None
    resumed = rows[rows["inflight_bytes"] <= rows["cwnd_bytes"]]
    if resumed.empty:
        return None
    acked = int(resumed["delivered_bytes"].iloc[0]) - int(rows["delivered_bytes"].iloc[0])
    return acked / full_bdp_bytes(result, flow)


def cwnd_after_recovery_bdp(result: Result, flow: int = 0) -> float | None:
    """cwnd when the first recovery phase ends, in full BDPs."""
    rows = _first_recovery(result, flow)
    if rows is None:
        return None
    after = rows[rows["phase"].astype(str) != "recovery"]
    if after.empty:
        return None
    return float(after["cwnd_bytes"].iloc[0]) / full_bdp_bytes(result, flow)


def observed_saved_state(result: Result, flow: int = 0) -> tuple[int, float]:
    """What a connection would save for Careful Resume (RFC 9959 §4.1, Observing): the most
    data acknowledged within one RTT, in the flow's segments (`saved_cwnd`), and the lowest
    smoothed RTT seen, in ms (`saved_rtt_ms`). Gives a second run the state of a first:
    `set=[f"flow.0.cc.saved_cwnd={cwnd}", f"flow.0.cc.saved_rtt_ms={rtt}"]`."""
    rows = result.flows[result.flows["flow"] == flow].sort_values("t_s")
    srtt = rows["srtt_s"][rows["srtt_s"] > 0]
    rtt_s = float(srtt.min())
    t = rows["t_s"].to_numpy()
    delivered = rows["delivered_bytes"].to_numpy()
    # Delivered one RTT earlier, at each sample: the last sample at or before t - rtt.
    earlier = np.searchsorted(t, t - rtt_s, side="right") - 1
    acked = delivered - np.where(earlier >= 0, delivered[np.maximum(earlier, 0)], 0)
    mss = int(result.config["flows"][flow]["mss"])
    return int(acked.max()) // mss, round(rtt_s * 1000, 3)
