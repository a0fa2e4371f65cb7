"""The `slowstart` command: run, list, reproduce, plan, sweep, score.

Bad input exits with status 2 and one `error: ...` line on stderr; anything unexpected exits
with status 1, also on one line. Never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from slowstart import lazy, stopping
from slowstart.tables import (
    fmt_bytes,
    fmt_rate,
    fmt_s,
    format_cross,
    format_summary,
    table,
)
from slowstart.units import ScenarioError, show
from slowstart.version import __version__

# The commands' modules, each loaded when a command first uses it: `--help` and `list` load
# almost none (tests/test_startup.py).
api = lazy.module("slowstart.running.api")
compare = lazy.module("slowstart.real.compare")
compare_swarm = lazy.module("slowstart.real.compare_swarm")
defaults = lazy.module("slowstart.loading.defaults")
guests = lazy.module("slowstart.loading.guests")
metadata = lazy.module("importlib.metadata")
notices = lazy.module("slowstart.running.notices")
paths = lazy.module("slowstart.paths")
plan_module = lazy.module("slowstart.running.plan")
progress_module = lazy.module("slowstart.progress")
queues_module = lazy.module("slowstart.loading.queues")
real_bpf = lazy.module("slowstart.real.bpf")
real_kernel = lazy.module("slowstart.real.kernel")
real_program = lazy.module("slowstart.real.program")
real_quinn = lazy.module("slowstart.real.quinn")
real_swarm = lazy.module("slowstart.real.swarm")
real_udp = lazy.module("slowstart.real.udp")
report_module = lazy.module("slowstart.reports.report")
reproduce = lazy.module("slowstart.reproductions.reproduce")
scenario = lazy.module("slowstart.loading.scenario")
score = lazy.module("slowstart.reports.score")
score_page = lazy.module("slowstart.reports.score_page")
store_module = lazy.module("slowstart.running.store")
swarm_study = lazy.module("slowstart.reproductions.swarm")
swarm_results = lazy.module("slowstart.running.swarm_results")
sweepplan = lazy.module("slowstart.running.sweepplan")
sweeps = lazy.module("slowstart.running.sweeps")
testbed = lazy.module("slowstart.real.testbed")


EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1


class UsageError(Exception):
    """Bad command-line usage (argparse's complaint), reported like any other bad input."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


class Version(argparse.Action):
    """`--version`: the installed package's version, looked up only when asked for."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> NoReturn:
        try:
            number = metadata.version("slowstart")
        except metadata.PackageNotFoundError:  # a source tree that was never installed
            number = __version__
        print(f"{parser.prog} {number}")
        parser.exit()


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


# --- commands -----------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    for option in ("out", "qlog", "pcap"):
        _folder_option(args, option)

    config = scenario.load(
        paths.scenario_path(args.file),
        cc=args.cc,
        set=args.set or [],
        seed=args.seed,
        duration=args.duration,
    )

    qlog = None if args.qlog is None else api.export_dir(args.qlog, "--qlog")
    pcap = None if args.pcap is None else api.export_dir(args.pcap, "--pcap")
    stream = None
    if args.stream:
        if args.out is None:
            raise UsageError("--stream: needs --out DIR, the folder the traces go to")
        stream = api.export_dir(args.out, "--out")
    for line in notices.before(config):
        print(f"warning: {line}", file=sys.stderr)
    interrupted = None
    with progress_module.bar("simulating", quiet=args.quiet) as progress:
        try:
            result = api.run_config(config, progress, qlog=qlog, pcap=pcap, stream=stream)
        except api.Interrupted as e:
            result, interrupted = e.result, e
        except api.ControllerFault as e:
            if not args.out:
                raise
            e.result.save(args.out, traces=not args.stream)
            at = e.result.summary["sim_time_s"]
            return _error(f"{e} (what ran before {at:.6f} s is in {args.out})", EXIT_BAD_INPUT)
    swarm = (
        "swarm" in config
    )  # peers and uplink queues instead of flows (slowstart.reproductions.swarm)
    if args.out is not None:
        written = result.save(args.out, traces=not args.stream)
        for path in written:
            print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.summary))
    elif swarm:
        print(swarm_results.format_swarm(result.summary, result.queues))
    else:
        print(format_summary(result.summary))
    for line in notices.after(config, result.summary):
        print(f"warning: {line}", file=sys.stderr)
    if interrupted is not None:
        return _error(f"{interrupted} (the results above stop there)", stopping.status())
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    _folder_option(args, "out")
    _file_option(args, "store")
    grid, vary, metrics = None, None, [] if args.metric is None else [args.metric]
    sets, duration, seeds = list(args.set or []), args.duration, None
    if len(args.files) == 1 and sweepplan.is_plan(args.files[0]):
        plan = sweepplan.load_plan(args.files[0])
        if args.vary:
            raise UsageError(f"--vary: {args.files[0]} is a plan; its [axes] say what varies")
        if args.seeds is not None:
            raise UsageError(f"--seeds: {args.files[0]} is a plan; its seeds = ... say which")
        files = [paths.scenario_path(f) for f in plan.scenarios]
        grid, sets = plan.grid(), [*plan.set, *sets]
        duration = duration or plan.duration
        metrics = metrics or plan.metrics
    else:
        if not args.vary:
            for f in args.files:  # one that cannot be read says so first
                scenario.read_toml(paths.scenario_path(f), "scenario")
            raise UsageError("--vary: give at least one KEY=V1,V2,... (or a sweep plan .toml)")
        vary = sweeps.parse_vary(args.vary)
        seeds = None if args.seeds is None else sweeps.parse_seeds(args.seeds)
        files = [paths.scenario_path(f) for f in args.files]
    for m in metrics:
        sweeps.check_metric(m)
    store = args.store or store_module.default_store()
    done = [0, 0]
    with progress_module.bar("sweep", unit="runs", quiet=args.quiet) as update:

        def told(runs: int, total: int) -> None:
            done[:] = [runs, total]
            update(runs, total)

        try:
            rows = sweeps.sweep(
                files if len(files) > 1 else files[0],
                vary,
                seeds=seeds,
                set=sets,
                duration=duration,
                jobs=args.jobs,
                grid=grid,
                store=store,
                rerun=args.rerun,
                cluster=args.cluster,
                traces=args.traces,
                progress=told,
            )
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the runs done are stored
            raise KeyboardInterrupt(
                f"{stopping.word()} after {done[0]} of {done[1]} runs, stored in {store}; "
                "the same command runs the rest"
            ) from None
    print(
        f"sweep: {rows.attrs['runs']} runs made, {rows.attrs['stored']} read from {store}",
        file=sys.stderr,
    )
    keys = list(rows.columns[: rows.columns.get_loc("seed")])  # the grid's keys come first
    why = ""
    if not metrics:
        metric, why = sweeps.default_metric(rows)
        metrics = [metric]
    tables = [(m, sweeps.aggregate(rows, keys, m)) for m in metrics]
    if args.out is not None:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        rows.to_parquet(out / "sweep.parquet", index=False)
        print(f"wrote {out / 'sweep.parquet'}", file=sys.stderr)
        for m, agg in tables:
            name = "sweep.png" if len(tables) == 1 else f"sweep-{m}.png"
            sweeps.plot(agg, keys, m).savefig(out / name, dpi=120)
            print(f"wrote {out / name}", file=sys.stderr)
    if args.json:
        print(rows.to_json(orient="records"))
        return 0
    for i, (m, agg) in enumerate(tables):
        if i:
            print()
        if why:
            print(f"metric: {m} ({why}; --metric chooses another)")
        headers = [*keys, "flow", "cc", f"{m} median", "min", "max", "runs"]
        body = [
            [*(str(r[k]) for k in keys), str(r["flow"]), str(r["cc"])]
            + [_metric_text(m, r[c]) for c in ("median", "min", "max")]
            + [
                str(r["runs"])
                + (f" ({r['runs'] - r['valued']} no value)" if r["valued"] < r["runs"] else "")
            ]
            for _, r in agg.iterrows()
        ]
        print(table(headers, body))
    return 0


def _metric_text(metric: str, value: object) -> str:
    """A summary value in plain units: rates in bps prefixes, sizes in B, times in s."""
    if value is None or (isinstance(value, float) and value != value):
        return "no value"
    if metric.endswith("_bps"):
        return fmt_rate(float(value))  # type: ignore[arg-type]
    if metric.endswith("_bytes"):
        return fmt_bytes(float(value))  # type: ignore[arg-type]
    if metric.endswith("_s"):
        return f"{float(value):.3f}"  # type: ignore[arg-type]
    return _number(value)


def _number(value: object) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "no value"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _first_line(text: object) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def cmd_list(args: argparse.Namespace) -> int:
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
    print(f"  and {guests.HELP} (see examples/python, examples/wasm-controller and examples/bpf)")
    print('queue disciplines (queue = "KIND", or {kind = "KIND", ...} to change a default):')
    kind_w = max(map(len, queues_module.KINDS))
    for kind in queues_module.KINDS:
        print(f"  {kind:<{kind_w}}  {queues_module.default_parameters(kind) or 'no parameters'}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
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
    _folder_option(args, "out")
    _file_option(args, "store")
    names = args.names or list(reproduce.EXPERIMENTS)
    problem = reproduce.unknown_experiment(names)
    if problem:
        raise UsageError(problem)
    if "swarm" not in names:
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


def cmd_plan(args: argparse.Namespace) -> int:
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


def _folder_option(args: argparse.Namespace, option: str) -> None:
    """Before any work: a folder option, if given, names a folder or a path where one can be
    made (slowstart.paths.output_folder)."""
    if getattr(args, option) is not None:
        paths.output_folder(getattr(args, option), f"--{option}")


def _file_option(args: argparse.Namespace, option: str) -> None:
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


def cmd_results(args: argparse.Namespace) -> int:
    if args.out is not None and args.traces is None:
        raise UsageError("--out: only with --traces KEY (the run whose files it writes)")
    if args.traces is not None and not args.traces.strip():
        raise UsageError("--traces: expected a run's key or its first digits, got an empty one")
    _folder_option(args, "out")
    for option in ("csv", "parquet"):
        _file_option(args, option)
    if args.json and (args.csv or args.parquet):
        raise UsageError("--json: prints the table; not with --csv or --parquet, which write it")
    if args.traces is not None:
        if args.out is None:
            raise ScenarioError("--traces: needs --out DIR, the folder to write the run's files")
        # Written to: the traces are kept.
        with (
            store_module.Store(args.store, create=False) as store,
            progress_module.bar("simulating again") as progress,
        ):
            result = store.traces(store.find(args.traces), progress)
        for path in result.save(args.out):
            print(f"wrote {path}", file=sys.stderr)
        return 0
    with store_module.Store(args.store, read_only=True) as store:
        frame = store.table(args.table)
        runs = store.runs()
    for path, write in (
        (args.csv, lambda p: frame.to_csv(p, index=False)),
        (args.parquet, lambda p: frame.to_parquet(p, index=False)),
    ):
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            write(path)
            print(f"wrote {path} ({len(frame)} rows)", file=sys.stderr)
    if args.csv or args.parquet:
        return 0
    if args.json:
        print(frame.to_json(orient="records"))
        return 0
    print(f"{args.store}: {len(runs)} runs, {len(frame)} {args.table} rows")
    if len(runs):
        counts = runs.groupby(["source", "scenario"], sort=False).size().reset_index()
        rows = [[str(r["source"]), str(r["scenario"]), str(r[0])] for _, r in counts.iterrows()]
        print(table(["source", "scenario", "runs"], rows))
        print(
            f"one run's traces and figure: slowstart results {args.store} --traces KEY --out DIR "
            "(each row's key: --json or --csv)"
        )
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    _folder_option(args, "out")
    _file_option(args, "store")
    suite = score.select(score.load_suite(args.suite), args.path or [])
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


def cmd_report(args: argparse.Namespace) -> int:
    _file_option(args, "out")
    path = report_module.report(args.source, args.out)
    print(f"wrote {path}")
    return 0


def build_parser() -> Parser:
    parser = Parser(prog="slowstart", description="Deterministic simulator of connection ramp-up.")
    parser.add_argument("--version", action=Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    p = sub.add_parser("run", help="run one scenario")
    p.add_argument("file", help="scenario .toml (or the name of one in scenarios/)")
    p.add_argument("--cc", help='algorithm for every flow, e.g. "reno" or "lss:max_ssthresh=100"')
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a scenario value, e.g. flow.0.initcwnd=20 (repeatable)",
    )
    p.add_argument("--seed", type=int, help="random seed")
    p.add_argument("--duration", help='simulated time, e.g. "10s"')
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--out", help="write summary.json, flows/queues.parquet, cwnd.png here")
    p.add_argument("--qlog", metavar="DIR", help="write one qlog file per flow here (.sqlog)")
    p.add_argument("--pcap", metavar="DIR", help="write one capture per link direction here")
    p.add_argument(
        "--stream",
        action="store_true",
        help="with --out: write the traces there as the run goes, every sampled row in bounded "
        "memory (long runs; no cwnd.png)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser("list", help="list scenarios, algorithms and queue disciplines")
    p.set_defaults(handler=cmd_list)

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
    p.set_defaults(handler=cmd_reproduce)

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
    p.set_defaults(handler=cmd_plan)

    p = sub.add_parser(
        "sweep",
        help="run a scenario over a grid of overrides and seeds, in parallel processes",
    )
    p.add_argument(
        "files",
        nargs="+",
        help="scenario .toml files or names (several: a scenario axis), or one sweep plan .toml",
    )
    p.add_argument(
        "--vary",
        action="append",
        metavar="KEY=V1,V2,...",
        help="a grid axis, e.g. flow.0.cc=reno,cubic or path.buffer=0.5bdp,1bdp (repeatable)",
    )
    p.add_argument("--seeds", help='seeds, e.g. "1-5" or "1,4,9" (default: the scenario\'s)')
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override at every point, e.g. flow.0.size=10MB (repeatable)",
    )
    p.add_argument("--duration", help='simulated time at every point, e.g. "10s"')
    add_many_runs_arguments(p)
    p.add_argument(
        "--metric",
        help="flow summary field to tabulate and plot (default: completion_s when every flow "
        "has a size, else goodput_bps)",
    )
    p.add_argument("--out", help="write sweep.parquet (every run) and sweep.png here")
    p.add_argument("--json", action="store_true", help="print every row as one JSON array")
    p.set_defaults(handler=cmd_sweep)

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
    p.set_defaults(handler=cmd_score)

    p = sub.add_parser("results", help="list what a results store holds, export its table")
    p.add_argument("store", help="results store, e.g. out/results.duckdb")
    p.add_argument("--csv", metavar="PATH", help="write the table (one row per flow) as CSV")
    p.add_argument("--parquet", metavar="PATH", help="write the table as Parquet")
    p.add_argument(
        "--table",
        choices=("flows", "peers"),
        default="flows",
        help="one row per flow, or per swarm peer (default %(default)s)",
    )
    p.add_argument("--json", action="store_true", help="print the table as one JSON array")
    p.add_argument(
        "--traces",
        metavar="KEY",
        help="write one run's summary, traces and figure to --out (KEY: its key or the key's "
        "first digits); a run stored without traces is run again, exactly, to make them",
    )
    p.add_argument("--out", metavar="DIR", help="with --traces: the folder to write")
    p.set_defaults(handler=cmd_results)

    p = sub.add_parser("report", help="one self-contained HTML page of a results store")
    p.add_argument("source", help="results store, or a folder holding results.duckdb")
    p.add_argument("--out", default="out/report.html", help="page to write (default %(default)s)")
    p.set_defaults(handler=cmd_report)

    add_real_parsers(sub)
    return parser


# --- real and compare ---------------------------------------------------------------------


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
    stack = {
        "udp": "the simulator's transport over UDP",
        "quinn": "quinn (QUIC) with slowstart's controller",
        "quinn-native": "quinn (QUIC) with its own controller",
        "program": "program pairs",
    }.get(s.get("stack") or "", "Linux TCP")
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


def _load_real(args: argparse.Namespace) -> dict[str, Any]:

    # Without --cc each flow runs its own cc, a swarm its transports' (swarm.tcp.cc, ...).
    return scenario.load(
        paths.scenario_path(args.file), cc=args.cc, set=args.set or [], seed=args.seed
    )


def _bpf_flows(config: dict[str, Any]) -> bool:
    return any(real_bpf.is_bpf(f["cc"]) for f in config.get("flows") or [])


def check_bpf(args: argparse.Namespace, config: dict[str, Any]) -> str | None:
    """On the kernel stack a BPF object runs in the kernel, on a machine that can register
    it (the UDP and quinn stacks run it in the simulator's interpreter)."""
    if not _bpf_flows(config) or (args.stack or "kernel") not in ("kernel", "both"):
        return None
    if real_program.has_programs(config):
        return "a BPF object (.bpf.o) runs on the kernel stack's own endpoints, not [flow.program]"
    return real_bpf.unavailable_reason()


def check_real_cc(args: argparse.Namespace, config: dict[str, Any] | None = None) -> str | None:
    """The kernel stack runs Linux's algorithms only, quinn-native quinn's own; the UDP and
    quinn stacks any of the library's (quinn refuses the one-way-delay ones itself). Checks
    `--cc`, or without it each flow's own cc in `config`."""
    if args.cc is not None:
        named = [("--cc", args.cc)]
    elif "swarm" in (config or {}):  # its transports' ccs: real_swarm.check_swarm
        named = []
    else:
        named = [(f"flow.{i}.cc", f["cc"]["name"]) for i, f in enumerate((config or {})["flows"])]
    for at, cc in named:
        if args.stack == "quinn-native" and cc.split(":")[0] not in real_quinn.QUINN_CC:
            return (
                f"{at}: quinn's own controllers are {', '.join(real_quinn.QUINN_CC)}, got {cc!r} "
                "(--stack quinn runs every slowstart algorithm but ledbat and utp)"
            )
        if (
            (args.stack or "kernel") in ("kernel", "both")
            and cc.split(":")[0] not in testbed.LINUX_CC
            and not real_bpf.is_bpf(cc)
        ):
            return (
                f"{at}: the kernel stack runs {', '.join(testbed.LINUX_CC)} or PATH.bpf.o, "
                f"got {cc!r} (--stack udp runs every algorithm)"
            )
    return None


def cmd_real(args: argparse.Namespace) -> int:
    for option in ("out", "pcap"):
        _folder_option(args, option)
    reason = testbed.unavailable_reason()
    if reason:
        return _error(reason, 2)
    config = _load_real(args)
    bad = check_real_cc(args, config) or check_bpf(args, config)
    if bad:
        return _error(bad, 2)

    pcap = None if args.pcap is None else api.export_dir(args.pcap, "--pcap")
    if "swarm" in config:
        return _real_swarm(args, config, pcap)
    programs = real_program.has_programs(config)
    if programs and args.stack is not None:
        return _error(
            "--stack: this scenario's flows are carried by their [flow.program] pairs, "
            "not a built-in stack",
            2,
        )
    try:
        if programs:
            out = None if args.out is None else Path(api.export_dir(args.out, "--out"))
            result = real_program.run_programs(config, pcap=pcap, keep=out)
        elif args.stack == "udp":
            result = real_udp.run_real_udp(config, pcap=pcap)
        elif args.stack in ("quinn", "quinn-native"):
            result = real_quinn.run_real_quinn(config, stack=args.stack, pcap=pcap)
        else:
            result = real_kernel.run_real(config, pcap=pcap)
    except testbed.RealUnavailable as e:
        return _error(e, 2)
    if args.out is not None:
        for path in result.save(args.out):
            print(f"wrote {path}", file=sys.stderr)
    print(json.dumps(result.summary) if args.json else format_real(result.summary))
    return 0


def _real_swarm(args: argparse.Namespace, config: dict[str, Any], pcap: str | None) -> int:
    """`slowstart real` on a [swarm] scenario: real libtorrent peers (real/swarm.py)."""
    if args.stack is not None:
        return _error("--stack: a swarm's peers are libtorrent's; set swarm.population", 2)
    start = time.monotonic()
    try:
        with progress_module.bar("real swarm", unit="leechers done") as update:
            result = real_swarm.run_swarm(config, pcap=pcap, progress=update)
    except testbed.RealUnavailable as e:
        return _error(e, 2)
    result.summary["wall_s"] = time.monotonic() - start
    if args.out is not None:
        for path in result.save(args.out):
            print(f"wrote {path}", file=sys.stderr)
    print(
        json.dumps(result.summary)
        if args.json
        else swarm_results.format_swarm(result.summary, result.queues)
    )
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    _folder_option(args, "out")
    reason = testbed.unavailable_reason()
    if reason:
        return _error(reason, 2)
    if args.runs is not None and args.runs < 1:
        return _error("--runs: expected a positive integer", 2)
    config = _load_real(args)
    bad = check_real_cc(args, config) or check_bpf(args, config)
    if bad:
        return _error(bad, 2)
    if "swarm" in config:
        return _compare_swarm(args, config)
    if args.populations is not None:
        return _error("--populations: only for a [swarm] scenario", 2)
    args.runs = args.runs or COMPARE_RUNS

    stack = args.stack or "kernel"
    if real_program.has_programs(config):
        if args.stack is not None:
            return _error(
                "--stack: this scenario's flows are carried by their [flow.program] pairs, "
                "not a built-in stack",
                2,
            )
        stack = "program"
    if stack == "both":
        return _compare_both(args, config)

    try:
        c = compare.compare(config, runs=args.runs, stack=stack)
    except testbed.RealUnavailable as e:
        return _error(e, 2)
    sim, reals = c.pop("_results")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig = compare.overlay_plot(
        sim,
        reals,
        title=f"{config.get('name')}: {config['flows'][0]['cc']['name']}",
        who=compare.stack_label(stack, config),
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
        return _error("--stack: a swarm's peers are libtorrent's; use --populations", 2)
    populations = tuple(
        canonical_population(p) for p in (args.populations or "utp,tcp").split(",") if p
    )
    real_swarm.check_swarm(config)
    runs = args.runs or compare_swarm.MIN_RUNS
    try:
        with progress_module.bar("real swarms", unit="runs") as update:
            c = compare_swarm.compare_swarm(
                config, runs=runs, populations=populations, progress=update
            )
    except testbed.RealUnavailable as e:
        return _error(e, 2)
    compare_swarm.save(c, Path(args.out), swarm_results.packet_ms(config["swarm"]))
    if args.json:
        print(json.dumps({k: v for k, v in c.items() if not k.startswith("_")}))
    else:
        print(compare_swarm.format_compare_swarm(c))
    return 0


def canonical_population(word: str) -> str:
    """A population as `swarm.population` spells it ("utp", "tcp", "50-50"), in the core's
    word; ValueError naming --populations otherwise."""
    value = defaults.canonical_word("population", word.strip())
    if value not in swarm_results.POPULATIONS:
        raise ValueError(
            f'--populations: expected utp, tcp or 50-50 (comma-separated), got "{word}"'
        )
    return str(value)


def _compare_both(args: argparse.Namespace, config: dict[str, Any]) -> int:
    """`compare --stack both`: compare-kernel.png, compare-udp.png, compare.json, one table."""
    try:
        c = compare.compare_both(config, runs=args.runs)
    except testbed.RealUnavailable as e:
        return _error(e, 2)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    title = f"{config.get('name')}: {config['flows'][0]['cc']['name']}"
    for stack in ("kernel", "udp"):
        who = compare.stack_label(stack, config)
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
                    for stack in ("kernel", "udp")
                }
            )
        )
    else:
        print(format_compare_both(c))
    return 0


def cmd_shell(args: argparse.Namespace) -> int:
    reason = testbed.unavailable_reason()
    if reason:
        return _error(reason, 2)

    config = scenario.load(paths.scenario_path(args.file), set=args.set or [], seed=args.seed)
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    pcap = None if args.pcap is None else api.export_dir(args.pcap, "--pcap")
    try:
        status, result = real_program.shell(config, command, pcap=pcap)
    except testbed.RealUnavailable as e:
        return _error(e, 2)
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


def add_real_parsers(sub: Any) -> None:
    """`slowstart real` and `slowstart compare` (root only), added to the CLI's subparsers."""
    for name, helptext, handler in (
        (
            "real",
            "run a scenario for real: Linux TCP (or the simulator's transport over UDP) "
            "through an emulated link (root)",
            cmd_real,
        ),
        ("compare", "simulate and run for real, side by side (root)", cmd_compare),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("file", help="scenario .toml (or the name of one in scenarios/)")
        p.add_argument(
            "--cc",
            help="congestion control of every flow: "
            f"{', '.join(testbed.LINUX_CC)} or PATH.bpf.o[:global=N,...] on the kernel stack "
            "(bbr1 simulates Linux's bbr, bbr the IETF draft), any algorithm on the UDP and "
            "quinn stacks (default: each flow's own cc in the scenario; a swarm's are "
            "swarm.tcp.cc and swarm.utp.cc)",
        )
        p.add_argument(
            "--stack",
            choices=["kernel", "udp", "quinn", "quinn-native"]
            + (["both"] if name == "compare" else []),
            help="kernel: Linux TCP; udp: the simulator's own transport and controller over "
            "UDP sockets; quinn: the QUIC stack quinn with the controller through "
            "slowstart-quinn; quinn-native: quinn with its own NewReno (reno), Cubic or BBR"
            + ("; both: the two, each beside its own simulation" if name == "compare" else "")
            + " (default kernel; flows with a [flow.program] run their programs)",
        )
        p.add_argument(
            "--set",
            action="append",
            metavar="KEY=VALUE",
            help="override a scenario value, e.g. flow.0.initcwnd=20 (repeatable)",
        )
        p.add_argument("--seed", type=int, help="random seed (loss, jitter)")
        p.add_argument("--json", action="store_true", help="print JSON instead of the table")
        if name == "real":
            p.add_argument("--out", help="write summary.json, flows/queues.parquet, cwnd.png here")
            p.add_argument("--pcap", metavar="DIR", help="write a capture per link direction here")
        else:
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
        p.set_defaults(handler=handler)

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
    p.set_defaults(handler=cmd_shell)


def _error(message: object, status: int) -> int:
    text = " ".join(str(message).split("\n")).strip()
    print(f"error: {text}", file=sys.stderr)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    handler: Callable[[argparse.Namespace], int]
    stopping.install()  # SIGTERM stops a command as Ctrl-C does
    try:
        args = build_parser().parse_args(argv)
        handler = args.handler
        return handler(args)
    except UsageError as e:
        return _error(e, EXIT_BAD_INPUT)
    except KeyError as e:
        return _error(f"missing {show(e.args[0]) if e.args else 'key'}", EXIT_BAD_INPUT)
    except BrokenPipeError:
        return 0
    except (ValueError, OSError) as e:
        return _error(e, EXIT_BAD_INPUT)
    except KeyboardInterrupt as e:
        return _error(str(e) or stopping.word(), stopping.status())
    except Exception as e:  # noqa: BLE001 - one line, never a traceback
        return _error(f"internal: {type(e).__name__}: {e}", EXIT_INTERNAL)


if __name__ == "__main__":
    sys.exit(main())
