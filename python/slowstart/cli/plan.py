"""`slowstart plan`: initcwnd and initrwnd for short transfers, by simulation."""

from __future__ import annotations

import argparse
import json
from typing import Any

from slowstart import lazy
from slowstart.cli.common import (
    CoreDefault,
)

plan_module = lazy.module("slowstart.running.plan")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "plan",
        help="initcwnd/initrwnd for short transfers: completion and round trips, by simulation",
    )
    p.add_argument("--rtt", required=True, help='round-trip time, e.g. "50ms"')
    p.add_argument("--rate", required=True, help='bottleneck rate, e.g. "10Mbps"')
    p.add_argument(
        "--size",
        required=True,
        nargs="+",
        help='object size(s), e.g. "17kB" or "17kB 40kB" (each on a new connection)',
    )
    p.add_argument("--initcwnd", help="server initcwnd choices, e.g. 3,10,20 (segments)")
    p.add_argument("--initrwnd", help="client initrwnd choices, e.g. 4,10,20 (segments)")
    p.add_argument(
        "--buffer",
        default=CoreDefault("path", "buffer"),
        help="bottleneck buffer (default %(default)s)",
    )
    p.add_argument(
        "--cc", default=CoreDefault("flow", "cc"), help="congestion control (default %(default)s)"
    )
    p.add_argument(
        "--abc",
        choices=("on", "off"),
        help="cwnd grows by bytes acknowledged (on: RFC 3465, Linux today, the default) or "
        "one segment per ACK (off: Linux 2.6.3x, as reproduce web-initcwnd)",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override the planned flow, e.g. flow.0.delayed_ack=false (repeatable)",
    )
    p.add_argument("--json", action="store_true", help="print the table and one_flight as JSON")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    windows = ",".join(map(str, plan_module.DEFAULT_WINDOWS))
    result = plan_module.plan(
        args.rtt,
        args.rate,
        plan_module.parse_sizes(args.size),
        cwnds=plan_module.parse_windows(
            windows if args.initcwnd is None else args.initcwnd, "--initcwnd"
        ),
        rwnds=plan_module.parse_windows(
            windows if args.initrwnd is None else args.initrwnd, "--initrwnd"
        ),
        buffer=str(args.buffer),
        cc=str(args.cc),
        overrides=args.set or [],
        abc=None if args.abc is None else args.abc == "on",
    )
    print(json.dumps(result) if args.json else plan_module.format_plan(result))
    return 0
