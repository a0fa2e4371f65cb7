"""`make test-stress`: the suite again and again, alone and on a loaded machine, and every
failure by test name. Not part of `make test`.

    python tests/stress.py [--runs N] [--loaded M] [--whole] [--out DIR] [PYTEST_ARGS...]

Runs the Python suite (`pytest`, with the project's own options) N times in a row, then M
times with a CPU-bound process pinned to one core, a process writing to disk with fsync and,
where real runs can happen (root, /dev/net/tun, iproute2), a `slowstart real` transfer after
transfer beside it: the load the suite must bear on a 2-core CI machine shared with other
work. `--whole` runs `make test` instead (formatting, clippy, cargo test, ruff, pytest).
PYTEST_ARGS narrow the suite (`tests/test_real.py -k cross`). Each run's log and JUnit file
go to DIR (default out/stress), and each run's failures, as it ends, as one JSON line in
DIR/failures.jsonl (kept across invocations); at the end every test that failed is listed
with the runs it failed in and the first line of its message. Exit status 1 if any run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# cargo test's line for a failed test: "test path::name ... FAILED".
CARGO_FAILED = re.compile(r"^test (\S+) \.\.\. FAILED$", re.MULTILINE)


def junit_failures(xml: Path) -> dict[str, str]:
    """Test id -> first line of its failure or error, from pytest's JUnit file."""
    if not xml.exists():
        return {}
    found = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        for bad in (*case.findall("failure"), *case.findall("error")):
            module = case.get("classname", "").replace(".", "/")
            name = f"{module}.py::{case.get('name')}"
            message = (bad.get("message") or bad.text or "").strip().splitlines()
            found[name] = (message[0] if message else bad.tag)[:160]
    return found


def hog() -> subprocess.Popen[bytes]:
    """A CPU-bound process on the last core."""
    core = max(os.sched_getaffinity(0))
    code = f"import os\nos.sched_setaffinity(0, {{{core}}})\nwhile True:\n    pass\n"
    return subprocess.Popen([sys.executable, "-c", code])


# Disk writes with fsync, as the other pytest worker's stores and Parquet files make: they
# move the round in which CoDel first signals in a real run, which a CPU-bound process does not
# (issue #43, tests/test_real.py's CoDel test).
IO_HOG = """
import os, sys
buf = os.urandom(1 << 20)
while True:
    with open(sys.argv[1], "wb") as f:
        for _ in range(64):
            f.write(buf)
            f.flush()
            os.fsync(f.fileno())
    os.unlink(sys.argv[1])
"""


def io_hog(folder: Path) -> subprocess.Popen[bytes]:
    """A process writing 1 MB at a time with fsync into `folder`, 64 MB a file, forever."""
    return subprocess.Popen([sys.executable, "-c", IO_HOG, str(folder / "io-hog.bin")])


def beside_real(log: Path) -> subprocess.Popen[bytes] | None:
    """`slowstart real` transfers one after another (this script's --beside-real), their
    output in `log`, or None where real runs cannot happen."""
    from slowstart.real.testbed import unavailable_reason

    if unavailable_reason() is not None:
        return None
    with log.open("w") as f:
        cmd = [sys.executable, __file__, "--beside-real"]
        return subprocess.Popen(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT)


def loop_real() -> None:
    """Run real-20mbps for real until SIGTERM, then stop the transfer under way (SIGTERM: its
    testbed removes what it made) and exit."""
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    cmd = [sys.executable, "-m", "slowstart", "real", "real-20mbps", "--cc", "cubic", "--json"]
    while not stop:
        with subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL) as run:
            while run.poll() is None:
                if stop:
                    run.send_signal(signal.SIGTERM)
                    run.wait(timeout=60)
                    break
                time.sleep(0.1)


def stop(p: subprocess.Popen[bytes] | None) -> None:
    if p is None:
        return
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def one_run(k: int, args: argparse.Namespace, loaded: bool) -> tuple[int, dict[str, str]]:
    """Run the suite once; its exit status and failures (test id -> message)."""
    xml = args.out / f"run{k}.xml"
    log = args.out / f"run{k}.log"
    xml.unlink(missing_ok=True)
    env = {**os.environ, "PYTEST_ADDOPTS": f"-p no:cacheprovider --junitxml={xml}"}
    pytest = [str(ROOT / ".venv" / "bin" / "pytest"), *args.pytest]
    cmd = ["make", "test"] if args.whole else pytest
    load = (
        [hog(), io_hog(args.out), beside_real(args.out / f"run{k}-beside-real.log")]
        if loaded
        else []
    )
    try:
        with log.open("w") as f:
            status = subprocess.run(cmd, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT)
    finally:
        for p in load:
            stop(p)
        (args.out / "io-hog.bin").unlink(missing_ok=True)
    text = log.read_text(errors="replace")
    failures = junit_failures(xml)
    for name in CARGO_FAILED.findall(text):
        failures[f"cargo test: {name}"] = "FAILED"
    if status.returncode != 0 and not failures:
        failures[f"{' '.join(cmd[:2])}: exit {status.returncode}"] = f"see {log}"
    return status.returncode, failures


def main() -> int:
    if sys.argv[1:] == ["--beside-real"]:
        loop_real()
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs alone (default %(default)s)")
    ap.add_argument("--loaded", type=int, default=3, help="runs under load (default %(default)s)")
    ap.add_argument("--whole", action="store_true", help="run `make test`, not only pytest")
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "stress", help="logs")
    ap.add_argument("pytest", nargs="*", help="arguments for pytest (not with --whole)")
    # pytest's own options (`-k cross`, as the Makefile's example passes) go to pytest too.
    args, rest = ap.parse_known_args()
    args.pytest += rest
    args.out.mkdir(parents=True, exist_ok=True)
    failed: dict[str, list[str]] = defaultdict(list)
    messages: dict[str, str] = {}
    plan = [("alone", False)] * args.runs + [("loaded", True)] * args.loaded
    bad_runs = 0
    for k, (kind, loaded) in enumerate(plan, 1):
        start = time.monotonic()
        status, failures = one_run(k, args, loaded)
        took = time.monotonic() - start
        bad_runs += status != 0
        print(
            f"run {k}/{len(plan)} ({kind}): {'passed' if status == 0 else 'FAILED'} in "
            f"{took:.0f} s" + "".join(f"\n    {name}" for name in failures),
            flush=True,
        )
        for name, message in failures.items():
            failed[name].append(f"{k} ({kind})")
            messages.setdefault(name, message)
        # Every run's failures as they happen, kept across stress runs: one JSON line a run.
        with (args.out / "failures.jsonl").open("a") as f:
            record = {"run": k, "kind": kind, "status": status, "took_s": round(took)}
            print(json.dumps({**record, "failures": failures}), file=f)
    print(f"\n{len(plan) - bad_runs} of {len(plan)} runs passed (logs: {args.out})")
    for name, runs in sorted(failed.items()):
        print(f"{name}\n    failed in run {', '.join(runs)}: {messages[name]}")
    return 1 if bad_runs else 0


if __name__ == "__main__":
    sys.exit(main())
