"""`slowstart shell`: a shell in the sender's namespace, the scenario's path emulated."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from slowstart import lazy
from slowstart.cli.real import require_testbed
from slowstart.tables import fmt_bytes

api = lazy.module("slowstart.running.api")
paths = lazy.module("slowstart.paths")
real_program = lazy.module("slowstart.real.program")
scenario = lazy.module("slowstart.loading.scenario")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "shell",
        help="a shell (or CMD) in the sender's namespace, the scenario's path emulated to the "
        "receiver's (root)",
    )
    p.add_argument("file", help="scenario .toml (or the name of one in scenarios/)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD [ARG...] (default: $SHELL -i)")
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a scenario value, e.g. path.rate=10Mbps (repeatable)",
    )
    p.add_argument("--seed", type=int, help="random seed (loss, jitter)")
    p.add_argument("--out", help="write summary.json and queues.parquet here")
    p.add_argument("--pcap", metavar="DIR", help="write a capture per link direction here")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    require_testbed()

    config = scenario.load(paths.scenario_path(args.file), set=args.set or [], seed=args.seed)
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    pcap = None if args.pcap is None else api.export_dir(args.pcap, "--pcap")
    status, result = real_program.shell(config, command, pcap=pcap)
    if args.out:
        for path in result.save(args.out):
            print(f"wrote {path}", file=sys.stderr)
    links = result.summary["links"]
    print(
        "emulated link: "
        + "; ".join(
            f"{x['name']} {x['forwarded']} packets, {x['drops']} drops, max queue "
            f"{fmt_bytes(x['max_queue_bytes'])}"
            for x in links
        ),
        file=sys.stderr,
    )
    return status
