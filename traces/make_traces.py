"""Write the synthetic link traces in this folder (Mahimahi's format: one line per 1500-byte
delivery opportunity, its time in ms; the trace repeats with its last time as period).

    python traces/make_traces.py        # rewrites steps.txt, outages.txt, cellular-walk.txt

A rate of R Mbps is R / 12 opportunities per millisecond; fractions carry over from one
millisecond to the next, so every trace's mean rate is exact to one opportunity.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent


def opportunities(rate_mbps: Callable[[int], float], duration_ms: int) -> list[int]:
    """Times (ms, from 1) of the opportunities of a link whose rate in ms `t` is rate_mbps(t)."""
    times: list[int] = []
    credit = 0.0
    for t in range(1, duration_ms + 1):
        credit += rate_mbps(t) / 12.0
        while credit >= 1.0:
            times.append(t)
            credit -= 1.0
    return times


def steps(t: int) -> float:
    """12, 3, 24 and 6 Mbps, 5 s each: sudden capacity changes both ways."""
    return (12.0, 3.0, 24.0, 6.0)[min((t - 1) // 5000, 3)]


def outages(t: int) -> float:
    """12 Mbps with a 500 ms outage every 4 s, at the start of each 4 s so that the trace
    ends on an opportunity and its period is a whole 16 s."""
    return 0.0 if (t - 1) % 4000 < 500 else 12.0


def cellular_walk(seed: int = 13) -> Callable[[int], float]:
    """A multiplicative random walk between 0.5 and 20 Mbps, a new rate every 100 ms: the
    range and time scale of the recorded LTE traces (Winstein et al., NSDI 2013)."""
    rng = random.Random(seed)
    rates = [8.0]
    for _ in range(200):
        rates.append(min(20.0, max(0.5, rates[-1] * rng.choice((0.7, 0.85, 1.0, 1.2, 1.4)))))
    return lambda t: rates[(t - 1) // 100]


def write(name: str, times: list[int]) -> None:
    (HERE / name).write_text("".join(f"{t}\n" for t in times))


def main() -> None:
    write("steps.txt", opportunities(steps, 20_000))
    write("outages.txt", opportunities(outages, 16_000))
    write("cellular-walk.txt", opportunities(cellular_walk(), 20_000))


if __name__ == "__main__":
    main()
