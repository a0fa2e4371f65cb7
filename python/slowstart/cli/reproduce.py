"""`slowstart reproduce`: published experiments rerun beside their numbers."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from slowstart import lazy
from slowstart.cli.common import (
    EXIT_INTERNAL,
    UsageError,
    add_store_arguments,
    file_option,
    folder_option,
)

progress_module = lazy.module("slowstart.progress")
reproduce = lazy.module("slowstart.reproductions.reproduce")
store_module = lazy.module("slowstart.running.store")
swarm_study = lazy.module("slowstart.reproductions.swarm")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("reproduce", help="rerun published experiments beside their numbers")
    p.add_argument(
        "names", nargs="*", help="experiments (default: all but the many-run studies: swarm)"
    )
    p.add_argument("--out", default="out/reproduce", help="folder for plots (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object")
    p.add_argument(
        "--markdown",
        action="store_true",
        help="print each verdict table as README.md holds it (a tested copy)",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 if any value is off")
    p.add_argument(
        "--cc",
        action="append",
        metavar="SPEC",
        help="also run every variant with this controller (a built-in's spec, x.py:Class or "
        "x.wasm), beside the published values (repeatable)",
    )
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_store_arguments(p, traces=False)
    p.add_argument("--seeds", type=int, help="swarm: repetitions per setting, seeds 1..N (10)")
    p.add_argument("--jobs", type=int, help="swarm: processes (default: one per CPU)")
    p.add_argument(
        "--leechers",
        type=int,
        help="swarm: smaller swarms for a quick look (stop at N completions, keep the last half)",
    )
    p.add_argument(
        "--buffers",
        help='swarm: uplink buffers of the sweep in packets, e.g. "10,50,200", or "none"',
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="swarm: override in every run, e.g. swarm.file=5MB (repeatable)",
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.list and (args.names or args.json or args.markdown):
        raise UsageError(
            "--list: lists every experiment, as text; not with names, --json or --markdown"
        )
    if args.json and args.markdown:
        raise UsageError("--json: not with --markdown (each prints the results its own way)")
    if args.list:
        titles = {
            **{name: exp.title for name, exp in reproduce.EXPERIMENTS.items()},
            **reproduce.STUDIES,
        }
        width = max(map(len, titles))
        for name, title in titles.items():
            print(f"{name:<{width}}  {title}")
        return 0
    folder_option(args, "out")
    file_option(args, "store")
    names = args.names or list(reproduce.EXPERIMENTS)
    problem = reproduce.unknown_experiment(names)
    if problem:
        raise UsageError(problem)
    if not set(names) & set(reproduce.STUDIES):  # the study's options
        for option in ("seeds", "jobs", "leechers", "buffers", "set"):
            if getattr(args, option) is not None:
                raise UsageError(f"--{option}: only for the swarm study (reproduce swarm)")

    args.store = args.store or store_module.default_store()
    report: dict[str, Any] = {}
    all_ok = True
    ccs = list(args.cc or [])
    chosen: dict[str, Any] = {}
    for name in names:  # every --cc checked before any run
        if name == "swarm" and ccs:
            raise UsageError(
                "reproduce swarm: --cc does not apply; set the peers' controllers with "
                "--set swarm.utp.cc=... or --set swarm.tcp.cc=..."
            )
        if name == "swarm":
            continue
        if ccs and reproduce.EXPERIMENTS[name].runner is not None:
            raise UsageError(
                f"reproduce {name}: --cc does not apply (it runs real stacks beside the "
                "simulation with the algorithms they have)"
            )
        chosen[name] = reproduce.with_controllers(reproduce.EXPERIMENTS[name], ccs)
        if ccs:
            reproduce.check_variants(chosen[name])
    for name in names:
        if name == "swarm":
            ok, report[name] = swarm_study.reproduce_swarm(args)
            all_ok = all_ok and ok
            continue
        exp = chosen[name]

        with progress_module.bar(name, unit="variants", quiet=args.quiet) as update:
            done = [0]

            def tell(label: str, name: str = name, exp: Any = exp, done: list = done) -> None:
                print(f"{name}: {label}", file=sys.stderr)
                update(done[0], len(exp.variants))
                done[0] += 1

            rows, written = reproduce.run_experiment(
                exp, args.out, tell, store=args.store, rerun=args.rerun
            )
        all_ok = all_ok and all(
            r.verdict == "ok" or r.published is None or r.pending is not None for r in rows
        )
        report[name] = {
            "title": exp.title,
            "source": exp.source,
            "metric": exp.metric,
            "tolerance": exp.tolerance,
            "rows": [r.as_dict() for r in rows],
            "plots": [str(p) for p in written],
        }
        if args.markdown:
            print(f"### {name}\n\n{reproduce.markdown_table(exp, rows)}\n")
        elif not args.json:
            print(reproduce.format_table(exp, rows))
            for p in written:
                print(f"  {'figure' if p.suffix == '.png' else 'wrote'}: {p}")
    if args.json and not args.markdown:
        print(json.dumps(report))
    return 0 if all_ok or not args.strict else EXIT_INTERNAL
