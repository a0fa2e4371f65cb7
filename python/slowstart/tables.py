"""Plain-text tables and human-readable numbers: what `slowstart run` prints, what a Result
shows in a notebook, and the tables of the swarm, the scorecard and the real swarm. Below
everything that prints, so that none of them imports the CLI for its tables.
"""

from __future__ import annotations

from typing import Any


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"


def fmt_rate(bps: float | None) -> str:
    if bps is None:
        return "-"
    for unit, scale in (("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if abs(bps) >= scale:
            return f"{bps / scale:.2f} {unit}"
    return f"{bps:.0f} bps"


def fmt_s(s: float | None) -> str:
    return "-" if s is None else f"{s:.3f}"


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines)


def summary_tables(s: dict[str, Any]) -> list[tuple[list[str], list[list[str]]]]:
    """A run's flows and link directions as (headers, rows) of text cells: what `run` prints
    and what a Result shows in a notebook."""
    flow_rows = [
        [
            str(f["id"]),
            f["cc"],
            fmt_bytes(f["bytes_delivered"]),
            fmt_s(f["completion_s"]),
            fmt_rate(f["goodput_bps"]),
            fmt_s(f["slow_start_exit_s"]),
            fmt_s(f["time_to_full_bw_s"]),
            fmt_s(f["time_to_window_cap_s"]),
            str(f["retransmits"]),
            str(f["loss_events"]),
            str(f["rto_count"]),
            fmt_bytes(f["max_cwnd_bytes"]),
        ]
        for f in s["flows"]
    ]
    flow_headers = [
        "flow",
        "cc",
        "delivered",
        "completion_s",
        "goodput",
        "ss_exit_s",
        "full_bw_s",
        "window_cap_s",
        "retx",
        "losses",
        "rtos",
        "max_cwnd",
    ]
    link_rows = [
        [
            link["name"],
            str(link["drops"]),
            fmt_bytes(link["max_queue_bytes"]),
            f"{link['mean_queue_delay_s'] * 1e3:.3f}",
        ]
        for link in s["links"]
    ]
    link_headers = ["link", "drops", "max_queue", "mean_queue_delay_ms"]
    return [(flow_headers, flow_rows), (link_headers, link_rows)]


def summary_head(s: dict[str, Any]) -> str:
    """The run's one line: scenario, seed, simulated time, events, wall time."""
    return (
        f"{s['scenario']}: seed {s['seed']}, {s['sim_time_s']:.3f} s simulated, "
        f"{s['events']:,} events, {s.get('wall_s', 0):.2f} s wall"
    )


def format_summary(s: dict[str, Any]) -> str:
    parts = [
        summary_head(s),
        *(table(headers, rows) for headers, rows in summary_tables(s)),
        format_cross(s.get("cross") or []),
        format_apps(s.get("apps") or []),
    ]
    return "\n\n".join(p for p in parts if p)


def format_cross(cross: list[dict[str, Any]]) -> str:
    """One row per cross-traffic source: packets sent, delivered and dropped."""
    if not cross:
        return ""
    rows = [
        [str(c["id"]), c["kind"], f"{c['src']}->{c['dst']}", fmt_rate(c["rate_bps"])]
        + [str(c["packets_sent"]), str(c["packets_delivered"]), str(c["packets_dropped"])]
        + [fmt_rate(c["delivered_bps"])]
        for c in cross
    ]
    headers = ["cross", "kind", "path", "rate", "sent", "delivered", "dropped", "delivered_rate"]
    return table(headers, rows)


def format_apps(apps: list[dict[str, Any]]) -> str:
    """Web objects (ttfb, first-to-last byte, total, stalls) and BitTorrent request queues."""
    parts = []
    objects = [
        [str(a["flow"]), str(k), fmt_bytes(o["bytes"]), fmt_s(o["ttfb_s"])]
        + [fmt_s(o["first_to_last_s"]), fmt_s(o["total_s"]), str(o["stalls"])]
        for a in apps
        if a["kind"] == "web"
        for k, o in enumerate(a["objects"])
    ]
    if objects:
        if len(objects) > 20:
            objects = [*objects[:10], ["..."] * 7, *objects[-10:]]
        headers = ["flow", "object", "bytes", "ttfb_s", "first_to_last_s", "total_s", "stalls"]
        parts.append(table(headers, objects))
    queues = [
        [str(a["flow"]), str(a["blocks_received"]), str(a["outstanding_max"])]
        + [str(a["target_queue_max"]), str(a["target_queue_final"])]
        + [fmt_rate(a["download_rate_final_bps"]), fmt_s(a["app_slow_start_exit_s"])]
        for a in apps
        if a["kind"] == "bittorrent"
    ]
    if queues:
        headers = ["flow", "blocks", "outstanding_max", "target_max", "target_final"]
        headers += ["download_rate", "app_ss_exit_s"]
        parts.append(table(headers, queues))
    return "\n\n".join(parts)
