"""Instructions per event under `valgrind --tool=callgrind`, where seconds are too noisy.

Each case runs twice in a fresh interpreter under callgrind: once for 1 ms of simulated time
(start-up, loading, setup) and once for the case's duration. Instructions per event are the
difference in instructions over the difference in events, so the interpreter and the loader
drop out and what is left is the engine's cost per event, averaged over the run.

    .venv/bin/python bench/callgrind.py early-loss-60s cubic-1 cubic-1000

The `swarm-N-present` cases (issue #37's event queue at scale) count from 32 simulated s, when
their N leechers have arrived, to the case's duration instead of from 1 ms. With `--keep DIR`
valgrind's output files stay there, for `cg_diff` and `cg_annotate` by function.

The `guest-*` cases are bench/run.py's (issue #23: built-in Reno against the same Reno as a
WebAssembly guest under each runtime, and in Python), on the early-loss path for 30 s.

With `--penalties` the cases run under `valgrind --tool=cachegrind` instead, with its cache
and branch simulations on, and print per event what instructions alone do not show: first-level
data cache misses, second-level misses (cachegrind's last level set to this machine's L2, from
/sys) and mispredicted branches. Counts are cachegrind's models of a cache and a predictor, not
the CPU's own, but exact and the same whatever the load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path

from run import GUESTS, cubic_flows, require_current_extension

from slowstart.progress import bar

ROOT = Path(__file__).resolve().parent.parent


def small_swarm(completions: int) -> dict:
    """Issue #10's swarm (scenarios/swarm-adsl.toml), ended at the `completions`-th download so
    that callgrind's slowdown stays bearable."""
    with open(ROOT / "scenarios" / "swarm-adsl.toml", "rb") as f:
        scenario = tomllib.load(f)
    scenario["swarm"]["stop_after"] = completions
    return scenario


def swarm_present(peers: int) -> dict:
    """Issue #37's swarm at scale: `peers` leechers arriving in about 30 simulated s (one every
    30 s / `peers` on average), none stopping the run; measured from `SWARM_PRESENT_BASE` on,
    when nearly all are present, so the counts are those of a swarm of that size."""
    with open(ROOT / "scenarios" / "swarm-adsl.toml", "rb") as f:
        scenario = tomllib.load(f)
    scenario["swarm"].update(leechers=peers, arrival_mean=f"{30_000_000 // peers}us")
    scenario["swarm"]["stop_after"] = "none"
    return scenario


# The swarm-present cases' first run: 32 s, when 30 000 leechers arriving every 1 ms have all
# arrived (29 871 at 30 s).
SWARM_PRESENT_BASE = "32s"

# name -> (scenario path or dict, duration)
CASES: dict[str, tuple[str | dict, str]] = {
    "early-loss-60s": ("scenarios/lfn-early-loss.toml", "60s"),
    **{f"cubic-{n}": (cubic_flows(n), "5s") for n in (1, 10, 100, 1000)},
    "swarm-20": (small_swarm(20), "4000s"),
    # One BBRv3 flow on cubic-1's path: the boxed controller's case (issue #37).
    "bbr-1": ({**cubic_flows(1), "name": "bbr-1-flow", "flow": [{"cc": "bbr"}]}, "5s"),
    **{name: ("scenarios/lfn-early-loss.toml", "30s") for name in GUESTS},
    # About 0.4 M events past the base run each (issue #37's event queue at scale).
    "swarm-100-present": (swarm_present(100), "52s"),
    "swarm-3000-present": (swarm_present(3000), "45s"),
    "swarm-30000-present": (swarm_present(30_000), "38s"),
}
# name -> the first run's duration, where not 1 ms: the counts are the difference of the
# case's run and this one, so they are those of the events in between.
CASE_BASE = {f"swarm-{n}-present": SWARM_PRESENT_BASE for n in (100, 3000, 30_000)}
# name -> (the `set` overrides, the WebAssembly runtime it asks for), where a case has them
CASE_SETTINGS = {name: ([f'flow.0.cc="{cc}"'], runtime) for name, (cc, runtime) in GUESTS.items()}

CHILD = r"""
import json, sys
import slowstart
scenario, duration, settings = json.loads(sys.argv[1])
r = slowstart.run(scenario, duration=duration, set=settings)
print(json.dumps({"events": r.summary["events"]}))
"""


def second_level_cache() -> str | None:
    """Cachegrind's `--LL=size,ways,line` for this CPU's L2 (the level that a thousand flows'
    or a swarm's state spills from), or None where /sys does not say."""
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            if (index / "level").read_text().strip() != "2":
                continue
            size = (index / "size").read_text().strip()
            ways = (index / "ways_of_associativity").read_text().strip()
            line = (index / "coherency_line_size").read_text().strip()
        except OSError:
            return None
        units = {"K": 1024, "M": 1024 * 1024}
        n = int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
        return f"{n},{ways},{line}"
    return None


# cachegrind's summary lines: name -> the pattern whose first number is that total
PENALTIES = {
    "instructions": r"I\s+refs:\s+([\d,]+)",
    "d1_misses": r"D1\s+misses:\s+([\d,]+)",
    "l2_misses": r"LLd\s+misses:\s+([\d,]+)",
    "mispredicts": r"Mispredicts:\s+([\d,]+)",
}
INSTRUCTIONS = {"instructions": r"Collected : (\d+)"}


def valgrind_tool(penalties: bool, second_level: str | None, out_dir: str) -> list[str]:
    """valgrind's arguments: callgrind, or cachegrind with its cache and branch models."""
    if not penalties:
        return ["--tool=callgrind", f"--callgrind-out-file={out_dir}/callgrind.out"]
    tool = ["--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes"]
    tool.append(f"--cachegrind-out-file={out_dir}/cachegrind.out")
    if second_level is not None:
        tool.append(f"--LL={second_level}")
    return tool


def measure(
    name: str, duration: str, penalties: bool, second_level: str | None, keep: Path | None
) -> tuple[dict[str, int], int]:
    """(counters, events) of one run of case `name` for `duration` under callgrind, or
    cachegrind with `penalties`; valgrind's output file is copied into `keep` if given."""
    scenario = CASES[name][0]
    settings, runtime = CASE_SETTINGS.get(name, ([], None))
    # The interpreter's string hashes fixed, so that its dict work on a large summary (30 000
    # peers) is the same in every run: with random ones it differed by 16 M instructions.
    env = dict(os.environ, PYTHONHASHSEED="0")
    if runtime is not None:
        env["SLOWSTART_WASM_RUNTIME"] = runtime
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                "valgrind",
                *valgrind_tool(penalties, second_level, tmp),
                sys.executable,
                "-c",
                CHILD,
                json.dumps([scenario, duration, settings]),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        if keep is not None:
            tool = "cachegrind" if penalties else "callgrind"
            shutil.copy(f"{tmp}/{tool}.out", keep / f"{name}-{duration}.{tool}.out")
    counters = {}
    for name, pattern in (PENALTIES if penalties else INSTRUCTIONS).items():
        found = re.search(pattern, out.stderr)
        if found is None:
            sys.exit(f"error: no {name} in valgrind's output: {out.stderr[-500:]}")
        counters[name] = int(found.group(1).replace(",", ""))
    return counters, json.loads(out.stdout)["events"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", help=f"subset of: {', '.join(CASES)}")
    ap.add_argument(
        "--penalties",
        action="store_true",
        help="cachegrind: cache misses and mispredicted branches per event as well",
    )
    ap.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep valgrind's output files there (NAME-DURATION.TOOL.out), for "
        "callgrind_annotate, cg_annotate or cg_diff",
    )
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("error: valgrind is not installed")
    for name in args.cases or CASES:
        if name not in CASES:
            sys.exit(f"error: unknown case {name!r} (accepted: {', '.join(CASES)})")
    require_current_extension()
    second_level = second_level_cache() if args.penalties else None
    if args.penalties:
        print(f"cachegrind's second level: {second_level or 'its default'}")
    names = args.cases or list(CASES)
    runs = 2 * len(names)
    with bar("valgrind", unit="runs") as update:
        for n, name in enumerate(names):

            def step(k: int, first: int = 2 * n) -> None:
                update(first + k, runs)

            measure_case(name, args.penalties, second_level, step, args.keep)


def measure_case(
    name: str,
    penalties: bool,
    second_level: str | None,
    step: Callable[[int], None],
    keep: Path | None = None,
) -> None:
    """Print case `name`'s counts per event: its base run's (1 ms unless `CASE_BASE` says)
    subtracted from its full run's; `step(k)` before run k (0, 1)."""
    duration = CASES[name][1]
    step(0)
    base, base_events = measure(name, CASE_BASE.get(name, "1ms"), penalties, second_level, keep)
    step(1)
    counters, events = measure(name, duration, penalties, second_level, keep)
    per_event = {k: (v - base[k]) / (events - base_events) for k, v in counters.items()}
    line = (
        f"{name:19s} {(events - base_events) / 1e6:7.2f} M events in {duration:>4s} "
        f"{(counters['instructions'] - base['instructions']) / 1e9:7.2f} G instructions "
        f"{per_event['instructions']:7.0f} per event"
    )
    if penalties:
        line += (
            f"; per event: {per_event['d1_misses']:5.2f} D1 misses, "
            f"{per_event['l2_misses']:5.2f} L2 misses, "
            f"{per_event['mispredicts']:5.2f} mispredicted branches"
        )
    print(line, flush=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
