"""`slowstart sweep`: a scenario over a grid of overrides and seeds, tabulated."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from slowstart import lazy, stopping
from slowstart.cli.common import (
    UsageError,
    add_many_runs_arguments,
    file_option,
    folder_option,
)
from slowstart.tables import fmt_bytes, fmt_rate, table

paths = lazy.module("slowstart.paths")
progress_module = lazy.module("slowstart.progress")
scenario = lazy.module("slowstart.loading.scenario")
store_module = lazy.module("slowstart.running.store")
sweepplan = lazy.module("slowstart.running.sweepplan")
sweeps = lazy.module("slowstart.running.sweeps")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "sweep",
        help="run a scenario over a grid of overrides and seeds, in parallel processes",
    )
    p.add_argument(
        "files",
        nargs="+",
        help="scenario .toml files or names (several: a scenario axis), or one sweep plan .toml",
    )
    p.add_argument(
        "--vary",
        action="append",
        metavar="KEY=V1,V2,...",
        help="a grid axis, e.g. flow.0.cc=reno,cubic or path.buffer=0.5bdp,1bdp (repeatable)",
    )
    p.add_argument("--seeds", help='seeds, e.g. "1-5" or "1,4,9" (default: the scenario\'s)')
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override at every point, e.g. flow.0.size=10MB (repeatable)",
    )
    p.add_argument("--duration", help='simulated time at every point, e.g. "10s"')
    add_many_runs_arguments(p)
    p.add_argument(
        "--metric",
        help="flow summary field to tabulate and plot (default: completion_s when every flow "
        "has a size, else goodput_bps)",
    )
    p.add_argument("--out", help="write sweep.parquet (every run) and sweep.png here")
    p.add_argument("--json", action="store_true", help="print every row as one JSON array")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    folder_option(args, "out")
    file_option(args, "store")
    grid, vary, metrics = None, None, [] if args.metric is None else [args.metric]
    sets, duration, seeds = list(args.set or []), args.duration, None
    if len(args.files) == 1 and sweepplan.is_plan(args.files[0]):
        plan = sweepplan.load_plan(args.files[0])
        if args.vary:
            raise UsageError(f"--vary: {args.files[0]} is a plan; its [axes] say what varies")
        if args.seeds is not None:
            raise UsageError(f"--seeds: {args.files[0]} is a plan; its seeds = ... say which")
        files = [paths.scenario_path(f) for f in plan.scenarios]
        grid, sets = plan.grid(), [*plan.set, *sets]
        duration = duration or plan.duration
        metrics = metrics or plan.metrics
    else:
        if not args.vary:
            for f in args.files:  # one that cannot be read says so first
                scenario.read_toml(paths.scenario_path(f), "scenario")
            raise UsageError("--vary: give at least one KEY=V1,V2,... (or a sweep plan .toml)")
        vary = sweeps.parse_vary(args.vary)
        seeds = None if args.seeds is None else sweeps.parse_seeds(args.seeds)
        files = [paths.scenario_path(f) for f in args.files]
    for m in metrics:
        sweeps.check_metric(m)
    store = args.store or store_module.default_store()
    done = [0, 0]
    with progress_module.bar("sweep", unit="runs", quiet=args.quiet) as update:

        def told(runs: int, total: int) -> None:
            done[:] = [runs, total]
            update(runs, total)

        try:
            rows = sweeps.sweep(
                files if len(files) > 1 else files[0],
                vary,
                seeds=seeds,
                set=sets,
                duration=duration,
                jobs=args.jobs,
                grid=grid,
                store=store,
                rerun=args.rerun,
                cluster=args.cluster,
                traces=args.traces,
                progress=told,
            )
        except (KeyboardInterrupt, Exception) as e:  # Ctrl-C or SIGTERM: the runs done are stored
            if not isinstance(e, KeyboardInterrupt) and not stopping.stopped():
                raise
            raise KeyboardInterrupt(
                f"{stopping.word()} after {done[0]} of {done[1]} runs, stored in {store}; "
                "the same command runs the rest"
            ) from None
    print(
        f"sweep: {rows.attrs['runs']} runs made, {rows.attrs['stored']} read from {store}",
        file=sys.stderr,
    )
    keys = list(rows.columns[: rows.columns.get_loc("seed")])  # the grid's keys come first
    why = ""
    if not metrics:
        metric, why = sweeps.default_metric(rows)
        metrics = [metric]
    tables = [(m, sweeps.aggregate(rows, keys, m)) for m in metrics]
    if args.out is not None:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        rows.to_parquet(out / "sweep.parquet", index=False)
        print(f"wrote {out / 'sweep.parquet'}", file=sys.stderr)
        for m, agg in tables:
            name = "sweep.png" if len(tables) == 1 else f"sweep-{m}.png"
            sweeps.plot(agg, keys, m).savefig(out / name, dpi=120)
            print(f"wrote {out / name}", file=sys.stderr)
    if args.json:
        print(rows.to_json(orient="records"))
        return 0
    for i, (m, agg) in enumerate(tables):
        if i:
            print()
        if why:
            print(f"metric: {m} ({why}; --metric chooses another)")
        headers = [*keys, "flow", "cc", f"{m} median", "min", "max", "runs"]
        body = [
            [*(str(r[k]) for k in keys), str(r["flow"]), str(r["cc"])]
            + [_metric_text(m, r[c]) for c in ("median", "min", "max")]
            + [
                str(r["runs"])
                + (f" ({r['runs'] - r['valued']} no value)" if r["valued"] < r["runs"] else "")
            ]
            for _, r in agg.iterrows()
        ]
        print(table(headers, body))
    return 0


def _metric_text(metric: str, value: object) -> str:
    """A summary value in plain units: rates in bps prefixes, sizes in B, times in s."""
    if value is None or (isinstance(value, float) and value != value):
        return "no value"
    if metric.endswith("_bps"):
        return fmt_rate(float(value))  # type: ignore[arg-type]
    if metric.endswith("_bytes"):
        return fmt_bytes(float(value))  # type: ignore[arg-type]
    if metric.endswith("_s"):
        return f"{float(value):.3f}"  # type: ignore[arg-type]
    return _number(value)


def _number(value: object) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "no value"
    return f"{value:.4g}" if isinstance(value, float) else str(value)
