"""Refuse, before it starts, a swarm that cannot fit in this machine's memory (issue #37): the
core's estimate of its peak (every scheduled peer present at its connection limits,
`swarm_peak_bytes`) against the memory the kernel says it can give without swapping."""

from __future__ import annotations

import json
from typing import Any

from slowstart import lazy
from slowstart.units import ScenarioError

_core = lazy.module("slowstart._core")

MEMINFO = "/proc/meminfo"


def available_bytes() -> int | None:
    """`MemAvailable` of /proc/meminfo (Linux 3.14 on), or None where there is none."""
    try:
        with open(MEMINFO) as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024  # the kernel's kB are KiB
    except (OSError, ValueError, IndexError):
        return None
    return None


def require_swarm_fits(config: dict[str, Any]) -> None:
    """ScenarioError naming `swarm.leechers` if the swarm's estimated peak exceeds the memory
    available; nothing for a run without a swarm or a machine that does not say."""
    if config.get("swarm") is None:
        return
    try:
        peak = _core.swarm_peak_bytes(json.dumps(config))
    except ValueError as e:  # the core's "<field>: <message>", as a run would raise it
        raise ScenarioError(str(e)) from None
    available = available_bytes()
    if peak is None or available is None:
        return
    peers, per_peer = peak
    if peers * per_peer <= available:
        return
    seeds = config["swarm"]["seeds"]
    most = available // per_peer - seeds
    fit = (
        f"at most {most} leechers fit"
        if most > 0
        else "not one leecher fits at these connection limits (swarm.bittorrent.max_connections)"
    )
    raise ScenarioError(
        f"swarm.leechers: {peers} peers need up to {gigabytes(peers * per_peer)} "
        f"({per_peer // 1000} kB each at their connection limits), more than the "
        f"{gigabytes(available)} this machine has available (MemAvailable); {fit}"
    )


def gigabytes(n: int) -> str:
    return f"{n / 1e9:.1f} GB"
