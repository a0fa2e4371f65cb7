"""`slowstart score`: the slow-start scorecard."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from slowstart import lazy
from slowstart.cli.common import (
    add_many_runs_arguments,
    file_option,
    folder_option,
)

progress_module = lazy.module("slowstart.progress")
score = lazy.module("slowstart.reports.score")
score_page = lazy.module("slowstart.reports.score_page")
score_suite = lazy.module("slowstart.reports.score_suite")
store_module = lazy.module("slowstart.running.store")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "score",
        help="rate controllers side by side on a suite of paths (the slow-start scorecard)",
    )
    p.add_argument(
        "--suite",
        metavar="FILE",
        help="suite of paths and metrics (default: the built-in suites/scorecard.toml)",
    )
    p.add_argument(
        "--cc",
        action="append",
        metavar="CC",
        help='a controller, as flow.N.cc takes it, e.g. "reno" or "cubic:slow_start=hystart++" '
        "(repeatable; default: every built-in and CUBIC with each slow-start rule)",
    )
    p.add_argument(
        "--path", action="append", metavar="KEY", help="only this path of the suite (repeatable)"
    )
    add_many_runs_arguments(p, traces=False)
    p.add_argument(
        "--out",
        metavar="DIR",
        help="write scorecard.html (self-contained), scorecard.json, scorecard.md and figures",
    )
    p.add_argument("--json", action="store_true", help="print the scorecard as JSON")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    folder_option(args, "out")
    file_option(args, "store")
    suite = score_suite.select(score_suite.load_suite(args.suite), args.path or [])
    store = args.store or store_module.default_store()
    with progress_module.bar("score", unit="runs", quiet=args.quiet) as update:
        card = score.score(
            suite,
            args.cc or None,
            store=store,
            rerun=args.rerun,
            jobs=args.jobs,
            cluster=args.cluster,
            progress=update,
        )
    print(f"score: {card.runs} runs made, {card.stored} read from {store}", file=sys.stderr)
    if args.out is not None:
        for path in score_page.write(card, args.out):
            print(f"wrote {path}", file=sys.stderr)
    print(json.dumps(score.as_json(card)) if args.json else score.format_text(card))
    return 0
