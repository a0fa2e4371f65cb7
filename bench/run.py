"""`make bench`: time the simulator on reference runs and write bench/results.json.

Each case runs in its own process so its peak memory (ru_maxrss) is its own. Wall time is the
core's run alone (the summary's `wall_s`), so events per second measure the engine, not Python.
The `startup-*` cases are the exception: they time the whole `slowstart` process, as a user
waits for it. Compare ratios within one run: these 2-core machines are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# name -> (scenario, --set overrides, duration or None for the scenario's own)
CASES: dict[str, tuple[str, list[str], str | None]] = {
    "satellite-100MB-reno": ("scenarios/satellite.toml", ["flow.0.cc=reno"], None),
    "early-loss-to-window-cap": ("scenarios/lfn-early-loss.toml", [], "285s"),
    "early-loss-600s": ("scenarios/lfn-early-loss.toml", [], None),
    "web-1000-objects-keepalive": ("scenarios/web-initcwnd.toml", ["app.0.objects=1000"], "600s"),
    "bittorrent-60s": ("scenarios/bittorrent-request-slowstart.toml", [], "60s"),
    # Issue #10: the paper's swarm (100 leechers, 50-50, random stay, to the 100th completion)
    # and one ten times its size (1000 leechers arriving ten times as often).
    "swarm-100-random-stay": ("scenarios/swarm-adsl.toml", [], None),
    "swarm-1000-random-stay": (
        "scenarios/swarm-adsl.toml",
        ["swarm.leechers=1000", "swarm.stop_after=1000", 'swarm.arrival_mean="1s"'],
        None,
    ),
}

# One case per algorithm on the same path: 60 s of the early-loss run (500 Mbps, 80 ms, one
# early drop, 3500-segment window). Events per second are compared with Reno's in the same run
# (issue #3: within 20%).
ALGORITHMS = (
    "reno",
    "lss",
    "cubic",
    "hstcp",
    "aimd:a=15,b=0.3",
    "aimd:mode=periodic",
    "scalable",
    "vegas",
    "vegas-lss",
    "ledbat",
    "utp",
    "bbr",
    "bbr1",
    "hystart-pb",
    "cubic:slow_start=hystart++",
    "cubic:slow_start=search",
)
CASES |= {
    f"algo-{cc}": ("scenarios/lfn-early-loss.toml", [f'flow.0.cc="{cc}"'], "60s")
    for cc in ALGORITHMS
}

# `slowstart sweep` at scale: 12 runs of 30 s of the early-loss path (4 algorithms x 3 seeds),
# 0.1-0.5 s each, in one process and then in two: the process pool's speed-up.
SWEEP = {
    "scenario": "scenarios/lfn-early-loss.toml",
    "vary": {"flow.0.cc": ["reno", "cubic", "bbr", "hystart-pb"]},
    "seeds": [1, 2, 3],
    "duration": "30s",
}
SWEEP_CASES = {"sweep-12-runs-jobs1": 1, "sweep-12-runs-jobs2": 2}

# Start-up (issue #14): the whole `slowstart` process, from fork to exit, median of `--runs`
# after one unrecorded run. name -> (arguments, target in seconds).
STARTUP_CASES: dict[str, tuple[list[str], float]] = {
    "startup-list": (["list"], 0.150),
    "startup-run-satellite-json": (["run", "satellite", "--json"], 0.250),
}

SWEEP_CHILD = r"""
import json, resource, sys, time
import slowstart
spec, jobs = json.loads(sys.argv[1])
t0 = time.perf_counter()
rows = slowstart.sweep(
    spec["scenario"], spec["vary"], seeds=spec["seeds"], duration=spec["duration"], jobs=jobs
)
wall = time.perf_counter() - t0
print(json.dumps({
    "runs": len(rows),
    "wall_s": wall,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""

CHILD = r"""
import json, resource, sys, time
import slowstart
scenario, overrides, duration = json.loads(sys.argv[1])
t0 = time.perf_counter()
r = slowstart.run(scenario, set=overrides, duration=duration)
frames = r.flows, r.queues, r.apps  # built on first use; built here as before, same RSS
total = time.perf_counter() - t0
s = r.summary
print(json.dumps({
    "events": s["events"],
    "sim_time_s": s["sim_time_s"],
    "wall_s": s["wall_s"],
    "wall_with_python_s": total,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def child(script: str, argument: object) -> dict:
    """Run `script` in a fresh interpreter with `argument` as JSON; its printed JSON."""
    out = subprocess.run(
        [sys.executable, "-c", script, json.dumps(argument)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def run_case(scenario: str, overrides: list[str], duration: str | None) -> dict:
    m = child(CHILD, [scenario, overrides, duration])
    m["events_per_s"] = m["events"] / m["wall_s"]
    m["sim_s_per_wall_s"] = m["sim_time_s"] / m["wall_s"]
    return m


def run_sweep_case(jobs: int) -> dict:
    m = child(SWEEP_CHILD, [SWEEP, jobs])
    m["runs_per_s"] = m["runs"] / m["wall_s"]
    return m


def slowstart_command() -> list[str]:
    """The `slowstart` script beside this interpreter (the venv's), else `python -m slowstart`."""
    script = Path(sys.executable).with_name("slowstart")
    return [str(script)] if script.exists() else [sys.executable, "-m", "slowstart"]


def run_startup_case(args: list[str], target_s: float, runs: int) -> dict:
    """Whole-process wall time of `slowstart ARGS`: median, min and max of `runs`, and the
    largest peak RSS. Bytecode caching is on, as on a user's machine: this workplace sets
    PYTHONDONTWRITEBYTECODE, which would make every run compile the package again."""
    command = [*slowstart_command(), *args]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    walls, rss = [], []
    for i in range(runs + 1):
        with tempfile.TemporaryFile() as err:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err
            )
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                err.seek(0)
                message = err.read().decode(errors="replace").strip()
                sys.exit(f"error: {' '.join(command)} exited {proc.returncode}: {message}")
        if i:  # the first run warms the page cache and writes the bytecode
            walls.append(wall)
            rss.append(usage.ru_maxrss / 1024)
    return {
        "command": " ".join(["slowstart", *args]),
        "runs": runs,
        "wall_median_s": statistics.median(walls),
        "wall_min_s": min(walls),
        "wall_max_s": max(walls),
        "target_s": target_s,
        "peak_rss_mb": max(rss),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    every = [*CASES, *SWEEP_CASES, *STARTUP_CASES]
    ap.add_argument("cases", nargs="*", help=f"subset of: {', '.join(every)}")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results.json"))
    ap.add_argument(
        "--runs", type=int, default=10, help="runs of each startup-* case (default %(default)s)"
    )
    args = ap.parse_args()
    names = args.cases or every
    unknown = [n for n in names if n not in every]
    if unknown:
        sys.exit(f"error: unknown bench case {unknown[0]!r} (accepted: {', '.join(every)})")
    results = {}
    for name in names:
        if name in STARTUP_CASES:
            results[name] = m = run_startup_case(*STARTUP_CASES[name], max(args.runs, 1))
            print(
                f"{name:36s} {m['wall_median_s'] * 1e3:8.0f} ms median of {m['runs']} "
                f"({m['wall_min_s'] * 1e3:.0f}-{m['wall_max_s'] * 1e3:.0f} ms, target "
                f"{m['target_s'] * 1e3:.0f} ms) {m['peak_rss_mb']:6.0f} MB"
            )
            continue
        if name in SWEEP_CASES:
            results[name] = m = run_sweep_case(SWEEP_CASES[name])
            print(
                f"{name:36s} {m['runs']:8d} runs   {m['wall_s']:7.2f} s wall "
                f"{m['runs_per_s']:6.1f} runs/s {m['peak_rss_mb']:22.0f} MB"
            )
            continue
        results[name] = run_case(*CASES[name])
        m = results[name]
        print(
            f"{name:36s} {m['events'] / 1e6:8.1f} M events {m['wall_s']:7.2f} s wall "
            f"{m['events_per_s'] / 1e6:6.1f} M ev/s {m['sim_s_per_wall_s']:7.1f} sim-s/s "
            f"{m['peak_rss_mb']:6.0f} MB"
        )
    reno = results.get("algo-reno")
    if reno:
        print("events/s relative to reno on the same path (issue #3: within 20%):")
        for name, m in results.items():
            if name.startswith("algo-"):
                m["events_per_s_vs_reno"] = m["events_per_s"] / reno["events_per_s"]
                print(f"  {name[5:]:32s} {m['events_per_s_vs_reno']:5.2f}")
    record = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "results": results,
    }
    Path(args.out).write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
