"""Sweeps: one scenario over a grid of overrides and seeds, the runs spread over processes.

`slowstart sweep real-20mbps --vary flow.0.cc=reno,cubic --vary path.buffer=0.5bdp,1bdp
--seeds 1-3` runs the 2 x 2 x 3 points; every flow of every run becomes one row of a table
(`sweep.parquet`): the varied keys, the seed, then the flow's summary. Several scenarios make
one more axis, `scenario`, the first. All configs are built before anything runs, so a bad
key or value stops the sweep at once, naming the field.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, ProcessPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from slowstart import lazy, stopping
from slowstart.loading import guests
from slowstart.loading.defaults import limits
from slowstart.loading.scenario import load
from slowstart.paths import scenario_path
from slowstart.plot import axis_label
from slowstart.running.api import core_schema, run_config
from slowstart.running.store import Failure, Record, Store, canonical, run_key, traces_of
from slowstart.units import U64_MAX, ScenarioError, parse_int, show

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    pass

distributed = lazy.module("distributed")
mpl_figure = lazy.module("matplotlib.figure")
pd = lazy.module("pandas")


T = TypeVar("T")
R = TypeVar("R")

# Run-level summary fields kept beside each flow's.
RUN_FIELDS = ("sim_time_s", "events")


def _values(key: str, text: str) -> list[str]:
    """`V1,V2,...`; a piece such as `b=0.3` (a `=` and no `:`) belongs to the algorithm before
    it, so `aimd:a=15,b=0.3,reno` is two values."""
    values: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if values and "=" in piece and ":" not in piece:
            values[-1] += f",{piece}"
        elif piece:
            values.append(piece)
        else:
            raise ScenarioError(f"--vary {key}={text}: an empty value")
    return values


def parse_vary(items: Iterable[str]) -> dict[str, list[str]]:
    """`KEY=V1,V2` items → {key: values}, keys in first-seen order; a repeated KEY adds values."""
    axes: dict[str, list[str]] = {}
    for item in items:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key or not text.strip():
            raise ScenarioError(f"--vary {item}: expected KEY=V1,V2,... such as flow.0.cc=reno,bbr")
        axes.setdefault(key, []).extend(_values(key, text))
    if not axes:
        raise ScenarioError("--vary: give at least one KEY=V1,V2,...")
    for key, values in axes.items():
        if len(set(values)) != len(values):
            raise ScenarioError(f"--vary {key}: a value is listed twice in {values}")
    return axes


def check_points(count: int, what: str) -> None:
    """Before a sweep's points are listed: at most the core's `sweep_points` of them."""
    most = limits()["sweep_points"]
    if count > most:
        raise ScenarioError(
            f"{what}: {count} runs, more than one sweep may have ({most}); split it or use "
            "fewer values"
        )


def parse_seeds(text: str) -> list[int]:
    """`1-5` or `1,4,9` (or both: `1-3,7`) → seeds, each a non-negative integer."""
    seeds: list[int] = []
    for piece in (p.strip() for p in text.split(",")):
        lo, dash, hi = piece.partition("-")
        try:
            first, last = int(lo), int(hi) if dash else int(lo)
        except ValueError:
            raise ScenarioError(f"--seeds {text}: expected seeds such as 1-5 or 1,4,9") from None
        if first < 0 or last < first or last > U64_MAX:
            raise ScenarioError(f"--seeds {text}: {show(piece)} is not a range low-high of seeds")
        check_points(len(seeds) + last - first + 1, f"--seeds {text}")
        seeds.extend(range(first, last + 1))
    if len(set(seeds)) != len(seeds):
        raise ScenarioError(f"--seeds {text}: a seed is listed twice")
    return seeds


def points(axes: dict[str, Sequence[str]], seeds: Sequence[int | None]) -> list[dict[str, Any]]:
    """The grid: every combination of the axes' values (first axis slowest), seeds innermost."""
    keys = list(axes)
    check_points(math.prod(len(axes[k]) for k in keys) * len(seeds), "sweep")
    return [
        {**dict(zip(keys, combo, strict=True)), "seed": seed}
        for combo in itertools.product(*(axes[k] for k in keys))
        for seed in seeds
    ]


def run_task(task: tuple[str, bool]) -> dict[str, Any]:
    """A worker's run of one canonical config (JSON): its summary, its traces as Parquet bytes
    (when asked for), the wall seconds the run itself took and those of the whole task (the
    run and encoding its traces)."""
    config_json, traces = task
    start = time.perf_counter()
    result = run_config(json.loads(config_json))
    wall_s = time.perf_counter() - start
    encoded = traces_of(result) if traces else {}
    return {
        "summary": result.summary,
        "traces": encoded,
        "wall_s": wall_s,
        "task_s": time.perf_counter() - start,
    }


def run_batch(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """`fn` over a batch of items in one worker: one scheduling cost for many short runs."""
    return [fn(item) for item in items]


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


Scenario = str | os.PathLike[str] | dict[str, Any]


def scenario_name(scenario: Scenario) -> str:
    """A dict's `name`, else the file's stem."""
    return str(scenario.get("name", "")) if isinstance(scenario, dict) else Path(scenario).stem


def sweep(
    scenario: Scenario | list[Scenario],
    vary: dict[str, Sequence[str]] | Iterable[str] | None = None,
    *,
    seeds: Sequence[int] | None = None,
    set: Sequence[str] = (),  # noqa: A002 - the documented keyword
    duration: str | None = None,
    jobs: int | None = None,
    grid: list[dict[str, Any]] | None = None,
    store: str | os.PathLike[str] | Store | None = None,
    rerun: bool = False,
    cluster: str | None = None,
    traces: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Run `scenario` (a file, a name in scenarios/ or a dict; or a list of them: a `scenario`
    column comes first) at every point of the grid and return one row per flow per run.

    `vary` maps override keys (as `--set` takes them) to values, or is a list of `KEY=V1,V2`
    strings; `seeds` defaults to the scenario's own; `set` applies to every point; `jobs`
    processes run the points (default: one per CPU), or `cluster` ("local:N" or
    "tcp://HOST:8786", a Dask cluster). Rows come in grid order whatever the order the runs
    finish in, so the table is the same for any `jobs` or cluster.

    With `store` (a path, see `slowstart.running.store`), every run is stored as it completes (its
    traces too with `traces=True`), and a point already stored is not run again unless
    `rerun`. `grid` (points, each a value per key and a seed, such as a sweep plan's) replaces
    `vary` and `seeds`. `progress(done, total)` is told after each batch of runs. The frame's
    `attrs["runs"]` counts the runs made, `attrs["stored"]` those read from the store.
    """
    if grid is not None:
        if not grid:
            raise ScenarioError("grid: an empty list of points; give at least one")
        axes: dict[str, list[str]] = {k: [] for k in grid[0] if k not in ("seed", "scenario")}
    else:
        axes = _axes(vary if vary is not None else {})
    check_workers(jobs, cluster)  # before the configs are built, not once the runs are due
    grid, configs = build(scenario, axes, seeds=seeds, set=set, duration=duration, grid=grid)
    outs, ran = run_configs(
        configs,
        points=grid,
        source="sweep",
        store=store,
        rerun=rerun,
        jobs=jobs,
        cluster=cluster,
        traces=traces,
        progress=progress,
    )
    rows = []
    for point, out in zip(grid, outs, strict=True):
        summary = out["summary"]
        run_fields = {k: summary[k] for k in RUN_FIELDS if k in summary}
        for flow in summary["flows"]:
            fields = {k: v for k, v in flow.items() if _scalar(v)}
            flow_fields = {("flow" if k == "id" else k): v for k, v in fields.items()}
            rows.append({**point, "seed": summary["seed"], **flow_fields, **run_fields})
    table = pd.DataFrame(rows)
    table.attrs.update(runs=ran, stored=len(set_of(configs)) - ran if store is not None else 0)
    return table


def set_of(configs: Sequence[dict[str, Any]]) -> list[str]:
    """The distinct configs (as canonical JSON) of a list."""
    return list(dict.fromkeys(json.dumps(c, sort_keys=True) for c in configs))


def _axes(vary: dict[str, Sequence[str]] | Iterable[str]) -> dict[str, list[str]]:
    if isinstance(vary, dict):
        axes = {}
        for key, values in vary.items():
            # One value given alone is one value, not a string's letters.
            values = [values] if isinstance(values, str | int | float) else values
            if not isinstance(values, list | tuple):
                raise ScenarioError(
                    f"vary.{key}: expected a list of values such as ['reno', 'cubic'], "
                    f"got {show(values)}"
                )
            if not values:  # nothing to run at all
                raise ScenarioError(f"vary.{key}: an empty list of values; give at least one")
            axes[key] = [str(v) for v in values]
    elif isinstance(vary, list | tuple) and all(isinstance(v, str) for v in vary):
        axes = parse_vary(vary)
    else:
        raise ScenarioError(
            f"vary: expected {{key: [values]}} or a list of 'KEY=V1,V2' strings, got {show(vary)}"
        )
    if not axes:
        raise ScenarioError("vary: give at least one key and its values")
    return axes


def _source(scenario: Scenario) -> Scenario:
    """A scenario name ("real-20mbps") as its file in scenarios/, as the CLI takes it."""
    if isinstance(scenario, str) and not scenario.endswith(".toml"):
        return scenario_path(scenario)
    return scenario


def build(
    scenario: Scenario | list[Scenario],
    axes: dict[str, list[str]],
    *,
    seeds: Sequence[int] | None = None,
    set: Sequence[str] = (),  # noqa: A002
    duration: str | None = None,
    grid: list[dict[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The grid's points and their canonical configs, every one checked before anything runs.
    `grid` (points with a value for each axis and a seed) replaces the product of the axes."""
    scenarios = scenario if isinstance(scenario, list) else [scenario]
    if not scenarios:
        raise ScenarioError("sweep: an empty list of scenarios; give at least one")
    if seeds is not None and not len(seeds):
        raise ScenarioError("seeds: an empty list; give at least one, or none for the scenario's")
    for item in set:
        # The point's value would replace this one, which would never run (nor be checked).
        key = item.partition("=")[0].strip()
        if key in axes:
            raise ScenarioError(
                f"--set {item}: {key} is also varied (--vary or the plan's axes), which "
                "sets it at every point; give its values there alone"
            )
    names = [scenario_name(s) for s in scenarios]
    if len(dict.fromkeys(names)) != len(names):
        raise ScenarioError(f"sweep: a scenario is named twice in {names}")
    many = isinstance(scenario, list)
    if seeds:
        check_points(len(seeds), "seeds")  # before a range of them is listed
    base = grid if grid is not None else points(axes, list(seeds) if seeds else [None])
    check_points(len(names) * len(base), "sweep")
    full = [{**({"scenario": name} if many else {}), **point} for name in names for point in base]
    by_name = dict(zip(names, (_source(s) for s in scenarios), strict=True))
    configs = []
    # The seed only sets the config's `seed`: a point is loaded once for all its seeds.
    loaded: dict[tuple[Any, ...], dict[str, Any]] = {}
    for point in full:
        sets = [*set, *(f"{k}={point[k]}" for k in axes)]
        name, seed = point.get("scenario", names[0]), point["seed"]
        once = (name, *sets, seed is None)
        if once in loaded:
            base = loaded[once]
            configs.append(base if seed is None else {**base, "seed": parse_int(seed, "seed")})
            continue
        try:
            config = load(by_name[name], set=sets, seed=seed, duration=duration)
        except ValueError as e:
            where = ", ".join(f"{k}={point[k]}" for k in point if k != "seed")
            raise ScenarioError(f"sweep point {where}: {e}") from None
        loaded[once] = config
        configs.append(config)
    return full, configs


def open_store(store: str | os.PathLike[str] | Store | None) -> tuple[Store | None, bool]:
    """(the store, whether the caller opened it and must close it)."""
    if store is None or isinstance(store, Store):
        return store, False
    return Store(store), True


def run_configs(
    configs: Sequence[dict[str, Any]],
    *,
    points: Sequence[dict[str, Any]] | None = None,
    source: str = "",
    store: str | os.PathLike[str] | Store | None = None,
    rerun: bool = False,
    jobs: int | None = None,
    cluster: str | None = None,
    traces: bool = True,
    task: Callable[[Any], dict[str, Any]] = run_task,
    items: Sequence[Any] | None = None,
    versions: Sequence[str] | None = None,
    chunksize: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Run every config not already in `store` (all of them with `rerun`, or without a store),
    each distinct config once, storing each batch as it arrives. Returns, in config order,
    {"summary", "extra"} per config, and how many runs were made.

    `task(item)` runs one config (default: `run_task` over (config JSON, traces)) in a worker
    and returns {"summary", "wall_s"} and optionally "traces" (Parquet bytes by table) and
    "extra" (JSON-able, kept beside the summary); `items` are its inputs, one per config.
    `versions` key each config's run instead of the engine's version alone (the scorecard
    adds what its task measures, so a stored run measured otherwise is not reused).
    """
    the_store, close = open_store(store)
    try:
        texts = [canonical(c) for c in configs]
        tags = versions if versions is not None else [None] * len(configs)
        keys = [run_key(c, version=v, text=t) for c, t, v in zip(configs, texts, tags, strict=True)]
        done: dict[str, dict[str, Any] | None] = {}
        if the_store is not None and not rerun:
            done = the_store.stored(keys)
        if the_store is not None:
            the_store.release()  # for readers and other sweeps until the first batch is in
        first = {k: i for i, k in reversed(list(enumerate(keys)))}
        todo = [first[k] for k in dict.fromkeys(keys) if k not in done]
        if items is None:
            keep = traces and the_store is not None
            items = [(t, keep) for t in texts]
        payloads = guests.payloads_for([configs[i] for i in todo])
        if payloads:  # the users' controllers travel with the tasks
            task = guests.Carrying(task, payloads)
        total = len(todo)
        if progress is not None:
            progress(0, total)
        finished = 0
        failed: dict[str, Failure] = {}

        def on_batch(indices: list[int], outs: list[dict[str, Any]]) -> None:
            nonlocal finished
            for i, out in zip(indices, outs, strict=True):
                if "failed" in out:  # the point's worker died (execute): kept, named, not run
                    failed[keys[i]] = Failure(
                        key=keys[i],
                        config=texts[i],
                        source=source,
                        point=dict(points[i]) if points is not None else {},
                        error=out["failed"],
                    )
            if the_store is not None and failed:
                the_store.put_failed([failed[keys[i]] for i in indices if keys[i] in failed])
            pairs = [(i, out) for i, out in zip(indices, outs, strict=True) if "failed" not in out]
            records = [
                Record(
                    key=keys[i],
                    config=texts[i],
                    summary=out["summary"],
                    source=source,
                    point=dict(points[i]) if points is not None else {},
                    extra=out.get("extra") or {},
                    traces=out.get("traces") or {},
                    wall_s=out.get("wall_s", 0.0),
                    task_s=out.get("task_s", out.get("wall_s", 0.0)),
                )
                for i, out in pairs
            ]
            if the_store is not None:
                the_store.put(records, replace=rerun)
                the_store.release()
            for r in records:
                # With a store, what it stored is read back once at the end, not kept here: a
                # 10 000-run sweep's driver grew 24% from the 1 000th run to the last keeping
                # every summary, 14% keeping them as JSON text.
                kept = None if the_store is not None else {"summary": r.summary, "extra": r.extra}
                done[r.key] = kept
            finished += len(indices)
            if progress is not None:
                progress(finished, total)

        execute(
            task,
            [items[i] for i in todo],
            on_batch,
            jobs=jobs,
            cluster=cluster,
            chunksize=chunksize,
            index=todo,
        )
        if the_store is not None and (stored := [k for k, v in done.items() if v is None]):
            done.update(the_store.stored(stored))
            the_store.release()
        if failed:
            raise ScenarioError(failure_line(list(failed.values()), total, the_store))
        return [done[k] for k in keys], total
    finally:
        if close and the_store is not None:
            the_store.close()


def failure_line(failed: list[Failure], total: int, store: Store | None) -> str:
    """One line for the points whose workers died: how many, the first one's point and why,
    and where the rest is."""
    first = failed[0]
    point = ", ".join(f"{k}={v}" for k, v in first.point.items()) or first.key
    where = f"kept in {store.path}'s `failed` table; " if store is not None else ""
    return (
        f"{len(failed)} of {total} runs failed, e.g. {point}: {first.error} ({where}every other "
        "run finished)"
    )


# A batch of short runs is sized to take about this long (seconds of run time), so that
# scheduling and storing (some 40 ms a transaction) cost little beside the runs, and a killed
# sweep loses little.
BATCH_S = 0.5
MAX_BATCH = 256


def execute(
    fn: Callable[[T], R],
    items: Sequence[T],
    on_batch: Callable[[list[int], list[R]], None],
    *,
    jobs: int | None = None,
    cluster: str | None = None,
    chunksize: int | None = None,
    index: Sequence[int] | None = None,
) -> None:
    """`fn` over `items` in batches, in this process (`jobs=1`), a process pool (`jobs`
    processes, default one per CPU) or a Dask cluster; `on_batch(indices, results)` in this
    process as each batch completes. The first batches hold one item each; later ones are
    sized from the runs' `wall_s` to take about BATCH_S (`chunksize` fixes the size).
    `index` names the items in `on_batch` (default 0, 1, ...)."""
    n = len(items)
    names = list(index) if index is not None else list(range(n))
    if not n:
        return
    walls: list[float] = []
    cursor = 0
    workers = 1 if cluster else min(jobs or os.cpu_count() or 1, n)

    def next_batch() -> list[int] | None:
        nonlocal cursor
        if cursor >= n:
            return None
        if chunksize:
            size = chunksize
        elif walls:
            mean = max(sum(walls) / len(walls), 1e-6)
            size = max(1, min(MAX_BATCH, int(BATCH_S / mean), (n - cursor) // workers or 1))
        else:
            size = 1
        batch = list(range(cursor, min(n, cursor + size)))
        cursor += len(batch)
        return batch

    def finish(batch: list[int], outs: list[R]) -> None:
        walls.extend(
            o.get("task_s", o["wall_s"]) for o in outs if isinstance(o, dict) and "wall_s" in o
        )
        on_batch([names[i] for i in batch], outs)

    if cluster:

        def set_workers(count: int) -> None:
            nonlocal workers
            workers = count

        _execute_dask(fn, items, next_batch, finish, cluster, set_workers)
        return
    if workers == 1:
        while (batch := next_batch()) is not None:
            finish(batch, run_batch(fn, [items[i] for i in batch]))
        return

    pool = ProcessPoolExecutor(
        max_workers=workers, initializer=stopping.ignore_in_worker, initargs=(os.getpid(),)
    )
    try:
        running = {}
        for _ in range(2 * workers):
            if (batch := next_batch()) is None:
                break
            running[pool.submit(run_batch, fn, [items[i] for i in batch])] = batch
        while running:
            completed, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in completed:
                finish(running.pop(future), future.result())
                if (batch := next_batch()) is not None:
                    running[pool.submit(run_batch, fn, [items[i] for i in batch])] = batch
    except BaseException:
        # Ctrl-C (or a failed batch): what was stored stays stored; the workers stop now
        # instead of finishing the batches queued for them.
        _stop(pool)
        raise
    pool.shutdown()


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the pool's worker processes (SIGKILL: they ignore
    SIGINT and SIGTERM, `stopping.ignore_in_worker`)."""
    processes = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.kill()
    for process in processes:
        process.join(timeout=5)


def _execute_dask(
    fn: Callable[[T], R],
    items: Sequence[T],
    next_batch: Callable[[], list[int] | None],
    finish: Callable[[list[int], list[R]], None],
    cluster: str,
    set_workers: Callable[[int], None],
) -> None:
    """Batches on a Dask cluster. A batch whose workers all died running it (out of memory,
    say: Dask's KilledWorker after `distributed.scheduler.allowed-failures` tries) runs again
    one point per task, and a single point that still kills its worker is finished as
    {"failed": why}; batches lost with the scheduler's connection run again once the client
    has reconnected, or the sweep stops in one line when it cannot."""
    with dask_client(cluster) as client:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        set_workers(workers)

        running: dict[str, list[int]] = {}
        pending = distributed.as_completed()

        def submit(batch: list[int]) -> None:
            future = client.submit(run_batch, fn, [items[i] for i in batch], pure=False)
            running[future.key] = batch
            pending.add(future)

        for _ in range(2 * workers):
            if (batch := next_batch()) is None:
                break
            submit(batch)
        for future in pending:
            batch = running.pop(future.key)
            try:
                outs = future.result()
            except distributed.KilledWorker as e:
                if len(batch) > 1:
                    for i in batch:  # find the point that kills its worker
                        submit([i])
                    continue
                outs = [{"failed": f"{_killed(e)}; out of memory?"}]
            except (CancelledError, distributed.comm.CommClosedError):
                # The scheduler's connection dropped: its tasks were cancelled, or the result
                # could not be gathered.
                _reconnected(client, cluster)
                submit(batch)
                continue
            finish(batch, outs)
            if (batch := next_batch()) is not None:
                submit(batch)


# How long a sweep waits for its client to reconnect to the scheduler after the connection
# dropped, before it stops (the client itself gives up after its `timeout`, CLIENT_TIMEOUT).
CLIENT_TIMEOUT = "10s"
RECONNECT_WAIT_S = 30.0


def _reconnected(client: Any, cluster: str) -> None:
    """Wait until `client` is connected again (it retries by itself); ScenarioError naming the
    scheduler when it gives up."""
    deadline = time.monotonic() + RECONNECT_WAIT_S
    while client.status != "running":
        if client.status in ("closing", "closed") or time.monotonic() > deadline:
            raise ScenarioError(
                f"--cluster {cluster}: lost the scheduler mid-sweep (no answer for "
                f"{CLIENT_TIMEOUT}); the runs finished before are stored, and the same command "
                "runs the rest"
            )
        time.sleep(0.1)


def _killed(e: BaseException) -> str:
    """How many workers died running a task, from Dask's KilledWorker message."""
    found = re.search(r"on (\d+) different workers", str(e))
    return f"{found.group(1)} workers died running it" if found else "its workers died"


@contextmanager
def dask_client(cluster: str) -> Iterator[Any]:
    """A Dask client: `local:N` starts a LocalCluster of N single-threaded worker processes
    (stopped at the end); `tcp://HOST:PORT` connects to a running scheduler."""
    kind, n = check_cluster(cluster)
    if kind == "local":
        with (
            distributed.LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                # A free port: None still binds the default 8787 and fails (a warning, an
                # error under -W error) when another cluster on the machine holds it.
                dashboard_address=":0",
                silence_logs=logging.ERROR,
            ) as local,
            distributed.Client(local) as client,
        ):
            yield client
        return
    if kind in ("tcp", "tls"):
        # The client's own log lines (a lost connection, keys gathered again) would break the
        # sweep's one line: what they report, the sweep says (_execute_dask).
        connect = distributed.Client  # imported first: importing it sets its loggers' levels
        log = logging.getLogger("distributed.client")
        level = log.level
        log.setLevel(logging.CRITICAL)
        try:
            try:
                client = connect(cluster, timeout=CLIENT_TIMEOUT)
            except OSError as e:
                raise ScenarioError(f"--cluster {cluster}: no scheduler answered ({e})") from None
            with client:
                yield client
        finally:
            log.setLevel(level)


def check_workers(jobs: int | None, cluster: str | None) -> None:
    """`--jobs` and `--cluster` of a command of many runs (sweep, score, reproduce swarm),
    checked before any run, so a bad one is refused even when every point is already stored."""
    if jobs is not None and jobs < 1:
        raise ScenarioError(f"--jobs {jobs}: expected at least 1")
    if cluster is not None:
        check_cluster(cluster)


def check_cluster(cluster: str) -> tuple[str, int]:
    """`local:N` → ("local", N); `tcp://HOST:PORT` (or tls) → ("tcp", 0); checked before any
    run, so a bad one is refused even when every point is already stored."""
    kind, _, rest = cluster.partition(":")
    if kind == "local":
        n = int(rest) if rest.isascii() and rest.isdigit() and len(rest) < 6 else 0
        if n < 1:
            raise ScenarioError(f"--cluster {cluster}: expected local:N with N at least 1")
        return kind, n
    if kind in ("tcp", "tls") and rest.startswith("//") and len(rest) > 2:
        return "tcp", 0
    raise ScenarioError(f"--cluster {cluster}: expected local:N or tcp://HOST:PORT")


def run_parallel(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    jobs: int | None = None,
    chunksize: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[R]:
    """`fn` over `items` in `jobs` processes (default: one per CPU), results in item order;
    `progress(done)` after each batch. `fn` must be a module-level function."""
    out: dict[int, R] = {}

    def on_batch(indices: list[int], results: list[R]) -> None:
        out.update(zip(indices, results, strict=True))
        if progress:
            progress(len(out))

    execute(fn, items, on_batch, jobs=jobs, chunksize=chunksize)
    return [out[i] for i in range(len(items))]


def check_metric(metric: str) -> None:
    """Before any run: `metric` must be a number the core reports per flow (its summary
    schema) or per run (RUN_FIELDS)."""
    schema = core_schema()
    numbers = [k for k in schema["flow"] if k != "id" and k not in schema["text"]]
    numbers += RUN_FIELDS
    if metric not in numbers:
        raise ScenarioError(
            f"--metric {metric}: not a number the summary holds per flow; accepted: "
            + ", ".join(numbers)
        )


def default_metric(rows: pd.DataFrame) -> tuple[str, str]:
    """completion_s when every flow swept has a size and some complete, else goodput_bps
    (which every flow has); and why, in words."""
    if "size_bytes" not in rows.columns or rows["size_bytes"].isna().any():
        return "goodput_bps", "default: a flow has no size, so it never completes"
    if "completion_s" not in rows.columns or rows["completion_s"].isna().all():
        return "goodput_bps", "default: no flow completed within the run"
    return "completion_s", "default: every flow has a size"


def aggregate(rows: pd.DataFrame, keys: Sequence[str], metric: str) -> pd.DataFrame:
    """Median, min and max of `metric` over seeds, per grid point and flow; `runs` counts the
    runs, `valued` those with a value of `metric` (a flow that never completes has no
    completion_s)."""
    if metric not in rows.columns:
        accepted = ", ".join(c for c in rows.columns if c not in (*keys, "seed", "flow", "cc"))
        raise ScenarioError(f"--metric {metric}: not a summary field; accepted: {accepted}")
    groups = rows.groupby([*keys, "flow", "cc"], sort=False, dropna=False)[metric]
    table = groups.agg(["median", "min", "max", "size", "count"]).reset_index()
    return table.rename(columns={"size": "runs", "count": "valued"})


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


# Past this many series on one axes, lines differ by dash as well as colour.
COLOURS = 8


def plot(table: pd.DataFrame, keys: Sequence[str], metric: str) -> Figure:
    """`metric` (median over seeds, min-max bars) against the first varied key, one series per
    combination of the other keys and flow: lines when the key's values are numbers, else
    markers side by side at each value. A point with no value (say a flow that never
    completes) is a dotted grey line across the axes marked "no value", never a point on the
    scale; the legend sits outside the axes. The y axis names the metric's quantity and unit
    (plot.axis_label), the title the controller and what was varied."""
    x_key = keys[0]
    others = [*keys[1:], *(["flow"] if table["flow"].nunique() > 1 else [])]
    fig = mpl_figure.Figure(figsize=(8, 4))
    ax = fig.subplots()
    xs = list(dict.fromkeys(table[x_key]))
    series = list(table.groupby(others, sort=False)) if others else [((), table)]
    numeric = all(_is_number(v) for v in xs)
    width = 0.0 if numeric else 0.6 / max(len(series), 1)
    dashes = ["-", "--", ":", "-."]
    markers = ["o", "s", "^", "D"]
    missing_label = "no value (dotted)"
    for i, (label, line) in enumerate(series):
        label = label if isinstance(label, tuple) else (label,)
        name = ", ".join(f"{k}={v}" for k, v in zip(others, label, strict=True)) or metric
        shift = (i - (len(series) - 1) / 2) * width
        pos = [xs.index(v) + shift for v in line[x_key]]
        med = line["median"].astype(float)
        err = [med - line["min"].astype(float), line["max"].astype(float) - med]
        style = dashes[(i // COLOURS) % len(dashes)] if numeric else "none"
        ax.errorbar(
            pos,
            med,
            yerr=err,
            marker=markers[(i // COLOURS) % len(markers)],
            capsize=3,
            linestyle=style,
            color=f"C{i % COLOURS}",
            label=name,
        )
        for p in (p for p, m in zip(pos, med, strict=True) if m != m):
            ax.axvline(p, color="0.5", linestyle=":", linewidth=1.2, label=missing_label)
            ax.text(
                p,
                0.5,
                "no value",
                rotation=90,
                ha="right",
                va="center",
                fontsize=7,
                color="0.35",
                transform=ax.get_xaxis_transform(),
            )
            missing_label = "_"
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    if not numeric and sum(len(str(v)) for v in xs) > 60:
        ax.tick_params(axis="x", labelrotation=20)
    ax.set_xlabel(x_key)
    ax.set_ylabel(axis_label(metric))
    ccs = list(dict.fromkeys(table["cc"])) if "cc" in table.columns else []
    by = f" ({ccs[0]})" if len(ccs) == 1 else ""
    ax.set_title(f"{axis_label(metric)}{by} against {x_key}", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig
