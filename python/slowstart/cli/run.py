"""`slowstart run`: one scenario on the simulator, its summary printed and its files written."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from slowstart import lazy, stopping
from slowstart.cli.common import (
    EXIT_BAD_INPUT,
    UsageError,
    error,
    folder_option,
)

api = lazy.module("slowstart.running.api")
notices = lazy.module("slowstart.running.notices")
paths = lazy.module("slowstart.paths")
progress_module = lazy.module("slowstart.progress")
scenario = lazy.module("slowstart.loading.scenario")
swarm_results = lazy.module("slowstart.running.swarm_results")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("run", help="run one scenario")
    p.add_argument("file", help="scenario .toml (or the name of one in scenarios/)")
    p.add_argument("--cc", help='algorithm for every flow, e.g. "reno" or "lss:max_ssthresh=100"')
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a scenario value, e.g. flow.0.initcwnd=20 (repeatable)",
    )
    p.add_argument("--seed", type=int, help="random seed")
    p.add_argument("--duration", help='simulated time, e.g. "10s"')
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--out", help="write summary.json, flows/queues.parquet, cwnd.png here")
    p.add_argument("--qlog", metavar="DIR", help="write one qlog file per flow here (.sqlog)")
    p.add_argument("--pcap", metavar="DIR", help="write one capture per link direction here")
    p.add_argument(
        "--stream",
        action="store_true",
        help="with --out: write the traces there as the run goes, every sampled row in bounded "
        "memory (long runs; no cwnd.png)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    for option in ("out", "qlog", "pcap"):
        folder_option(args, option)

    config = scenario.load(
        paths.scenario_path(args.file),
        cc=args.cc,
        set=args.set or [],
        seed=args.seed,
        duration=args.duration,
    )

    qlog = None if args.qlog is None else api.export_dir(args.qlog, "--qlog")
    pcap = None if args.pcap is None else api.export_dir(args.pcap, "--pcap")
    stream = None
    if args.stream:
        if args.out is None:
            raise UsageError("--stream: needs --out DIR, the folder the traces go to")
        stream = api.export_dir(args.out, "--out")
    for line in notices.before(config):
        print(f"warning: {line}", file=sys.stderr)
    interrupted = None
    with progress_module.bar("simulating", quiet=args.quiet) as progress:
        try:
            result = api.run_config(config, progress, qlog=qlog, pcap=pcap, stream=stream)
        except api.Interrupted as e:
            result, interrupted = e.result, e
        except api.ControllerFault as e:
            if not args.out:
                raise
            save(e.result, args)
            at = e.result.summary["sim_time_s"]
            return error(f"{e} (what ran before {at:.6f} s is in {args.out})", EXIT_BAD_INPUT)
    if args.out is not None:
        for path in save(result, args):
            print(f"wrote {path}", file=sys.stderr)
    print(json.dumps(result.summary) if args.json else result.text())
    for line in notices.after(config, result.summary):
        print(f"warning: {line}", file=sys.stderr)
    if interrupted is not None:
        return error(f"{interrupted} (the results above stop there)", stopping.status())
    return 0


def save(result: Any, args: argparse.Namespace) -> list[Path]:
    """The run's files in --out; with --stream its traces are there already, so only
    summary.json."""
    return [result.save_summary(args.out)] if args.stream else result.save(args.out)
