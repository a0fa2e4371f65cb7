"""Run a scenario through the core and return its result, of the class of its kind (a run of
flows, a swarm's): `run`, `run_config`, and the exceptions a run ends with.
"""

from __future__ import annotations

import inspect
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slowstart import lazy, stopping
from slowstart.loading import guests
from slowstart.loading.scenario import load
from slowstart.paths import output_folder
from slowstart.running import memory
from slowstart.running.columns import (
    Table,
    TraceFiles,
    arrow_table,
    core_schema,
    frame,
    shown_name,
)
from slowstart.running.result import FlowsResult, Result, RunKind, _Pending
from slowstart.running.swarm_results import SwarmResult
from slowstart.units import ScenarioError

__all__ = [
    "RESULTS",
    "ControllerFault",
    "FlowsResult",
    "Interrupted",
    "Result",
    "RunKind",
    "SwarmResult",
    "Table",
    "_Pending",
    "arrow_table",
    "core_schema",
    "frame",
    "export_dir",
    "run",
    "run_config",
    "shown_name",
]

_core = lazy.module("slowstart._core")


# The result class of each kind of run, as the core tells the kind (`_core.run`'s "kind").
RESULTS: dict[RunKind, type[Result]] = {RunKind.FLOWS: FlowsResult, RunKind.SWARM: SwarmResult}


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, `slowstart.stopping`) stopped a run; `result` holds what it had
    simulated (summary `interrupted`)."""

    def __init__(self, result: Result) -> None:
        at = result.summary["sim_time_s"]
        super().__init__(f"{stopping.word()} at {at:.3f} s of simulated time")
        self.result = result


class ControllerFault(ScenarioError):
    """A user's controller misbehaved and stopped the run; the message is the core's one line
    (the controller, the method, the simulated time, what it did) and `result` holds what was
    simulated before (summary `fault`)."""

    def __init__(self, result: Result) -> None:
        super().__init__(result.summary["fault"])
        self.result = result

    def __reduce__(self) -> tuple[type, tuple[Result]]:
        # Raised in a sweep's worker process, it is pickled back to the driver: by default
        # with its message alone, which __init__ cannot take, and the pool would break.
        return (type(self), (self.result,))


def export_dir(path: str | os.PathLike[str], option: str) -> str:
    """Create folder `path` for an export and check it takes files; ScenarioError naming `option`
    (e.g. "--pcap") if not."""
    folder = output_folder(path, option)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".slowstart-write-check"
        probe.touch()
        probe.unlink()
    except OSError as e:
        raise ScenarioError(f"{option}: cannot write to {str(folder)!r}: {e.strerror}") from None
    return str(folder)


def _as_the_core_calls(progress: Callable[..., None] | None) -> Callable[..., None] | None:
    """`progress` as the core calls it, with a swarm's state as a third argument: a callback
    that takes two is called with two, as before swarms told their state."""
    if progress is None:
        return None
    try:
        inspect.signature(progress).bind(0.0, 0.0, {})
    except TypeError:
        return lambda now_s, end_s, swarm=None: progress(now_s, end_s)
    except ValueError:  # no signature to read (a builtin): as given
        pass
    return progress


def run_config(
    config: dict[str, Any],
    progress: Callable[..., None] | None = None,
    *,
    qlog: str | os.PathLike[str] | None = None,
    pcap: str | os.PathLike[str] | None = None,
    stream: str | os.PathLike[str] | None = None,
) -> Result:
    """Run an already canonical config. `progress(now_s, end_s)` is called about every 100 ms of
    wall time, for a swarm `progress(now_s, end_s, swarm)` with its state so far if it takes a
    third argument: a dict of "peers" (joined), "completions" and "stop_after" (None if it runs to
    its duration). Ctrl-C raises
    Interrupted, a user's misbehaving controller ControllerFault, each carrying the partial result.
    `qlog` and `pcap` are folders: one qlog file per flow (`.sqlog`), one capture per link
    direction. `stream` is a folder the traces go to as the run goes (TraceFiles: every sampled row,
    in bounded memory); the result's frames read them back from there. A swarm that cannot fit in
    this machine's memory is refused before anything starts (`memory.require_swarm_fits`)."""
    memory.require_swarm_fits(config)
    qlog_dir = None if qlog is None else export_dir(qlog, "qlog")
    pcap_dir = None if pcap is None else export_dir(pcap, "pcap")
    files = None if stream is None else TraceFiles(Path(export_dir(stream, "stream")))
    guests.register(config)
    start = time.perf_counter()
    try:
        told = _as_the_core_calls(progress)
        out = _core.run(json.dumps(config), told, qlog_dir, pcap_dir, files)
        if files is not None:
            files(out)  # the rows after the last chunk
    except ValueError as e:  # the core's "<field>: <message>" for a config it cannot build
        raise ScenarioError(str(e)) from None
    finally:
        if files is not None:
            files.close()
    wall_s = time.perf_counter() - start
    summary = json.loads(out["summary"])
    summary.setdefault("wall_s", wall_s)
    names = {"phases": list(out["phase_names"]), "links": list(out["link_names"])}
    tables = {n: _Pending(frame, out[n], names) for n in ("flows", "queues", "apps")}
    if files is not None:
        tables = {n: _Pending(files.frame, n) for n in tables}
    result = RESULTS[RunKind(out["kind"])](
        config=config,
        summary=summary,
        flows=tables["flows"],
        queues=tables["queues"],
        phase_names=names["phases"],
        apps=tables["apps"],
    )
    if summary.get("fault"):
        raise ControllerFault(result)
    if summary.get("interrupted"):
        raise Interrupted(result)
    return result


def run(
    scenario: str | os.PathLike[str] | dict[str, Any],
    *,
    cc: str | dict[str, Any] | None = None,
    set: list[str] | tuple[str, ...] | str = (),  # noqa: A002 - the documented keyword
    seed: int | None = None,
    duration: str | int | float | None = None,
    qlog: str | os.PathLike[str] | None = None,
    pcap: str | os.PathLike[str] | None = None,
    stream: str | os.PathLike[str] | None = None,
) -> Result:
    """Load a scenario (TOML path or dict), apply overrides, run it.

    `cc` replaces every flow's algorithm ("reno", "lss:max_ssthresh=100"); `set` is a list of
    "key=value" overrides such as "flow.0.initcwnd=20"; `seed` and `duration` ("10s") override
    the scenario's; `qlog` and `pcap` name folders for qlog files and captures; `stream` a
    folder the traces are written to as the run goes (flows.parquet, queues.parquet: every
    sampled row, in bounded memory, for long runs). Bad input raises ValueError naming the
    field.
    """
    config = load(scenario, cc=cc, set=set, seed=seed, duration=duration)
    return run_config(config, qlog=qlog, pcap=pcap, stream=stream)
