"""What every command shares: the parser class, usage errors, the error line, the options
several commands take and the checks of output paths made before any work."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from slowstart import lazy

defaults = lazy.module("slowstart.loading.defaults")
paths = lazy.module("slowstart.paths")

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1


class UsageError(Exception):
    """Bad command-line usage (argparse's complaint), reported like any other bad input."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


class CoreDefault:
    """An option's default, a scenario default the core owns (slowstart.loading.defaults): read when
    help shows it or the command uses it, so building the parser asks the core nothing."""

    def __init__(self, table: str, key: str) -> None:
        self.table, self.key = table, key

    def __str__(self) -> str:
        value = defaults.defaults(self.table)[self.key]
        if self.key != "cc":
            return str(value)
        params = ",".join(f"{k}={v}" for k, v in value.items() if k != "name")
        return value["name"] + (f":{params}" if params else "")


def folder_option(args: argparse.Namespace, option: str) -> None:
    """Before any work: a folder option, if given, names a folder or a path where one can be
    made (slowstart.paths.output_folder)."""
    if getattr(args, option) is not None:
        paths.output_folder(getattr(args, option), f"--{option}")


def file_option(args: argparse.Namespace, option: str) -> None:
    """Before any work: a file option, if given, names a file that can be written
    (slowstart.paths.output_file)."""
    if getattr(args, option) is not None:
        paths.output_file(getattr(args, option), f"--{option}")


def add_store_arguments(p: argparse.ArgumentParser, traces: bool = True) -> None:
    p.add_argument(
        "--store",
        metavar="PATH",
        help="results store (DuckDB) every run goes into "
        "(default $SLOWSTART_STORE or out/results.duckdb)",
    )
    p.add_argument(
        "--rerun", action="store_true", help="run points again even when the store has them"
    )
    if traces:
        p.add_argument(
            "--traces",
            action="store_true",
            help="store every run's traces too, as Parquet (off by default: a short run's "
            "traces take longer to encode than the run; a 10 000-run sweep of 5 MB transfers "
            "spent 71.6%% of its wall time outside the runs with them, 7.3%% without, and "
            "wrote 2 GB; README, The results store)",
        )


def add_many_runs_arguments(p: argparse.ArgumentParser, traces: bool = True) -> None:
    """What a command of many runs takes (sweep, score): processes, the store, a cluster, and
    quiet."""
    p.add_argument("--jobs", type=int, help="processes (default: one per CPU)")
    add_store_arguments(p, traces=traces)
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run on a Dask cluster: tcp://HOST:8786, or local:N to start N local workers",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def error(message: object, status: int) -> int:
    """Print `error: MESSAGE` as one line on stderr; return `status`."""
    text = " ".join(str(message).split("\n")).strip()
    print(f"error: {text}", file=sys.stderr)
    return status
