"""`slowstart real`: a scenario run for real through the emulated path, by a stack of the
registry (slowstart.real.stacks), its program pairs or libtorrent peers."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.cli.common import (
    folder_option,
)
from slowstart.tables import fmt_bytes, fmt_rate, fmt_s, format_cross, table
from slowstart.units import ScenarioError

api = lazy.module("slowstart.running.api")
paths = lazy.module("slowstart.paths")
progress_module = lazy.module("slowstart.progress")
real_bpf = lazy.module("slowstart.real.bpf")
real_program = lazy.module("slowstart.real.program")
real_swarm = lazy.module("slowstart.real.swarm")
scenario = lazy.module("slowstart.loading.scenario")
stacks = lazy.module("slowstart.real.stacks")
testbed = lazy.module("slowstart.real.testbed")


def format_programs(s: dict[str, Any]) -> str:
    """A program run's flows: what ran, for how long, what the emulated link carried."""
    return table(
        ["flow", "sender", "run_s", "goodput", "forward", "reverse", "command"],
        [
            [str(f["id"]), f["sender"], fmt_s(f["completion_s"]), fmt_rate(f["goodput_bps"])]
            + [
                f"{f[d + '_packets'] or 0} pkts, {fmt_bytes(f[d + '_payload_bytes'] or 0)}"
                for d in ("forward", "reverse")
            ]
            + [f["program"]["client"]]
            for f in s["flows"]
        ],
    )


def format_real(s: dict[str, Any]) -> str:
    """A real run's summary as tables: flows, links, cross traffic, web objects, TUN drops."""
    tun = s.get("tun_tx_dropped") or {}
    stack = stacks.STACKS[s.get("stack") or stacks.DEFAULT].heading
    head = (
        f"{s['scenario']}: real ({stack} through the emulated link), seed {s['seed']}; "
        "TUN tx_dropped " + ", ".join(f"{k} {v}" for k, v in tun.items())
    )
    flows = (
        format_programs(s)
        if s.get("stack") == "program"
        else table(
            ["flow", "cc", "delivered", "completion_s", "goodput", "ss_exit_s", "retx", "max_cwnd"],
            [
                [str(f["id"]), f["cc"], fmt_bytes(f["bytes_delivered"]), fmt_s(f["completion_s"])]
                + [fmt_rate(f["goodput_bps"]), fmt_s(f["slow_start_exit_s"]), str(f["retransmits"])]
                + [fmt_bytes(f["max_cwnd_bytes"])]
                for f in s["flows"]
            ],
        )
    )
    links = table(
        ["link", "drops", "max_queue", "mean_queue_delay_ms"],
        [
            [x["name"], str(x["drops"]), fmt_bytes(x["max_queue_bytes"])]
            + [f"{x['mean_queue_delay_s'] * 1e3:.3f}"]
            for x in s["links"]
        ],
    )
    parts = [head, flows, links, format_cross(s.get("cross") or [])]
    objects = [
        [str(a["flow"]), str(k), fmt_bytes(o["bytes"]), fmt_s(o["ttfb_s"])]
        + [fmt_s(o["first_to_last_s"]), fmt_s(o["total_s"])]
        for a in s.get("apps") or []
        for k, o in enumerate(a["objects"])
    ]
    if objects:
        headers = ["flow", "object", "bytes", "ttfb_s", "first_to_last_s", "total_s"]
        parts.append(table(headers, objects))
    return "\n\n".join(p for p in parts if p)


def load_real(args: argparse.Namespace) -> dict[str, Any]:
    """The scenario of `real` or `compare`: without --cc each flow runs its own cc, a swarm its
    transports' (swarm.tcp.cc, ...)."""
    return scenario.load(
        paths.scenario_path(args.file), cc=args.cc, set=args.set or [], seed=args.seed
    )


def chosen_stacks(args: argparse.Namespace) -> list[str]:
    """The stacks --stack names (`both`: BOTH), the default without it."""
    chosen = args.stack or stacks.DEFAULT
    return list(stacks.BOTH) if chosen == "both" else [chosen]


def check_bpf(args: argparse.Namespace, config: dict[str, Any]) -> str | None:
    """On the kernel stack a BPF object runs in the kernel, on a machine that can register
    it (the UDP and quinn stacks run it in the simulator's interpreter)."""
    flows = config.get("flows") or []
    if not any(real_bpf.is_bpf(f["cc"]) for f in flows) or "kernel" not in chosen_stacks(args):
        return None
    if real_program.has_programs(config):
        return "a BPF object (.bpf.o) runs on the kernel stack's own endpoints, not [flow.program]"
    return real_bpf.unavailable_reason()


def check_real_cc(args: argparse.Namespace, config: dict[str, Any] | None = None) -> str | None:
    """Whether each chosen stack runs `--cc`, or without it each flow's own cc in `config`
    (slowstart.real.stacks: the kernel runs Linux's algorithms only, quinn-native quinn's own;
    a swarm's transports are checked by real_swarm.check_swarm)."""
    if args.cc is not None:
        named = [("--cc", args.cc)]
    elif config is None or api.RunKind.of(config) is api.RunKind.SWARM:
        named = []
    else:
        named = [(f"flow.{i}.cc", f["cc"]["name"]) for i, f in enumerate(config["flows"])]
    for at, cc in named:
        for name in chosen_stacks(args):
            reason = stacks.STACKS[name].refuses(at, cc)
            if reason:
                return reason
    return None


def require_testbed() -> None:
    """RealUnavailable if this machine cannot run the testbed (root, TUN, namespaces)."""
    reason = testbed.unavailable_reason()
    if reason:
        raise testbed.RealUnavailable(reason)


def loaded_and_checked(args: argparse.Namespace) -> dict[str, Any]:
    """The scenario of `real` or `compare`, once its controllers and a BPF object's kernel
    support are known to run on the chosen stacks (ScenarioError, RealUnavailable otherwise)."""
    config = load_real(args)
    bad = check_real_cc(args, config) or check_bpf(args, config)
    if bad:
        raise ScenarioError(bad)
    return config


def handle(args: argparse.Namespace) -> int:
    for option in ("out", "pcap"):
        folder_option(args, option)
    require_testbed()
    config = loaded_and_checked(args)
    pcap = None if args.pcap is None else api.export_dir(args.pcap, "--pcap")
    if api.RunKind.of(config) is api.RunKind.SWARM:
        return _real_swarm(args, config, pcap)
    stack = stacks.for_config(config, args.stack)
    # A program pair's logs and qlog files are copied into --out as it runs.
    keep = args.out is not None and stack.name == "program"
    result = stack.run(config, pcap, Path(api.export_dir(args.out, "--out")) if keep else None)
    if args.out is not None:
        for path in result.save(args.out):
            print(f"wrote {path}", file=sys.stderr)
    print(json.dumps(result.summary) if args.json else format_real(result.summary))
    return 0


def _real_swarm(args: argparse.Namespace, config: dict[str, Any], pcap: str | None) -> int:
    """`slowstart real` on a [swarm] scenario: real libtorrent peers (real/swarm.py)."""
    if args.stack is not None:
        raise ScenarioError("--stack: a swarm's peers are libtorrent's; set swarm.population")
    start = time.monotonic()
    with progress_module.bar("real swarm", unit="leechers done") as update:
        result = real_swarm.run_swarm(config, pcap=pcap, progress=update)
    result.summary["wall_s"] = time.monotonic() - start
    if args.out is not None:
        for path in result.save(args.out):
            print(f"wrote {path}", file=sys.stderr)
    print(json.dumps(result.summary) if args.json else result.text())
    return 0


def add_stack_arguments(p: argparse.ArgumentParser, both: bool = False) -> None:
    """What `real` and `compare` both take: the scenario, --cc, --stack (`both` too for
    compare), --set, --seed and --json."""
    p.add_argument("file", help="scenario .toml (or the name of one in scenarios/)")
    p.add_argument(
        "--cc",
        help="congestion control of every flow: "
        f"{', '.join(testbed.LINUX_CC)} or PATH.bpf.o[:global=N,...] on the kernel stack "
        "(bbr1 simulates Linux's bbr, bbr the IETF draft), any algorithm on the UDP and "
        "quinn stacks (default: each flow's own cc in the scenario; a swarm's are "
        "swarm.tcp.cc and swarm.utp.cc)",
    )
    chosen = [s for s in stacks.STACKS.values() if s.choosable]
    p.add_argument(
        "--stack",
        choices=[s.name for s in chosen] + (["both"] if both else []),
        help="; ".join(f"{s.name}: {s.help}" for s in chosen)
        + ("; both: the two, each beside its own simulation" if both else "")
        + f" (default {stacks.DEFAULT}; flows with a [flow.program] run their programs)",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a scenario value, e.g. flow.0.initcwnd=20 (repeatable)",
    )
    p.add_argument("--seed", type=int, help="random seed (loss, jitter)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "real",
        help="run a scenario for real: Linux TCP (or the simulator's transport over UDP) "
        "through an emulated link (root)",
    )
    add_stack_arguments(p)
    p.add_argument("--out", help="write summary.json, flows/queues.parquet, cwnd.png here")
    p.add_argument("--pcap", metavar="DIR", help="write a capture per link direction here")
    p.set_defaults(handler=handle)
