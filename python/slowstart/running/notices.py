"""Warnings about a run that is valid but probably not what was meant: settings far outside
what the path can use (told before the run) and flows that delivered nothing or whose
slow-start exit cannot be measured (told after it). `slowstart run` prints each on one
`warning:` line on stderr; the run itself is never changed.
"""

from __future__ import annotations

from typing import Any

from slowstart.loading import guests
from slowstart.tables import fmt_bytes

# An initial window this many times what the path holds (BDP + buffer) is far outside it.
INITCWND_PATH_TIMES = 10
# A buffer that takes longer than this to drain at the line rate (and 100 RTTs) is hours
# of queue no real path keeps.
BUFFER_DRAIN_S = 60.0


def _path(config: dict[str, Any]) -> tuple[int, int] | None:
    """(bottleneck rate in bits/s, round-trip propagation in ns) of the slowest link and every
    link's delay both ways: exact for a `[path]`, a bound (a larger BDP) for a topology; None
    without a rate (a capacity trace)."""
    links = config.get("links") or []
    rates = [link["forward"]["rate_bps"] for link in links if link["forward"].get("rate_bps")]
    if not rates:
        return None
    rtt = sum(link[d].get("delay_ns", 0) for link in links for d in ("forward", "reverse"))
    return min(rates), rtt


def _buffer_bytes(queue: dict[str, int], packet: int) -> int:
    return queue["bytes"] if "bytes" in queue else queue.get("packets", 0) * packet


def before(config: dict[str, Any]) -> list[str]:
    """Settings far outside what the path can use: an initial window many times the path's
    BDP and buffer, or written as bytes (a multiple of the MSS); a forward buffer of minutes."""
    path = _path(config)
    out: list[str] = []
    flows = config.get("flows") or []
    for i, f in enumerate(flows):
        mss, initcwnd = f["mss"], f["initcwnd"]
        if initcwnd >= mss and initcwnd % mss == 0:
            out.append(
                f"flow.{i}.initcwnd = {initcwnd} is {initcwnd // mss} x mss: initcwnd counts "
                f"segments ({fmt_bytes(initcwnd * mss)} here), not bytes"
            )
            continue
        if path is None:
            continue
        rate, rtt = path
        bottleneck = min(config["links"], key=lambda link: link["forward"].get("rate_bps") or 0)
        holds = rate * rtt // (8 * 10**9) + _buffer_bytes(
            bottleneck["forward"]["queue"], mss + f["header_bytes"]
        )
        if initcwnd * mss > INITCWND_PATH_TIMES * max(holds, mss):
            out.append(
                f"flow.{i}.initcwnd = {initcwnd} segments ({fmt_bytes(initcwnd * mss)}) is "
                f"{initcwnd * mss / max(holds, 1):.0f} times what the path holds (BDP and buffer: "
                f"{fmt_bytes(holds)})"
            )
    if path is not None and flows:
        packet = max(f["mss"] + f["header_bytes"] for f in flows)
        for link in config["links"]:  # the data's direction: ACKs hardly fill the reverse's
            d = link["forward"]
            if not d.get("rate_bps") or "queue" not in d:
                continue
            drain_s = _buffer_bytes(d["queue"], packet) * 8 / d["rate_bps"]
            if drain_s > max(BUFFER_DRAIN_S, 100 * path[1] / 1e9):
                out.append(
                    f"link {link['name']}: its buffer takes {drain_s / 60:.0f} minutes to "
                    "drain at the line rate"
                )
    return out


def after(config: dict[str, Any], summary: dict[str, Any]) -> list[str]:
    """Flows that delivered nothing, and users' controllers whose slow-start exit the run
    could not measure."""
    out: list[str] = []
    specs = config.get("flows") or []
    for f, spec in zip(summary.get("flows") or [], specs, strict=False):
        if f.get("bytes_delivered") == 0 and spec.get("size_bytes") != 0:
            end = summary.get("sim_time_s", config["duration_ns"] / 1e9)
            path = _path(config)
            why = ""
            if path is not None and path[1] >= config["duration_ns"]:
                why = f": the round trip ({path[1] / 1e9:g} s) is longer than the run"
            out.append(f"flow {f['id']} delivered nothing in {end:g} s{why}")
        cc = spec.get("cc")
        if (
            isinstance(cc, dict)
            and "guest" in cc
            and f.get("slow_start_exit_s") is None
            and guests.tells_no_phase(cc["name"])
        ):
            out.append(
                f"flow {f['id']}: {cc['name']} defines neither phase() nor ssthresh(), so its "
                "slow-start exit is not measured (docs/controllers.md)"
            )
    return out
