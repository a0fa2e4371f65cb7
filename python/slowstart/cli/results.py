"""`slowstart results`: what a results store holds, its table exported, one run's traces."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.cli.common import (
    UsageError,
    file_option,
    folder_option,
)
from slowstart.tables import table
from slowstart.units import ScenarioError

progress_module = lazy.module("slowstart.progress")
store_module = lazy.module("slowstart.running.store")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("results", help="list what a results store holds, export its table")
    p.add_argument("store", help="results store, e.g. out/results.duckdb")
    p.add_argument("--csv", metavar="PATH", help="write the table (one row per flow) as CSV")
    p.add_argument("--parquet", metavar="PATH", help="write the table as Parquet")
    p.add_argument(
        "--table",
        choices=("flows", "peers"),
        default="flows",
        help="one row per flow, or per swarm peer (default %(default)s)",
    )
    p.add_argument("--json", action="store_true", help="print the table as one JSON array")
    p.add_argument(
        "--traces",
        metavar="KEY",
        help="write one run's summary, traces and figure to --out (KEY: its key or the key's "
        "first digits); a run stored without traces is run again, exactly, to make them",
    )
    p.add_argument("--out", metavar="DIR", help="with --traces: the folder to write")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.out is not None and args.traces is None:
        raise UsageError("--out: only with --traces KEY (the run whose files it writes)")
    if args.traces is not None and not args.traces.strip():
        raise UsageError("--traces: expected a run's key or its first digits, got an empty one")
    folder_option(args, "out")
    for option in ("csv", "parquet"):
        file_option(args, option)
    if args.json and (args.csv or args.parquet):
        raise UsageError("--json: prints the table; not with --csv or --parquet, which write it")
    if args.traces is not None:
        if args.out is None:
            raise ScenarioError("--traces: needs --out DIR, the folder to write the run's files")
        # Written to: the traces are kept.
        with (
            store_module.Store(args.store, create=False) as store,
            progress_module.bar("simulating again") as progress,
        ):
            result = store.traces(store.find(args.traces), progress)
        for path in result.save(args.out):
            print(f"wrote {path}", file=sys.stderr)
        return 0
    with store_module.Store(args.store, read_only=True) as store:
        frame = store.table(args.table)
        runs = store.runs()
        failed = store.failed()
    for path, write in (
        (args.csv, lambda p: frame.to_csv(p, index=False)),
        (args.parquet, lambda p: frame.to_parquet(p, index=False)),
    ):
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            write(path)
            print(f"wrote {path} ({len(frame)} rows)", file=sys.stderr)
    if args.csv or args.parquet:
        return 0
    if args.json:
        print(frame.to_json(orient="records"))
        return 0
    print(f"{args.store}: {len(runs)} runs, {len(frame)} {args.table} rows")
    if len(runs):
        counts = runs.groupby(["source", "scenario"], sort=False).size().reset_index()
        rows = [[str(r["source"]), str(r["scenario"]), str(r[0])] for _, r in counts.iterrows()]
        print(table(["source", "scenario", "runs"], rows))
        print(
            f"one run's traces and figure: slowstart results {args.store} --traces KEY --out DIR "
            "(each row's key: --json or --csv)"
        )
    for _, f in failed.iterrows():  # runs a sweep could not make (their workers died)
        print(f"failed: {f['source'] or 'run'} {f['key'][:12]} {f['point']}: {f['error']}")
    return 0
