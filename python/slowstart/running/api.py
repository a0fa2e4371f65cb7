"""Run a scenario through the core and return its summary and traces as DataFrames.

numpy and pandas are imported when a DataFrame is first asked for, not before: a caller that
reads only the summary (`slowstart run --json`) never loads them.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart import lazy, stopping
from slowstart.loading import guests
from slowstart.loading.scenario import load
from slowstart.paths import output_folder
from slowstart.plot import plot_cwnd
from slowstart.running.swarm_results import format_swarm, packet_ms, plot_run, save_run
from slowstart.tables import summary_head, summary_tables

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

_core = lazy.module("slowstart._core")
np = lazy.module("numpy")
pa = lazy.module("pyarrow")
pq = lazy.module("pyarrow.parquet")
pd = lazy.module("pandas")


UNSET = 2**64 - 1  # the core's "no value" in a u64 column (np.iinfo(np.uint64).max)

# A table as the core returns it: column name -> (little-endian bytes, numpy dtype, whether
# u64::MAX means "no value", the name list its codes index or None). The core declares the
# columns (crates/slowstart-config/src/trace.rs); this turns any of them into a DataFrame.
Table = dict[str, tuple[bytes, str, bool, str | None]]


@functools.cache
def core_schema() -> dict[str, list[str]]:
    """The core's names (`_core.schema()`): `flow` and `link`, the summary rows' fields; `text`,
    the flow fields that hold text; `flows` and `queues`, the trace columns as a frame shows
    them (`*_ns` as `*_s`); `initial_phases`, the phases a flow's slow-start exit ends. Each in
    order."""
    s = json.loads(_core.schema())
    return {
        "flow": list(s["flow"]),
        "text": [k for k, v in s["flow"].items() if isinstance(v, str)],
        "link": list(s["link"]),
        "flows": [shown_name(c) for c in s["flows"]],
        "queues": [shown_name(c) for c in s["queues"]],
        "initial_phases": list(s["initial_phases"]),
    }


def shown_name(column: str) -> str:
    """A core column's name as a frame shows it: `*_ns` (nanoseconds) as `*_s` (seconds)."""
    return column[: -len("_ns")] + "_s" if column.endswith("_ns") else column


def frame(table: Table, names: dict[str, list[str]]) -> pd.DataFrame:
    """A trace table as a DataFrame: `*_ns` columns as `*_s` seconds, "no value" as NaN, codes
    as categories from `names` ("phases", "links")."""
    columns = {}
    for name, (data, dtype, unset, codes) in table.items():
        dt = np.dtype(dtype)
        values = np.frombuffer(data, dtype=dt).astype(dt.newbyteorder("="))
        if unset:
            column = values.astype(np.float64)
            column[values == UNSET] = np.nan
            columns[name] = column
        elif codes is not None:
            columns[name] = pd.Categorical.from_codes(
                values.astype(np.int64), categories=list(names[codes])
            )
        elif name.endswith("_ns"):
            columns[shown_name(name)] = values / 1e9
        else:
            columns[name] = values
    return pd.DataFrame(columns)


def arrow_table(table: Table, names: dict[str, list[str]]) -> Any:
    """The same table as `frame` makes, as a pyarrow Table built straight from the columns
    (no pandas): what the results store writes to Parquet, several times faster."""
    columns = {}
    for name, (data, dtype, unset, codes) in table.items():
        dt = np.dtype(dtype)
        values = np.frombuffer(data, dtype=dt).astype(dt.newbyteorder("="))
        if unset:
            column = values.astype(np.float64)
            column[values == UNSET] = np.nan
            columns[name] = pa.array(column)
        elif codes is not None:
            columns[name] = pa.DictionaryArray.from_arrays(
                pa.array(values.astype(np.int32)), pa.array(list(names[codes]), pa.string())
            )
        elif name.endswith("_ns"):
            columns[shown_name(name)] = pa.array(values / 1e9)
        else:
            columns[name] = pa.array(values)
    return pa.table(columns)


class TraceFiles:
    """A run's trace rows appended to `folder`/flows.parquet, queues.parquet (and apps.parquet
    when it has rows) as the core hands them over (`_core.run(stream=...)`): a run of any
    length keeps every sampled row in bounded memory. Each chunk is one Parquet row group."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.writers: dict[str, Any] = {}

    def __call__(self, chunk: dict[str, Any]) -> None:
        names = {"phases": list(chunk["phase_names"]), "links": list(chunk["link_names"])}
        for name in ("flows", "queues", "apps"):
            table = arrow_table(chunk[name], names)
            if not table.num_rows and (name in self.writers or name == "apps"):
                continue
            if name not in self.writers:
                path = self.folder / f"{name}.parquet"
                self.writers[name] = pq.ParquetWriter(path, table.schema, compression="lz4")
            self.writers[name].write_table(table)

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()

    def frame(self, name: str) -> pd.DataFrame:
        """A table as written, read back (empty if it had no rows)."""
        path = self.folder / f"{name}.parquet"
        return pd.read_parquet(path) if path.exists() else pd.DataFrame()


class _Pending:
    """A DataFrame not built yet: `build(*args)`, called on first use (picklable)."""

    def __init__(self, build: Callable[..., pd.DataFrame], *args: Any) -> None:
        self.build, self.args = build, args


def _empty_frame() -> pd.DataFrame:
    return pd.DataFrame()


class Result:
    """One run: `summary` (dict), `flows`, `queues` and `apps` (DataFrames), and the config.

    Constructed as `Result(config, summary, flows, queues, phase_names=[], apps=DataFrame())`.
    A run's DataFrames are built from the core's columns when first read, so reading only
    `summary` imports neither numpy nor pandas.
    """

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value, as a dataclass

    def __init__(
        self,
        config: dict[str, Any],
        summary: dict[str, Any],
        flows: pd.DataFrame | _Pending,
        queues: pd.DataFrame | _Pending,
        phase_names: list[str] | None = None,
        apps: pd.DataFrame | _Pending | None = None,
    ) -> None:
        self.config = config
        self.summary = summary
        self.phase_names = [] if phase_names is None else phase_names
        self._frames: dict[str, Any] = {
            "flows": flows,
            "queues": queues,
            "apps": _Pending(_empty_frame) if apps is None else apps,
        }

    def _frame(self, name: str) -> pd.DataFrame:
        frame = self._frames[name]
        if isinstance(frame, _Pending):
            frame = self._frames[name] = frame.build(*frame.args)
        return frame

    @property
    def flows(self) -> pd.DataFrame:
        """Per-flow samples of cwnd, ssthresh, bytes in flight, smoothed RTT, bytes delivered
        and the controller's phase against time (columns as `_core.schema()` names them)."""
        return self._frame("flows")

    @flows.setter
    def flows(self, value: pd.DataFrame) -> None:
        self._frames["flows"] = value

    @property
    def queues(self) -> pd.DataFrame:
        """Per-link queue samples in bytes and packets against time."""
        return self._frame("queues")

    @queues.setter
    def queues(self, value: pd.DataFrame) -> None:
        self._frames["queues"] = value

    @property
    def apps(self) -> pd.DataFrame:
        """Per-flow application samples (BitTorrent's request queue); empty without one."""
        return self._frame("apps")

    @apps.setter
    def apps(self, value: pd.DataFrame) -> None:
        self._frames["apps"] = value

    def _fields(self) -> tuple[Any, ...]:
        return (self.config, self.summary, self.flows, self.queues, self.phase_names, self.apps)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        s = self.summary
        if "swarm" in s:
            sw = s["swarm"]
            what = f"{sw['peers_joined']} peers, {sw['completions']} completed"
        else:
            flows = s.get("flows", [])
            what = f"{len(flows)} flow{'s' * (len(flows) != 1)}"
        return (
            f"<Result {s.get('scenario')}: {what}, {s.get('sim_time_s', 0):.3f} s simulated, "
            f"seed {s.get('seed')}>"
        )

    def _repr_html_(self) -> str:
        """In a notebook: the summary's tables (flows and links, or a swarm's peers as
        `slowstart run` prints them) and the figure of `plot()`, inline."""
        if "swarm" in self.config:
            body = f"<pre>{html.escape(format_swarm(self.summary, self.queues))}</pre>"
        else:
            body = f"<p>{html.escape(summary_head(self.summary))}</p>" + "".join(
                _html_table(headers, rows) for headers, rows in summary_tables(self.summary)
            )
        png = io.BytesIO()
        self.plot().savefig(png, format="png", dpi=80)
        figure = base64.b64encode(png.getvalue()).decode("ascii")
        return f'<div>{body}<img alt="cwnd" src="data:image/png;base64,{figure}"/></div>'

    def plot(self, title: str | None = None) -> Figure:
        """cwnd and bytes in flight against time, one panel per flow, phases shaded; for a
        swarm, completion time against rank and the uplink queues (swarm_results.py)."""
        if "swarm" in self.config:
            ms = packet_ms(self.config["swarm"])
            return plot_run(self.summary, self.queues, ms_per_packet=ms)

        return plot_cwnd(self.flows, title=title or self.summary.get("scenario"))

    def save(self, out_dir: str | os.PathLike[str], traces: bool = True) -> list[Path]:
        """Write summary.json, flows.parquet, queues.parquet, cwnd.png (and apps.parquet when
        a flow has a BitTorrent application) into `out_dir`; a swarm's files are
        summary.json, queues.parquet, peers.parquet and swarm.png. Without `traces`, only
        summary.json (the traces were streamed there: `run(stream=...)`)."""
        if "swarm" in self.config:
            return save_run(self, out_dir)
        out = output_folder(out_dir, "out_dir")
        out.mkdir(parents=True, exist_ok=True)
        if not traces:
            path = out / "summary.json"
            path.write_text(json.dumps(self.summary, indent=2) + "\n", encoding="utf-8")
            return [path]
        paths = [out / n for n in ("summary.json", "flows.parquet", "queues.parquet", "cwnd.png")]
        paths[0].write_text(json.dumps(self.summary, indent=2) + "\n", encoding="utf-8")
        self.flows.to_parquet(paths[1], index=False)
        self.queues.to_parquet(paths[2], index=False)
        self.plot().savefig(paths[3], dpi=120)
        if len(self.apps):
            paths.append(out / "apps.parquet")
            self.apps.to_parquet(paths[-1], index=False)
        return paths


def _html_table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM, `slowstart.stopping`) stopped a run; `result` holds what it had
    simulated (summary `interrupted`)."""

    def __init__(self, result: Result) -> None:
        at = result.summary["sim_time_s"]
        super().__init__(f"{stopping.word()} at {at:.3f} s of simulated time")
        self.result = result


class ControllerFault(ValueError):
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
    """Create folder `path` for an export and check it takes files; ValueError naming `option`
    (e.g. "--pcap") if not."""
    folder = output_folder(path, option)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".slowstart-write-check"
        probe.touch()
        probe.unlink()
    except OSError as e:
        raise ValueError(f"{option}: cannot write to {str(folder)!r}: {e.strerror}") from None
    return str(folder)


def run_config(
    config: dict[str, Any],
    progress: Callable[[float, float], None] | None = None,
    *,
    qlog: str | os.PathLike[str] | None = None,
    pcap: str | os.PathLike[str] | None = None,
    stream: str | os.PathLike[str] | None = None,
) -> Result:
    """Run an already canonical config. `progress(now_s, end_s)` is called about every 100 ms
    of wall time; Ctrl-C raises Interrupted, a user's misbehaving controller ControllerFault,
    each carrying the partial result. `qlog` and
    `pcap` are folders: one qlog file per flow (`.sqlog`), one capture per link direction.
    `stream` is a folder the traces go to as the run goes (TraceFiles: every sampled row, in
    bounded memory); the result's frames read them back from there."""
    qlog_dir = None if qlog is None else export_dir(qlog, "qlog")
    pcap_dir = None if pcap is None else export_dir(pcap, "pcap")
    files = None if stream is None else TraceFiles(Path(export_dir(stream, "stream")))
    guests.register(config)
    start = time.perf_counter()
    try:
        out = _core.run(json.dumps(config), progress, qlog_dir, pcap_dir, files)
        if files is not None:
            files(out)  # the rows after the last chunk
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
    result = Result(
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
