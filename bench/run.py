"""`make bench`: time the simulator on reference runs and write bench/results.json.

Each case runs in its own process so its peak memory (ru_maxrss) is its own. Wall time is the
core's run alone (the summary's `wall_s`), so events per second measure the engine, not Python.
The `startup-*` cases are the exception: they time the whole `slowstart` process, as a user
waits for it; so do `score-built-in` (the whole built-in scorecard, its CPU time beside) and
the `ns2-*` and `ns3-*` cases, which time the same run in ns-2 or ns-3 (our own small scripts
in bench/, run when Debian's `ns2` or `libns3-dev` is installed, skipped with a reason
otherwise) and report the ratio. Compare ratios within one run: these 2-core machines are
noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from slowstart.progress import bar

ROOT = Path(__file__).resolve().parent.parent


def cubic_flows(n: int) -> dict:
    """Issue #14's many-flows path: n CUBIC flows sharing 1 Gbps, 50 ms RTT, a 1-BDP buffer;
    traces sampled every 100 ms so that sampling many flows does not dominate."""
    return {
        "name": f"cubic-{n}-flows",
        "seed": 1,
        "path": {"rate": "1Gbps", "rtt": "50ms", "buffer": "1bdp"},
        "flow": [{"cc": "cubic"} for _ in range(n)],
        "trace": {"flow_interval": "100ms", "queue_interval": "100ms"},
    }


# name -> (scenario file or table, --set overrides, duration or None for the scenario's own)
CASES: dict[str, tuple[str | dict, list[str], str | None]] = {
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
    # Issue #37: 10 000 leechers arriving every 100 ms, to the 100th completion (about 4 700
    # peers by then); target at most 60 s and 300 MB (bench/README.md, "Swarms at scale").
    "swarm-10000-to-100th": (
        "scenarios/swarm-adsl.toml",
        ["swarm.leechers=10000", 'swarm.arrival_mean="100ms"'],
        None,
    ),
    # Issue #14: events per second with 1000 flows against one flow's, same path, same run;
    # and 10 000 flows, which must run and fit in 1 GB.
    "flows-1-cubic": (cubic_flows(1), [], "30s"),
    "flows-1000-cubic": (cubic_flows(1000), [], "30s"),
    "flows-10000-cubic": (cubic_flows(10_000), [], "10s"),
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

# Issue #23: a user's controller beside the built-in it restates, on the same path (100 s of the
# early-loss run, long enough that building the controllers is under a percent of a run): Reno
# built in; Reno alone compiled as a WebAssembly guest (examples/reno-guest, built by `make
# guests`: one controller a module, as a user's) run by each runtime (the JIT needs the extension
# built with the feature `jit`, as `make bench` builds it); the module of every built-in
# (examples/builtin-guest) running Reno, under the JIT; and Reno written in Python
# (examples/python/reno.py). The runs are byte-identical, so their events/s ratios are their
# wall times' (target: the guest within 1.5x).
WASM_DIR = ROOT / "target" / "wasm32-unknown-unknown" / "release"
BPF_DIR = ROOT / "examples" / "bpf" / "build"
GUESTS = {
    "guest-builtin-reno": ("reno", None),
    "guest-wasmtime-reno": (str(WASM_DIR / "reno_guest.wasm"), "wasmtime"),
    "guest-wasmi-reno": (str(WASM_DIR / "reno_guest.wasm"), "wasmi"),
    "guest-wasmtime-builtins-reno": (
        f"{WASM_DIR / 'builtin_guest.wasm'}:algorithm=reno",
        "wasmtime",
    ),
    "guest-python-reno": (str(ROOT / "examples" / "python" / "reno.py") + ":Reno", None),
    # Issue #42: the kernel's Reno and CUBIC as BPF objects (examples/bpf, `make bpf`) beside
    # the built-ins they restate (target: within 2x).
    "guest-builtin-cubic": ("cubic", None),
    "guest-bpf-reno": (str(BPF_DIR / "reno.bpf.o"), None),
    "guest-bpf-cubic": (str(BPF_DIR / "cubic.bpf.o"), None),
}
GUEST_DURATION = "100s"
CASES |= {
    name: ("scenarios/lfn-early-loss.toml", [f'flow.0.cc="{cc}"'], GUEST_DURATION)
    for name, (cc, _) in GUESTS.items()
}
# name -> the WebAssembly runtime it asks for (slowstart_wasm::RUNTIME_VAR)
CASE_ENV = {
    name: {"SLOWSTART_WASM_RUNTIME": runtime}
    for name, (_, runtime) in GUESTS.items()
    if runtime is not None
}

# `slowstart sweep` at scale: 12 runs of the early-loss path (4 algorithms x 3 seeds), in one
# process and then in two: the process pool's speed-up. 30 s runs take 0.1-0.5 s each; issue
# #14's target (two processes at least 1.8x one) is for runs of a second or more, the 300 s
# runs.
SWEEP = {
    "scenario": "scenarios/lfn-early-loss.toml",
    "vary": {"flow.0.cc": ["reno", "cubic", "bbr", "hystart-pb"]},
    "seeds": [1, 2, 3],
}
# name -> (simulated duration of each run, processes)
SWEEP_CASES = {
    "sweep-12-runs-jobs1": ("30s", 1),
    "sweep-12-runs-jobs2": ("30s", 2),
    "sweep-12-long-runs-jobs1": ("300s", 1),
    "sweep-12-long-runs-jobs2": ("300s", 2),
}

# Start-up (issue #14): the whole `slowstart` process, from fork to exit, median of `--runs`
# after one unrecorded run. name -> (arguments, target in seconds).
STARTUP_CASES: dict[str, tuple[list[str], float]] = {
    "startup-list": (["list"], 0.150),
    "startup-run-satellite-json": (["run", "satellite", "--json"], 0.250),
}

# Issue #24: the whole built-in scorecard (`slowstart score`: every built-in and CUBIC's
# slow-start rules on suites/scorecard.toml), every cell run into a fresh store over the
# machine's cores, the whole process timed. name -> target in seconds (on 2 cores).
SCORE_CASES: dict[str, float] = {"score-built-in": 300.0}

# Issue #14: the whole `slowstart run` process against ns-2 or ns-3 simulating the same run,
# timed alternately, median of `--ref-runs`. name -> (our arguments, reference tool, target
# ratio, summary fields compared). The reference scripts print one JSON line with those fields.
REFERENCE_CASES: dict[str, tuple[list[str], str, float, tuple[str, ...]]] = {
    # Floyd's early-loss run to the 3500-segment cap (bench/ns2_floyd.tcl).
    "ns2-floyd": (
        ["run", "lfn-early-loss", "--duration", "285s", "--json", "--quiet"],
        "ns2",
        10.0,
        ("time_to_window_cap_s", "data_packets_sent", "retransmits"),
    ),
    # The 100 MB satellite transfer, Reno (bench/ns3_satellite.cc).
    "ns3-satellite": (
        ["run", "satellite", "--cc", "reno", "--json", "--quiet"],
        "ns3",
        50.0,
        ("completion_s", "data_packets_sent", "drops"),
    ),
}
NS3_INCLUDE = Path("/usr/include/ns3")
NS3_LIBDIRS = (
    Path("/usr/lib/x86_64-linux-gnu"),
    Path("/usr/lib/aarch64-linux-gnu"),
    Path("/usr/lib"),
)

SWEEP_CHILD = r"""
import json, resource, sys, time
import slowstart
spec, jobs = json.load(sys.stdin)
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
scenario, overrides, duration = json.load(sys.stdin)
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


def child(script: str, argument: object, env: dict[str, str] | None = None) -> dict:
    """Run `script` in a fresh interpreter with `argument` as JSON on its standard input (a
    scenario of 10 000 flows is too long for a command line), `env` added to the environment;
    its printed JSON."""
    out = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(argument),
        cwd=ROOT,
        env=os.environ | (env or {}),
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def run_case(name: str) -> dict:
    scenario, overrides, duration = CASES[name]
    m = child(CHILD, [scenario, overrides, duration], CASE_ENV.get(name))
    m["events_per_s"] = m["events"] / m["wall_s"]
    m["sim_s_per_wall_s"] = m["sim_time_s"] / m["wall_s"]
    return m


# Issue #10: the swarm within 30% of the single-flow early-loss case; issue #14: a thousand
# flows at 70% of one flow's events per second. (case, anchor, target ratio of events/s)
RATIO_CASES = (
    ("swarm-100-random-stay", "early-loss-to-window-cap", 0.7),
    ("flows-1000-cubic", "flows-1-cubic", 0.7),
    ("guest-wasmtime-reno", "guest-builtin-reno", 1 / 1.5),
    ("guest-wasmi-reno", "guest-builtin-reno", None),
    ("guest-wasmtime-builtins-reno", "guest-builtin-reno", None),
    ("guest-python-reno", "guest-builtin-reno", None),
    ("guest-bpf-reno", "guest-builtin-reno", 1 / 2),
    ("guest-bpf-cubic", "guest-builtin-cubic", 1 / 2),
)


def paired_ratio(
    name: str, anchor: str, pairs: int, on_pair: Callable[[int], None] = lambda i: None
) -> dict:
    """Events/s of `name` over `anchor`'s, from `pairs` pairs of runs, each run back to back
    (the cases' own runs above may be minutes apart). On a shared host a thousand flows' speed
    follows the load on the L3 cache the guests share (docs/changelog.md, fifth session), so the
    pairs' median and range say more than one ratio."""
    ratios = []
    for i in range(pairs):
        on_pair(i)
        a = run_case(anchor)["events_per_s"]
        ratios.append(run_case(name)["events_per_s"] / a)
    return {"median": statistics.median(ratios), "pairs": ratios}


def run_sweep_case(duration: str, jobs: int) -> dict:
    m = child(SWEEP_CHILD, [SWEEP | {"duration": duration}, jobs])
    m["runs_per_s"] = m["runs"] / m["wall_s"]
    return m


def slowstart_command() -> list[str]:
    """The `slowstart` script beside this interpreter (the venv's), else `python -m slowstart`."""
    script = Path(sys.executable).with_name("slowstart")
    return [str(script)] if script.exists() else [sys.executable, "-m", "slowstart"]


def user_env() -> dict[str, str]:
    """The environment with bytecode caching on, as on a user's machine: this workplace sets
    PYTHONDONTWRITEBYTECODE, which would make every run compile the package again."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def time_process(command: list[str], env: dict[str, str], cwd: Path = ROOT) -> dict:
    """Run `command` to exit: its wall time from fork to exit, CPU time (user + system), peak
    RSS and standard output. Exits the bench with the command's stderr if it fails."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            message = err.read().decode(errors="replace").strip()
            sys.exit(f"error: {' '.join(command)} exited {code}: {message}")
        out.seek(0)
        return {
            "wall_s": wall,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mb": usage.ru_maxrss / 1024,
            "stdout": out.read().decode(errors="replace"),
        }


def run_startup_case(args: list[str], target_s: float, runs: int) -> dict:
    """Whole-process wall time of `slowstart ARGS`: median, min and max of `runs`, and the
    largest peak RSS, with bytecode caching on (`user_env`)."""
    command = [*slowstart_command(), *args]
    env = user_env()
    walls, rss = [], []
    for i in range(runs + 1):
        m = time_process(command, env)
        if i:  # the first run warms the page cache and writes the bytecode
            walls.append(m["wall_s"])
            rss.append(m["peak_rss_mb"])
    return {
        "command": " ".join(["slowstart", *args]),
        "runs": runs,
        "wall_median_s": statistics.median(walls),
        "wall_min_s": min(walls),
        "wall_max_s": max(walls),
        "target_s": target_s,
        "peak_rss_mb": max(rss),
    }


def run_score_case(target_s: float) -> dict:
    """Whole-process wall and CPU time of the built-in scorecard into a fresh store."""
    with tempfile.TemporaryDirectory(prefix="slowstart-bench-") as tmp:
        store = str(Path(tmp) / "results.duckdb")
        command = [*slowstart_command(), "score", "--json", "--quiet", "--store", store]
        m = time_process(command, user_env())
    card = json.loads(m.pop("stdout"))
    return m | {
        "command": "slowstart score --json --quiet --store FRESH",
        "runs": card["runs"],
        "controllers": len(card["controllers"]),
        "paths": len(card["paths"]),
        "cores": os.cpu_count(),
        "target_s": target_s,
    }


def ns3_libraries() -> list[Path]:
    """Debian's libns3-dev shared libraries (libns3-*.so), or [] when absent."""
    for libdir in NS3_LIBDIRS:
        libs = sorted(libdir.glob("libns3*.so"))
        if libs:
            return libs
    return []


def reference_command(tool: str, build_dir: Path) -> list[str] | str:
    """The command running the reference simulation, or why it cannot run (a string)."""
    if tool == "ns2":
        ns = shutil.which("ns")
        if ns is None:
            return "ns-2 is not installed (Debian package ns2, /usr/bin/ns)"
        return [ns, str(ROOT / "bench" / "ns2_floyd.tcl")]
    gxx = shutil.which("g++")
    libs = ns3_libraries()
    if not (NS3_INCLUDE / "core-module.h").exists() or not libs:
        return "ns-3 headers or libraries are not installed (Debian package libns3-dev)"
    if gxx is None:
        return "g++ is not installed (needed to build bench/ns3_satellite.cc)"
    binary = build_dir / "ns3_satellite"
    build = [
        gxx,
        "-O2",
        "-std=c++17",
        str(ROOT / "bench" / "ns3_satellite.cc"),
        "-o",
        str(binary),
        f"-L{libs[0].parent}",
        *(f"-l{lib.name[3:-3]}" for lib in libs),
    ]
    out = subprocess.run(build, capture_output=True, text=True)
    if out.returncode != 0:
        return f"bench/ns3_satellite.cc did not build: {out.stderr.strip()[-500:]}"
    return [str(binary)]


def run_reference_case(
    args: list[str], tool: str, target: float, fields: tuple[str, ...], runs: int
) -> dict:
    """Whole-process wall time of `slowstart ARGS` and of the same run in ns-2 or ns-3, timed
    alternately (one unrecorded run of ours first, for the page cache and bytecode), medians of
    `runs`; the ratio of wall times (and of CPU times, steadier when the machine is loaded),
    and the fields both print, to check they model the same run."""
    with tempfile.TemporaryDirectory(prefix="slowstart-bench-") as build_dir:
        reference = reference_command(tool, Path(build_dir))
        if isinstance(reference, str):
            return {"skipped": reference}
        ours_command = [*slowstart_command(), *args]
        env = user_env()
        time_process(ours_command, env)
        ours, ref = [], []
        for _ in range(runs):
            ours.append(time_process(ours_command, env))
            ref.append(time_process(reference, env, cwd=Path(build_dir)))
    summary = json.loads(ours[-1]["stdout"])["flows"][0]
    ref_summary = json.loads(ref[-1]["stdout"].strip().splitlines()[-1])
    m = {
        "command": " ".join(["slowstart", *args]),
        "reference": " ".join(Path(a).name for a in reference),
        "runs": runs,
        "target_ratio": target,
    }
    for key, sample in (("ours", ours), ("reference", ref)):
        m[f"{key}_wall_s"] = statistics.median(r["wall_s"] for r in sample)
        m[f"{key}_cpu_s"] = statistics.median(r["cpu_s"] for r in sample)
        m[f"{key}_peak_rss_mb"] = max(r["peak_rss_mb"] for r in sample)
    m["ratio"] = m["reference_wall_s"] / m["ours_wall_s"]
    m["cpu_ratio"] = m["reference_cpu_s"] / m["ours_cpu_s"]
    m["compared"] = {f: {"ours": summary.get(f), "reference": ref_summary.get(f)} for f in fields}
    if "events" in ref_summary:
        m["compared"]["events"] = {
            "ours": json.loads(ours[-1]["stdout"])["events"],
            "reference": ref_summary["events"],
        }
    return m


def print_reference_case(name: str, m: dict) -> None:
    if "skipped" in m:
        print(f"{name:36s} skipped: {m['skipped']}")
        return
    print(
        f"{name:36s} {m['ours_wall_s']:7.2f} s against {m['reference_wall_s']:7.2f} s wall: "
        f"{m['ratio']:5.1f}x (target {m['target_ratio']:.0f}x); CPU {m['ours_cpu_s']:.2f} s "
        f"against {m['reference_cpu_s']:.2f} s: {m['cpu_ratio']:.1f}x; median of {m['runs']}"
    )
    for field, v in m["compared"].items():
        print(f"  {field:34s} ours {v['ours']!s:>16s}   reference {v['reference']!s:>16s}")


def require_current_extension() -> None:
    """Exit unless the installed `slowstart._core` was built from the Rust sources as they are:
    the Makefile's own rule decides (`make -q setup`). Run directly after a change to
    `crates/`, a bench would otherwise time the code as it was."""
    try:
        from slowstart import _core
    except ImportError:
        sys.exit("error: the extension is not installed; run `make setup`")
    features = "jit" if "wasmtime" in _core.wasm_runtimes() else ""
    make = ["make", "-q", "setup", f"EXTENSION_FEATURES={features}"]
    stale = subprocess.run(make, cwd=ROOT, capture_output=True).returncode
    if stale:
        sys.exit("error: the installed extension is older than crates/ or absent; run `make setup`")


def missing_runtimes(names: list[str]) -> dict[str, str]:
    """The cases among `names` whose WebAssembly runtime the installed extension lacks, with it."""
    from slowstart import _core

    built = _core.wasm_runtimes()
    return {
        n: env["SLOWSTART_WASM_RUNTIME"]
        for n, env in CASE_ENV.items()
        if n in names and env["SLOWSTART_WASM_RUNTIME"] not in built
    }


def positive_int(text: str) -> int:
    """argparse's type for a count of runs: an integer of at least 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer of at least 1, got {text!r}")
    return n


def run_all(
    names: list[str],
    ratios: list[tuple[str, str, float | None]],
    args: argparse.Namespace,
    step: Callable[[int], None],
) -> dict:
    """Run the cases named, then the ratios' pairs; `step(k)` before the k-th of them."""
    results: dict = {}
    for n, name in enumerate(names):
        step(n)
        if name in STARTUP_CASES:
            results[name] = m = run_startup_case(*STARTUP_CASES[name], args.runs)
            print(
                f"{name:36s} {m['wall_median_s'] * 1e3:8.0f} ms median of {m['runs']} "
                f"({m['wall_min_s'] * 1e3:.0f}-{m['wall_max_s'] * 1e3:.0f} ms, target "
                f"{m['target_s'] * 1e3:.0f} ms) {m['peak_rss_mb']:6.0f} MB"
            )
            continue
        if name in REFERENCE_CASES:
            results[name] = m = run_reference_case(*REFERENCE_CASES[name], args.ref_runs)
            print_reference_case(name, m)
            continue
        if name in SCORE_CASES:
            results[name] = m = run_score_case(SCORE_CASES[name])
            print(
                f"{name:36s} {m['runs']:8d} runs   {m['wall_s']:7.2f} s wall "
                f"(target {m['target_s']:.0f} s on 2 cores; {m['cores']} here), CPU "
                f"{m['cpu_s']:.1f} s, {m['controllers']} controllers x {m['paths']} paths"
            )
            continue
        if name in SWEEP_CASES:
            results[name] = m = run_sweep_case(*SWEEP_CASES[name])
            print(
                f"{name:36s} {m['runs']:8d} runs   {m['wall_s']:7.2f} s wall "
                f"{m['runs_per_s']:6.1f} runs/s {m['peak_rss_mb']:22.0f} MB"
            )
            continue
        results[name] = run_case(name)
        m = results[name]
        print(
            f"{name:36s} {m['events'] / 1e6:8.1f} M events {m['wall_s']:7.2f} s wall "
            f"{m['events_per_s'] / 1e6:6.1f} M ev/s {m['sim_s_per_wall_s']:7.1f} sim-s/s "
            f"{m['peak_rss_mb']:6.0f} MB"
        )
    for k, (name, anchor, target) in enumerate(ratios):
        first = len(names) + k * args.pairs
        m = paired_ratio(name, anchor, args.pairs, lambda i, first=first: step(first + i))
        results[name][f"events_per_s_vs_{anchor}"] = m
        print(
            f"{name} events/s relative to {anchor}: {m['median']:.2f} "
            f"({'no target' if target is None else f'target {target:.2f}'}), "
            f"median of {len(m['pairs'])} pairs run back to back "
            f"({min(m['pairs']):.2f}-{max(m['pairs']):.2f})"
        )
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    every = [*CASES, *SWEEP_CASES, *SCORE_CASES, *STARTUP_CASES, *REFERENCE_CASES]
    ap.add_argument("cases", nargs="*", help=f"subset of: {', '.join(every)}")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results.json"))
    ap.add_argument(
        "--runs",
        type=positive_int,
        default=10,
        help="runs of each startup-* case (default %(default)s)",
    )
    ap.add_argument(
        "--pairs",
        type=positive_int,
        default=3,
        help="case-and-anchor pairs behind each events/s ratio (default %(default)s)",
    )
    ap.add_argument(
        "--ref-runs",
        type=positive_int,
        default=3,
        help="runs of each ns2-*/ns3-* case, ours and the reference's (default %(default)s)",
    )
    args = ap.parse_args()
    names = args.cases or every
    unknown = [n for n in names if n not in every]
    if unknown:
        sys.exit(f"error: unknown bench case {unknown[0]!r} (accepted: {', '.join(every)})")
    require_current_extension()
    missing = missing_runtimes(names)
    for name, runtime in missing.items():
        print(f"{name:36s} skipped: no {runtime} in this extension (EXTENSION_FEATURES=jit)")
    names = [n for n in names if n not in missing]
    ratios = [r for r in RATIO_CASES if r[0] in names and r[1] in names]
    steps = len(names) + args.pairs * len(ratios)
    with bar("bench", unit="steps") as update:
        results = run_all(names, ratios, args, lambda done: update(done, steps))
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
    try:
        main()
    except KeyboardInterrupt:
        print("interrupted: nothing written", file=sys.stderr)
        sys.exit(130)
