"""Running many canonical configs: in batches sized by run time over processes, or on a Dask
cluster, each run stored in the results store as it ends (`run_configs`); what `sweep`,
`score` and `reproduce swarm` run on."""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Any, TypeVar

from slowstart import lazy, stopping
from slowstart.loading import guests
from slowstart.running.api import run_config
from slowstart.running.records import Failure, Record, canonical, run_key, traces_of
from slowstart.running.store import Store
from slowstart.units import ScenarioError

distributed = lazy.module("distributed")

T = TypeVar("T")
R = TypeVar("R")


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
    elif kind in ("tcp", "tls") and rest.startswith("//") and len(rest) > 2:
        kind, n = "tcp", 0
    else:
        raise ScenarioError(f"--cluster {cluster}: expected local:N or tcp://HOST:PORT")
    try:
        distributed.Client  # noqa: B018 - the first use imports it
    except ImportError:  # an extra (pyproject.toml): the core install runs on processes
        raise ScenarioError(
            f"--cluster {cluster}: needs Dask, not installed: pip install 'slowstart[dask]'"
        ) from None
    return kind, n


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
