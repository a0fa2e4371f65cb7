"""`slowstart list`: the scenarios, the algorithms and the queue disciplines."""

from __future__ import annotations

import argparse
from typing import Any

from slowstart import lazy

_core = lazy.module("slowstart._core")
defaults = lazy.module("slowstart.loading.defaults")
paths = lazy.module("slowstart.paths")
scenario = lazy.module("slowstart.loading.scenario")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("list", help="list scenarios, algorithms and queue disciplines")
    p.set_defaults(handler=handle)


def _first_line(text: object) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def handle(args: argparse.Namespace) -> int:
    dirs = paths.scenario_dirs()
    files = paths.scenario_files()
    print(f"scenarios ({dirs[0] if dirs else 'no scenarios/ folder found'}):")
    width = max((len(p.stem) for p in files), default=0)
    for p in files:
        try:
            description = _first_line(scenario.read_toml(p, "scenario").get("description", ""))
        except (OSError, ValueError) as e:
            description = f"(unreadable: {_first_line(e)})"
        print(f"  {p.stem:<{width}}  {description}".rstrip())
    algorithms = scenario.core_algorithms()
    if algorithms is None:
        raise RuntimeError("the slowstart._core extension is not built (run `make setup`)")
    print("algorithms:")
    name_w = max((len(a["name"]) for a in algorithms), default=0)
    src_w = max((len(a["source"]) for a in algorithms), default=0)
    for a in algorithms:
        print(f"  {a['name']:<{name_w}}  {a['source']:<{src_w}}  {a['summary']}")
    print(
        f"  and {_core.GUEST_HELP} (see examples/python, examples/wasm-controller and examples/bpf)"
    )
    print('queue disciplines (queue = "KIND", or {kind = "KIND", ...} to change a default):')
    kinds = defaults.key_names("queue_kinds")
    kind_w = max(map(len, kinds))
    for kind in kinds:
        print(f"  {kind:<{kind_w}}  {defaults.default_parameters(kind) or 'no parameters'}")
    return 0
