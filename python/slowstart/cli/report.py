"""`slowstart report`: one self-contained HTML page of a results store."""

from __future__ import annotations

import argparse
from typing import Any

from slowstart import lazy
from slowstart.cli.common import (
    file_option,
)

report_module = lazy.module("slowstart.reports.report")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("report", help="one self-contained HTML page of a results store")
    p.add_argument("source", help="results store, or a folder holding results.duckdb")
    p.add_argument("--out", default="out/report.html", help="page to write (default %(default)s)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    file_option(args, "out")
    path = report_module.report(args.source, args.out)
    print(f"wrote {path}")
    return 0
