"""`slowstart compare`: a scenario simulated beside real runs of it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.cli.common import (
    folder_option,
)
from slowstart.cli.real import add_stack_arguments, loaded_and_checked, require_testbed
from slowstart.tables import table
from slowstart.units import ScenarioError

api = lazy.module("slowstart.running.api")
compare = lazy.module("slowstart.real.compare")
compare_swarm = lazy.module("slowstart.real.compare_swarm")
defaults = lazy.module("slowstart.loading.defaults")
progress_module = lazy.module("slowstart.progress")
real_swarm = lazy.module("slowstart.real.swarm")
stacks = lazy.module("slowstart.real.stacks")
swarm_results = lazy.module("slowstart.running.swarm_results")


def format_compare_both(c: dict[str, Any]) -> str:
    """One table: per metric, the simulation beside Linux and beside the UDP stack."""
    k, u = c["kernel"], c["udp"]

    def d(v: Any) -> str:
        return "-" if v is None else f"{v:+.1%}"

    rows = []
    for key in dict.fromkeys([*k["diff"], *u["diff"]]):
        rows.append(
            [key]
            + [compare.plain(key, k["metrics"]["sim"].get(key))]
            + [compare.plain(key, k["metrics"]["real_median"].get(key)), d(k["diff"].get(key))]
            + [compare.plain(key, u["metrics"]["sim"].get(key))]
            + [compare.plain(key, u["metrics"]["real_median"].get(key)), d(u["diff"].get(key))]
        )
    headers = ["metric", "sim (MSS 1448)", f"Linux ({len(k['real'])})", "diff"]
    headers += ["sim (MSS 1424)", f"UDP ({len(u['real'])})", "diff"]
    out = table(headers, rows)
    lines = []
    for name, c1 in (("Linux", k), ("UDP", u)):
        rounds = c1.get("slow_start_rounds")
        if rounds:
            real = "; ".join(str(r) for r in rounds["real"])
            lines.append(
                f"slow-start rounds (cwnd, segments), {name}: sim {rounds['sim']}; real {real}"
            )
    return "\n".join([out, *lines])


def format_compare(c: dict[str, Any]) -> str:
    m = c["metrics"]
    rows = []
    for k in c["diff"]:
        sim_v, med, rng, d = m["sim"].get(k), m["real_median"][k], m["real_range"][k], c["diff"][k]
        rows.append(
            [
                k,
                compare.plain(k, sim_v),
                compare.plain(k, med),
                f"{compare.plain(k, rng[0])}..{compare.plain(k, rng[1])}" if rng else "-",
                "-" if d is None else f"{d:+.1%}",
            ]
        )
    out = table(["metric", "sim", f"real median ({len(c['real'])})", "real range", "diff"], rows)
    rounds = c.get("slow_start_rounds")
    if rounds:
        real = "; ".join(str(r) for r in rounds["real"])
        out += f"\nslow-start rounds (cwnd, segments): sim {rounds['sim']}; real {real}"
    return out


def handle(args: argparse.Namespace) -> int:
    folder_option(args, "out")
    require_testbed()
    if args.runs is not None and args.runs < 1:
        raise ScenarioError("--runs: expected a positive integer")
    config = loaded_and_checked(args)
    if api.RunKind.of(config) is api.RunKind.SWARM:
        return _compare_swarm(args, config)
    if args.populations is not None:
        raise ScenarioError("--populations: only for a [swarm] scenario")
    args.runs = args.runs or COMPARE_RUNS
    if args.stack == "both":
        return _compare_both(args, config)
    stack = stacks.for_config(config, args.stack)
    c = compare.compare(config, runs=args.runs, stack=stack.name)
    sim, reals = c.pop("_results")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig = compare.overlay_plot(
        sim,
        reals,
        title=f"{config.get('name')}: {config['flows'][0]['cc']['name']}",
        who=stack.who(config),
    )
    fig.savefig(out / "compare.png", dpi=120)
    (out / "compare.json").write_text(json.dumps(c, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out / 'compare.png'}", file=sys.stderr)
    if args.json:
        print(json.dumps({"sim": c["sim"], "real": c["real"], "diff": c["diff"]}))
    else:
        print(format_compare(c))
    return 0


# Real runs `compare` makes of a path without --runs (a swarm's: compare_swarm.MIN_RUNS).
COMPARE_RUNS = 3


def _compare_swarm(args: argparse.Namespace, config: dict[str, Any]) -> int:
    """`compare` on a [swarm] scenario: real libtorrent swarms beside the simulated one, per
    population (compare_swarm.py)."""
    if args.stack is not None:
        raise ScenarioError("--stack: a swarm's peers are libtorrent's; use --populations")
    populations = tuple(
        canonical_population(p) for p in (args.populations or "utp,tcp").split(",") if p
    )
    real_swarm.check_swarm(config)
    runs = args.runs or compare_swarm.MIN_RUNS
    with progress_module.bar("real swarms", unit="runs") as update:
        c = compare_swarm.compare_swarm(config, runs=runs, populations=populations, progress=update)
    compare_swarm.save(c, Path(args.out), swarm_results.packet_ms(config["swarm"]))
    if args.json:
        print(json.dumps({k: v for k, v in c.items() if not k.startswith("_")}))
    else:
        print(compare_swarm.format_compare_swarm(c))
    return 0


def canonical_population(word: str) -> str:
    """A population as `swarm.population` spells it ("utp", "tcp", "50-50"), in the core's
    word; ScenarioError naming --populations otherwise."""
    value = defaults.canonical_word("population", word.strip())
    if value not in swarm_results.POPULATIONS:
        spelled = defaults.spellings()
        words = [spelled.get(v, v) for v in swarm_results.POPULATIONS]
        accepted = f"{', '.join(words[:-1])} or {words[-1]}"
        raise ScenarioError(f'--populations: expected {accepted} (comma-separated), got "{word}"')
    return str(value)


def _compare_both(args: argparse.Namespace, config: dict[str, Any]) -> int:
    """`compare --stack both`: compare-kernel.png, compare-udp.png, compare.json, one table."""
    c = compare.compare_both(config, runs=args.runs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    title = f"{config.get('name')}: {config['flows'][0]['cc']['name']}"
    for stack in stacks.BOTH:
        who = stacks.STACKS[stack].who(config)
        sim, reals = c[stack].pop("_results")
        fig = compare.overlay_plot(sim, reals, title=f"{title}, {who}", who=who)
        fig.savefig(out / f"compare-{stack}.png", dpi=120)
        print(f"wrote {out / f'compare-{stack}.png'}", file=sys.stderr)
    (out / "compare.json").write_text(json.dumps(c, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(
            json.dumps(
                {
                    stack: {
                        "sim": c[stack]["sim"],
                        "real": c[stack]["real"],
                        "diff": c[stack]["diff"],
                    }
                    for stack in stacks.BOTH
                }
            )
        )
    else:
        print(format_compare_both(c))
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("compare", help="simulate and run for real, side by side (root)")
    add_stack_arguments(p, both=True)
    p.add_argument(
        "--runs",
        type=int,
        help="real runs (default 3; a swarm's: 5 per population, fewer for a quick look)",
    )
    p.add_argument("--out", default="out/compare", help="folder (default %(default)s)")
    p.add_argument(
        "--populations",
        help='a swarm\'s populations, e.g. "utp,tcp,50-50" (default utp,tcp)',
    )
    p.set_defaults(handler=handle)
