"""The `slowstart` command: one module per command, each adding its parser and its handler;
this module only dispatches.

Bad input (ScenarioError and its kin: a usage error, a controller refused or misbehaving, a
file that cannot be read or written, a real run the machine or its programs refuse) exits with
status 2 and one `error: ...` line on stderr. Anything else is a bug: status 1, one line naming
it, its traceback with `--debug`.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence

from slowstart import __version__, lazy, stopping
from slowstart.cli import (
    compare,
    listing,
    plan,
    real,
    report,
    reproduce,
    results,
    run,
    score,
    shell,
    sweep,
)
from slowstart.cli.common import EXIT_BAD_INPUT, EXIT_INTERNAL, Parser, UsageError, error
from slowstart.cli.compare import format_compare, format_compare_both
from slowstart.cli.real import check_bpf, check_real_cc, format_real
from slowstart.units import ScenarioError

guests = lazy.module("slowstart.loading.guests")
testbed = lazy.module("slowstart.real.testbed")

__all__ = [
    "build_parser",
    "check_bpf",
    "check_real_cc",
    "format_compare",
    "format_compare_both",
    "format_real",
    "main",
]

# In the order `slowstart --help` lists them.
COMMANDS = (run, listing, reproduce, plan, sweep, score, results, report, real, compare, shell)


def build_parser() -> Parser:
    parser = Parser(prog="slowstart", description="Deterministic simulator of connection ramp-up.")
    parser.add_argument(
        "--version", action="version", version=f"slowstart {__version__}", help="print the version"
    )
    parser.add_argument(
        "--debug", action="store_true", help="on an internal error, print its traceback"
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def bad_input(e: BaseException) -> bool:
    """Whether `e` is the user's input refused (exit 2), not a bug: a ScenarioError (the
    loader's, the store's, the stacks', a controller's fault), a usage error, a controller that
    cannot be loaded (GuestError), an OSError on a path or device, or a real run this machine
    or its programs refuse (RealUnavailable, RealRunError). Modules not loaded raised none."""
    kin: tuple[type[BaseException], ...] = (ScenarioError, UsageError, OSError)
    if "slowstart.loading.guests" in sys.modules:
        kin += (guests.GuestError,)
    if "slowstart.real.testbed" in sys.modules:
        kin += (testbed.RealUnavailable, testbed.RealRunError)
    return isinstance(e, kin)


def main(argv: Sequence[str] | None = None) -> int:
    handler: Callable[[argparse.Namespace], int]
    stopping.install()  # SIGTERM stops a command as Ctrl-C does
    debug = False
    try:
        args = build_parser().parse_args(argv)
        debug, handler = args.debug, args.handler
        return handler(args)
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt as e:
        return error(str(e) or stopping.word(), stopping.status())
    except Exception as e:  # noqa: BLE001 - bad input is one line; a bug one line or its trace
        if stopping.stopped():  # raised in place of the signal's KeyboardInterrupt
            return error(stopping.word(), stopping.status())
        if bad_input(e):
            return error(e, EXIT_BAD_INPUT)
        if debug:
            traceback.print_exc()
            return EXIT_INTERNAL
        return error(
            f"internal: {type(e).__name__}: {e} (a bug; rerun with --debug for its traceback)",
            EXIT_INTERNAL,
        )
