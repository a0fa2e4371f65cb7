"""Instructions per event under `valgrind --tool=callgrind`, where seconds are too noisy.

Each case runs twice in a fresh interpreter under callgrind: once for 1 ms of simulated time
(start-up, loading, setup) and once for the case's duration. Instructions per event are the
difference in instructions over the difference in events, so the interpreter and the loader
drop out and what is left is the engine's cost per event, averaged over the run.

    .venv/bin/python bench/callgrind.py early-loss-60s cubic-1 cubic-1000
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from run import cubic_flows

ROOT = Path(__file__).resolve().parent.parent


def small_swarm(completions: int) -> dict:
    """Issue #10's swarm (scenarios/swarm-adsl.toml), ended at the `completions`-th download so
    that callgrind's slowdown stays bearable."""
    with open(ROOT / "scenarios" / "swarm-adsl.toml", "rb") as f:
        scenario = tomllib.load(f)
    scenario["swarm"]["stop_after"] = completions
    return scenario


# name -> (scenario path or dict, duration)
CASES: dict[str, tuple[str | dict, str]] = {
    "early-loss-60s": ("scenarios/lfn-early-loss.toml", "60s"),
    **{f"cubic-{n}": (cubic_flows(n), "5s") for n in (1, 10, 100, 1000)},
    "swarm-20": (small_swarm(20), "4000s"),
}

CHILD = r"""
import json, sys
import slowstart
scenario, duration = json.loads(sys.argv[1])
r = slowstart.run(scenario, duration=duration)
print(json.dumps({"events": r.summary["events"]}))
"""


def instructions(scenario: str | dict, duration: str) -> tuple[int, int]:
    """(instructions, events) of one run under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/callgrind.out",
                sys.executable,
                "-c",
                CHILD,
                json.dumps([scenario, duration]),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
    collected = re.search(r"Collected : (\d+)", out.stderr)
    if collected is None:
        sys.exit(f"error: no instruction count in callgrind's output: {out.stderr[-500:]}")
    return int(collected.group(1)), json.loads(out.stdout)["events"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", help=f"subset of: {', '.join(CASES)}")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("error: valgrind is not installed")
    for name in args.cases or CASES:
        if name not in CASES:
            sys.exit(f"error: unknown case {name!r} (accepted: {', '.join(CASES)})")
        scenario, duration = CASES[name]
        base_instr, base_events = instructions(scenario, "1ms")
        instr, events = instructions(scenario, duration)
        per_event = (instr - base_instr) / (events - base_events)
        print(
            f"{name:16s} {events / 1e6:7.2f} M events in {duration:>4s} "
            f"{(instr - base_instr) / 1e9:7.2f} G instructions {per_event:7.0f} per event",
            flush=True,
        )


if __name__ == "__main__":
    main()
