"""Short web transfers on a new connection against the initial windows (initcwnd seed):
the initcwnd × initrwnd grid and `slowstart plan`, both by simulation.

A new connection fetches one object: handshake, request, response. Per run we read the web
application's first object: `total_s` (from the connection attempt to the last byte),
`first_to_last_s`, `stalls` (round trips the server spent waiting on a window with the path not
full), and `round_trips` = handshake + request + stalls, two when the object comes in one flight.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from slowstart.loading.defaults import defaults
from slowstart.loading.scenario import load
from slowstart.running.api import run
from slowstart.running.sweeps import check_points
from slowstart.units import ScenarioError, parse_rate, parse_size, parse_time

DEFAULT_WINDOWS = (2, 3, 4, 10, 16, 20, 32, 64)
# What the plan sets itself, and the option that says it: an override of one would be run under
# a heading that names the option's value.
OWN_KEYS = {
    "path.rate": "--rate",
    "path.rtt": "--rtt",
    "path.buffer": "--buffer",
    "flow.0.cc": "--cc",
    "flow.0.initcwnd": "--initcwnd",
    "flow.0.initrwnd": "--initrwnd",
    "flow.0.abc": "--abc",
    "app.0.response": "--size",
}
# Largest window `one_flight` searches, in segments.
MAX_WINDOW = 1024


def plan_scenario(
    rtt: str, rate: str, buffer: str | None = None, cc: str | None = None
) -> dict[str, Any]:
    """The raw scenario `plan` runs: one web flow over a [path]; the size is set per run. The
    buffer, algorithm and request are the core's defaults unless given."""
    parse_time(rtt, "--rtt")
    parse_rate(rate, "--rate")
    path = {"rate": rate, "rtt": rtt} | ({} if buffer is None else {"buffer": buffer})
    flow = {"app": {"kind": "web", "response": "1B"}} | ({} if cc is None else {"cc": cc})
    return {"name": "plan", "duration": "600s", "path": path, "flow": [flow]}


def first_object(summary: dict[str, Any]) -> dict[str, Any] | None:
    """The first object's metrics with `round_trips` added, or None if it never arrived."""
    apps = summary.get("apps") or []
    objects = apps[0]["objects"] if apps else []
    if not objects:
        return None
    o = dict(objects[0])
    o["round_trips"] = 2 + o["stalls"]
    return o


def measure(
    scenario: dict[str, Any] | str,
    size: int,
    initcwnd: int,
    initrwnd: int,
    overrides: Iterable[str] = (),
) -> dict[str, Any]:
    """One object of `size` bytes on a new connection with these initial windows."""
    raw = copy.deepcopy(scenario) if isinstance(scenario, dict) else scenario
    sets = [
        *overrides,
        f"flow.0.initcwnd={initcwnd}",
        f"flow.0.initrwnd={initrwnd}",
        f"app.0.response={size}B",
    ]
    o = first_object(run(raw, set=sets).summary)
    if o is None:
        raise ScenarioError(
            f"plan: the {size}-byte object did not arrive within the run "
            f"(initcwnd {initcwnd}, initrwnd {initrwnd})"
        )
    return {"size_bytes": size, "initcwnd": initcwnd, "initrwnd": initrwnd, **o}


def grid(
    scenario: dict[str, Any] | str,
    sizes: list[int],
    cwnds: Iterable[int],
    rwnds: Iterable[int],
    overrides: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """Every size × initcwnd × initrwnd, in that order."""
    overrides = list(overrides)
    return [
        measure(scenario, size, c, r, overrides) for size in sizes for c in cwnds for r in rwnds
    ]


def _smallest(fits, lo: int, hi: int) -> int | None:
    """Smallest n in [lo, hi] with fits(n), for a monotone `fits`; None if even hi fails."""
    if not fits(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def one_flight(
    scenario: dict[str, Any] | str, sizes: list[int], overrides: Iterable[str] = ()
) -> dict[str, int] | None:
    """The smallest initcwnd and initrwnd with which every size arrives in one flight (no
    stall), searched by simulation: each window alone with the other at MAX_WINDOW, then both
    together, raised if they do not suffice jointly."""
    overrides = list(overrides)

    def no_stall(c: int, r: int) -> bool:
        return all(measure(scenario, s, c, r, overrides)["stalls"] == 0 for s in sizes)

    c = _smallest(lambda n: no_stall(n, MAX_WINDOW), 1, MAX_WINDOW)
    r = _smallest(lambda n: no_stall(MAX_WINDOW, n), 1, MAX_WINDOW)
    if c is None or r is None:
        return None
    while not no_stall(c, r):
        if c >= MAX_WINDOW and r >= MAX_WINDOW:
            return None
        c, r = min(c + 1, MAX_WINDOW), min(r + 1, MAX_WINDOW)
    return {"initcwnd": c, "initrwnd": r}


def parse_windows(text: str, field: str) -> list[int]:
    """ "3,10,20" → [3, 10, 20]."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise ScenarioError(
                f"{field}: expected a comma-separated list of windows in segments such as "
                f'"3,10,20", got {part!r}'
            )
        out.append(int(part))
    return sorted(set(out))


def parse_sizes(items: Iterable[str]) -> list[int]:
    """["17kB", "40kB,100kB"] → byte counts, each > 0."""
    sizes = []
    for item in items:
        for part in item.split(","):
            size = parse_size(part.strip(), "--size")
            if size == 0:
                raise ScenarioError(f"--size: must be > 0 bytes, got {part.strip()!r}")
            sizes.append(size)
    if not sizes:
        raise ScenarioError('--size: expected one or more sizes such as "17kB"')
    return sizes


def plan(
    rtt: str,
    rate: str,
    sizes: list[int],
    cwnds: Iterable[int] = DEFAULT_WINDOWS,
    rwnds: Iterable[int] = DEFAULT_WINDOWS,
    buffer: str | None = None,
    cc: str | None = None,
    overrides: Iterable[str] = (),
    abc: bool | None = None,
) -> dict[str, Any]:
    """The operator's answer: the grid table and the smallest one-flight setting, with its
    rows (`one_flight_rows`) when it is not a point of the grid. `abc` sets how the sender
    counts: bytes acknowledged (RFC 3465, Linux today, the default) or one segment per ACK
    (Linux 2.6.3x, `reproduce web-initcwnd`); `abc` in the answer says which was used.
    `buffer` and `cc` default to the core's (a `[path]` buffer, a flow's algorithm)."""
    cwnds, rwnds = list(cwnds), list(rwnds)
    # A grid of runs, as a sweep is: sized before any of them.
    check_points(len(sizes) * len(cwnds) * len(rwnds), "--size x --initcwnd x --initrwnd")
    if buffer is None:
        buffer = str(defaults("path")["buffer"])
    if cc is None:
        cc = defaults("flow")["cc"]["name"]
    scenario = plan_scenario(rtt, rate, buffer, cc)
    overrides = list(overrides)
    for item in overrides:
        key = item.partition("=")[0].strip()
        option = OWN_KEYS.get(key) or OWN_KEYS.get(key.rpartition(".")[0])
        if option is not None:
            raise ScenarioError(f"--set {item}: the plan sets {key} itself; use {option}")
    if abc is not None:
        overrides.append(f"flow.0.abc={'true' if abc else 'false'}")
    used = load(scenario, set=overrides)["flows"][0]["abc"]
    best = one_flight(scenario, sizes, overrides)
    extra = []
    if best is not None and (best["initcwnd"] not in cwnds or best["initrwnd"] not in rwnds):
        extra = grid(scenario, sizes, [best["initcwnd"]], [best["initrwnd"]], overrides)
    return {
        "rtt": rtt,
        "rate": rate,
        "buffer": buffer,
        "cc": cc,
        "abc": used,
        "sizes_bytes": sizes,
        "table": grid(scenario, sizes, cwnds, rwnds, overrides),
        "one_flight": best,
        "one_flight_rows": extra,
    }


def format_plan(p: dict[str, Any]) -> str:
    head = (
        f"plan: {', '.join(f'{s:,} B' for s in p['sizes_bytes'])} over {p['rate']}, "
        f"{p['rtt']} RTT, buffer {p['buffer']}, {p['cc']}; new connection per object\n"
        + (
            "  cwnd grows by the bytes each ACK covers (ABC, RFC 3465, as Linux today; "
            "--abc off counts one segment per ACK, as Linux 2.6.3x)"
            if p.get("abc", True)
            else "  cwnd grows by one segment per ACK (no ABC, as Linux 2.6.3x and "
            "`reproduce web-initcwnd`; --abc on counts bytes, as Linux today)"
        )
    )
    lines = [
        head,
        "",
        f"  {'size':>10}  {'initcwnd':>8}  {'initrwnd':>8}  {'total_ms':>9}  "
        f"{'first_to_last_ms':>16}  {'round_trips':>11}  {'stalls':>6}",
    ]
    extra = p.get("one_flight_rows") or []
    for row in [*p["table"], *extra]:
        if extra and row is extra[0]:
            lines.append("  (the one-flight setting below, not a point of the grid above)")
        lines.append(
            f"  {row['size_bytes']:>10,}  {row['initcwnd']:>8}  {row['initrwnd']:>8}  "
            f"{row['total_s'] * 1e3:>9.1f}  {row['first_to_last_s'] * 1e3:>16.1f}  "
            f"{row['round_trips']:>11}  {row['stalls']:>6}"
        )
    best = p["one_flight"]
    lines.append("")
    if best is None:
        lines.append(f"one flight: not reached with windows up to {MAX_WINDOW} segments")
    else:
        lines.append(
            f"one flight (two round trips in all): initcwnd {best['initcwnd']}, "
            f"initrwnd {best['initrwnd']} (ip route ... initcwnd {best['initcwnd']} "
            f"initrwnd {best['initrwnd']})"
        )
    return "\n".join(lines)
