"""The cost of a sweep outside its runs: a 10 000-run sweep of short runs into a fresh store.

    .venv/bin/python bench/sweep.py [--runs 10000] [--jobs 2] [--cluster local:2] [--traces]

Each run is a 5 MB transfer over 100 Mbps, 40 ms (about 10 ms of engine time, 13 000
events). The runs' own time is what the workers measured around each run (`wall_s` in the
store: the engine and its summary); everything else is overhead: building and checking the
configs, hashing them, scheduling, moving results back, encoding traces (`task_s - wall_s`,
reported apart), writing them, the store's transactions.
Overhead = 1 - (runs' time / workers) / wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

SHORT = {
    "name": "short",
    "duration": "20s",
    "path": {"rate": "100Mbps", "rtt": "40ms", "buffer": "1bdp"},
    "flow": [{"cc": "reno", "size": "5MB"}],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cluster")
    ap.add_argument("--traces", action="store_true")
    args = ap.parse_args()

    from slowstart.running.store import Store
    from slowstart.running.sweeps import sweep

    seeds = 100
    cwnds = [str(2 + i) for i in range(max(1, args.runs // seeds))]
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "bench.duckdb"
        start = time.perf_counter()
        rows = sweep(
            SHORT,
            {"flow.0.initcwnd": cwnds},
            seeds=range(1, seeds + 1),
            jobs=args.jobs,
            cluster=args.cluster,
            store=store,
            traces=args.traces,
        )
        wall = time.perf_counter() - start
        with Store(store, read_only=True) as s:
            run_s, task_s = s.con.execute("SELECT sum(wall_s), sum(task_s) FROM runs").fetchone()
            n = s.con.execute("SELECT count(*) FROM runs").fetchone()[0]
        traces_mb = sum(f.stat().st_size for f in (Path(tmp) / "bench.duckdb.traces").glob("*"))
        store_mb = store.stat().st_size
    workers = int(args.cluster.split(":")[1]) if args.cluster else args.jobs
    busy = run_s / workers
    print(
        f"{n} runs ({len(rows)} rows) on {workers} "
        f"{'Dask workers' if args.cluster else 'processes'}, traces "
        f"{'on' if args.traces else 'off'}: {wall:.1f} s wall, runs {run_s:.1f} s "
        f"({run_s / n * 1e3:.2f} ms each), overhead {1 - busy / wall:.1%} of wall time "
        f"(of which encoding traces in the workers {(task_s - run_s) / workers / wall:.1%}); "
        f"store {store_mb / 1e6:.1f} MB, traces {traces_mb / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
