"""The results store: every run a sweep or a reproduction makes, in one DuckDB file.

A run is keyed by a content hash of its canonical config (seed included) and the engine's
version (`engine_version()`: the package version and a hash of the built core, so a rebuilt
engine never reuses an older engine's numbers). Tables:

- `runs`: one row per run: key, source (`sweep`, `reproduce floyd`, ...), scenario, seed,
  point (JSON: the sweep's axis values or the reproduction's variant), config and summary
  (JSON), extra (JSON: what a study keeps beside the summary), trace files, the run's wall
  seconds and the worker's (the run and encoding its traces);
- `flows`: one row per flow of a run: key, flow, cc and the flow's summary fields (JSON);
- `peers`: one row per peer of a swarm run (summaries with a `[swarm]` table have a `peers`
  list), key, peer and the peer's fields (JSON);
- `meta`: the schema version.

Traces are Parquet files beside the database, `<store>.traces/<key>.<table>.parquet`, written
(to a temporary name, then renamed) before the run's rows. Each batch of runs is one
transaction, committed as soon as it arrives: a process killed at any moment (SIGKILL
included) leaves every run it had stored, and nothing half-written that counts as stored.
DuckDB lets one process at a time open the file (it locks it). A sweep holds it only while it
reads what is stored and while it stores a batch (`release`, `put`), and a process that finds it
held waits (`LOCK_WAIT_S`) and tries again: so `report` and `results` read a store while a sweep
writes it, and two sweeps write one store at once, a run both make stored once.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.paths import output_file
from slowstart.running import api
from slowstart.running.api import RESULTS, Result, RunKind
from slowstart.running.records import (
    TRACES,
    Failure,
    Record,
    canonical,
    engine_version,
    traces_of,
)
from slowstart.units import ScenarioError

if TYPE_CHECKING:
    import pandas as pd

    from slowstart.running.api import Result

_core = lazy.module("slowstart._core")
duckdb = lazy.module("duckdb")
pa = lazy.module("pyarrow")
pc = lazy.module("pyarrow.compute")
pd = lazy.module("pandas")
pq = lazy.module("pyarrow.parquet")


# The layout above. A store of an older version is read (and upgraded when written); a newer
# one is refused with a message naming both.
SCHEMA_VERSION = 1
DEFAULT_STORE = "out/results.duckdb"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS runs (
    key VARCHAR PRIMARY KEY, source VARCHAR, scenario VARCHAR, seed UBIGINT, version VARCHAR,
    point VARCHAR, config VARCHAR, summary VARCHAR, extra VARCHAR, traces VARCHAR,
    wall_s DOUBLE, task_s DOUBLE, stored_at TIMESTAMP);
CREATE TABLE IF NOT EXISTS flows (key VARCHAR, flow INTEGER, cc VARCHAR, fields VARCHAR);
CREATE TABLE IF NOT EXISTS peers (key VARCHAR, peer INTEGER, fields VARCHAR);
CREATE TABLE IF NOT EXISTS failed (
    key VARCHAR PRIMARY KEY, source VARCHAR, point VARCHAR, config VARCHAR, error VARCHAR,
    failed_at TIMESTAMP);
"""


# How long opening a store waits while another process holds it (a sweep storing a batch, a
# report reading), trying again every LOCK_RETRY_S, before one line says who holds it.
LOCK_WAIT_S = 120.0
LOCK_RETRY_S = 0.05


def default_store() -> str:
    """`$SLOWSTART_STORE`, else out/results.duckdb."""
    return os.environ.get("SLOWSTART_STORE") or DEFAULT_STORE


class StoreError(ScenarioError):
    """A store that cannot be read: not a DuckDB file, or written by a newer schema."""


# A DuckDB file's magic bytes, after its header's 8-byte checksum (duckdb storage_info.hpp
# MAGIC_BYTES, MAGIC_BYTE_OFFSET).
_MAGIC, _MAGIC_AT = b"DUCK", 8


def _reads(method: Callable[..., Any]) -> Callable[..., Any]:
    """A Store method whose errors from a damaged file (DuckDB's, JSON that does not decode, a
    value of the wrong type) become one StoreError naming the store."""

    @functools.wraps(method)
    def read(self: Store, *args: Any, **kwargs: Any) -> Any:
        with self.damage_named():
            return method(self, *args, **kwargs)

    return read


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


class Store:
    """A results store at `path` (created when missing, unless `read_only` or not `create`)."""

    def __init__(
        self, path: str | os.PathLike[str], read_only: bool = False, create: bool = True
    ) -> None:
        self.path = output_file(path, "store")
        self.read_only = read_only
        self.trace_dir = self.path.with_name(self.path.name + ".traces")
        exists = self._check_file()
        if (read_only or not create) and not exists:
            raise StoreError(f"{self.path}: no such results store")
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._con: Any = None
        self._connect()
        try:
            self.schema = self._check_schema(read_only)
        except StoreError:
            self.close()
            raise

    def _connect(self) -> None:
        """Open the DuckDB file, waiting up to LOCK_WAIT_S while another process holds it."""
        # A file of another kind is refused above; DuckDB would otherwise fetch the extension
        # that reads it (SQLite's) from the network first.
        quiet = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                self._con = duckdb.connect(str(self.path), read_only=self.read_only, config=quiet)
                return
            except duckdb.IOException as e:
                first = str(e).strip().splitlines()[0]
                held = "Could not set lock" in first
                if held and time.monotonic() < deadline:
                    time.sleep(LOCK_RETRY_S)
                    continue
                if held:
                    holder = first.partition("Conflicting lock is held in ")[2] or "another process"
                    raise StoreError(
                        f"{self.path}: held by {holder.split(' See also')[0].rstrip('.')} for "
                        f"over {LOCK_WAIT_S:.0f} s; try again once it is done"
                    ) from None
                raise StoreError(f"{self.path}: cannot open as a results store ({first})") from None
            except duckdb.Error as e:
                first = str(e).strip().splitlines()[0]
                raise StoreError(f"{self.path}: not a results store ({first})") from None

    @property
    def con(self) -> Any:
        """The DuckDB connection, opened again if `release` closed it."""
        if self._con is None:
            self._connect()
        return self._con

    def release(self) -> None:
        """Close the file for other processes until this store is used again."""
        if self._con is not None:
            self._con.close()
            self._con = None

    def _check_file(self) -> bool:
        """Whether the store exists; StoreError if it is not a DuckDB file (a folder, a pipe
        that would never answer, an empty or foreign file)."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return False
        except OSError as e:
            raise StoreError(f"{self.path}: cannot read: {e.strerror}") from None
        if not stat.S_ISREG(info.st_mode):
            raise StoreError(f"{self.path}: not a file (a folder, device or pipe)")
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(_MAGIC_AT + len(_MAGIC))
        except OSError as e:
            raise StoreError(f"{self.path}: cannot read: {e.strerror}") from None
        if head[_MAGIC_AT:] != _MAGIC:
            what = "an empty file" if not head else "not a DuckDB file"
            raise StoreError(f"{self.path}: {what}, not a results store")
        return True

    @contextmanager
    def damage_named(self) -> Iterator[None]:
        """What a damaged store raises (see `_reads`), as one StoreError."""
        try:
            yield
        except ScenarioError:
            raise
        except (duckdb.Error, ValueError, TypeError, KeyError) as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise StoreError(f"{self.path}: a damaged results store ({first})") from None

    @_reads
    def _check_schema(self, read_only: bool) -> int:
        tables = self._tables()
        if "meta" in tables:
            row = self.con.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
            text = str(row[0]) if row else "0"
            if not (text.isascii() and text.isdigit() and len(text) < 10):
                raise StoreError(f"{self.path}: store schema {text!r} is not a version number")
            found = int(text)
        elif tables:
            found = 0
        else:
            found = SCHEMA_VERSION if not read_only else 0
        if found > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: written by store schema {found}, newer than this slowstart's "
                f"({SCHEMA_VERSION}); read it with the slowstart that wrote it, or upgrade"
            )
        if found < 1 and tables:
            raise StoreError(
                f"{self.path}: a DuckDB file but not a slowstart results store (no schema)"
            )
        if not read_only:
            self.con.execute(_SCHEMA)
            self.con.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema', ?)", [str(SCHEMA_VERSION)]
            )
        return found

    def close(self) -> None:
        self.release()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reading -----------------------------------------------------------------------------

    @_reads
    def keys(self) -> set[str]:
        if not self._has_tables():
            return set()
        return {r[0] for r in self.con.execute("SELECT key FROM runs").fetchall()}

    def _has_tables(self) -> bool:
        return "runs" in self._tables()

    def _tables(self) -> set[str]:
        rows = self.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
        return {r[0] for r in rows}

    @_reads
    def stored(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """key -> {"summary", "extra"} of each of `keys` that is stored."""
        if not keys or not self._has_tables():
            return {}

        wanted = pd.DataFrame({"key": list(dict.fromkeys(keys))})
        self.con.register("wanted_keys", wanted)
        try:
            rows = self.con.execute(
                "SELECT r.key, r.summary, r.extra FROM runs r JOIN wanted_keys w ON r.key = w.key"
            ).fetchall()
        finally:
            self.con.unregister("wanted_keys")
        return {k: {"summary": json.loads(s), "extra": json.loads(e or "{}")} for k, s, e in rows}

    @_reads
    def extra(self, key: str) -> dict[str, Any] | None:
        row = self.con.execute("SELECT extra FROM runs WHERE key = ?", [key]).fetchone()
        return None if row is None else json.loads(row[0] or "{}")

    @_reads
    def result(self, key: str) -> Result | None:
        """The stored run as a Result (traces read from their Parquet files), or None."""
        row = self.con.execute(
            "SELECT config, summary, traces FROM runs WHERE key = ?", [key]
        ).fetchone()
        if row is None:
            return None
        config, summary, traces = json.loads(row[0]), json.loads(row[1]), json.loads(row[2])
        frames = {}
        for name in TRACES:
            path = self.trace_dir / traces[name] if name in traces else None
            if path is not None and not path.exists():
                return None  # a trace went missing: run it again
            frames[name] = pd.read_parquet(path) if path is not None else pd.DataFrame()
        phases = list(frames["flows"]["phase"].cat.categories) if "phase" in frames["flows"] else []
        kind = RESULTS[RunKind.of(config)]
        return kind(config, summary, frames["flows"], frames["queues"], phases, frames["apps"])

    @_reads
    def find(self, prefix: str) -> str:
        """The one stored key that starts with `prefix` (a key's first digits, as `results`
        prints them); StoreError when none or several do."""
        if not self._has_tables() or not prefix.strip():
            raise StoreError(f"{self.path}: no run with key {prefix!r}")
        rows = self.con.execute(
            "SELECT key FROM runs WHERE starts_with(key, ?) LIMIT 2", [prefix.strip()]
        ).fetchall()
        if len(rows) != 1:
            what = "no run" if not rows else "more than one run"
            raise StoreError(f"{self.path}: {what} with a key starting {prefix!r}")
        return rows[0][0]

    @_reads
    def traces(self, key: str, progress: Callable[..., None] | None = None) -> Result:
        """Run `key` with its traces. A run stored without them (a sweep's, unless it was given
        `--traces`) is run again from its stored config, which gives the very traces it made
        the first time: runs are deterministic and the key names the engine that made it, so
        this works only with that engine, and the summary must come out the same (checked).
        A store opened for writing then keeps the traces, named by the key, as any run's.
        `progress` is the run's (`run_config`); Ctrl-C stops it and keeps nothing."""
        row = self.con.execute(
            "SELECT config, summary, traces, version FROM runs WHERE key = ?", [key]
        ).fetchone()
        if row is None:
            raise StoreError(f"{self.path}: no run with key {key!r}")
        config, summary, files, version = row
        if json.loads(files):
            found = self.result(key)
            if found is not None:
                return found
        engine = engine_version()
        if version != engine:
            raise StoreError(
                f"run {key} was stored by engine {version}, this is {engine}: its traces cannot "
                "be made again exactly; run its sweep again with --rerun --traces"
            )
        result = api.run_config(json.loads(config), progress)

        def same(summary: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in json.loads(json.dumps(summary)).items() if k != "wall_s"}

        if same(result.summary) != same(json.loads(summary)):
            raise StoreError(
                f"run {key}: running it again gave another summary than the stored one"
            )
        if not self.read_only:
            self.trace_dir.mkdir(parents=True, exist_ok=True)
            encoded = traces_of(result).items()
            stored = {name: self._write_trace(key, name, data) for name, data in encoded}
            self.con.execute("UPDATE runs SET traces = ? WHERE key = ?", [json.dumps(stored), key])
        return result

    def _write_trace(self, key: str, name: str, data: bytes) -> str:
        """One trace table's Parquet bytes as `<key>.<name>.parquet` (written to a temporary
        name, then renamed, so a file that exists is whole); returns the file's name."""
        file = f"{key}.{name}.parquet"
        tmp = self.trace_dir / f".{file}.{os.getpid()}.tmp"
        try:
            tmp.write_bytes(data)
        except OSError:
            tmp.unlink(missing_ok=True)  # a disk that filled keeps no half-written file
            raise
        os.replace(tmp, self.trace_dir / file)
        return file

    @_reads
    def runs(self) -> pd.DataFrame:
        """One row per run: key, source, scenario, seed, version, wall_s, stored_at, and the
        point's values as columns."""
        if not self._has_tables():
            return pd.DataFrame()
        frame = self.con.execute(
            "SELECT key, source, scenario, seed, version, point, wall_s, stored_at FROM runs "
            "ORDER BY stored_at, key"
        ).df()
        points = pd.DataFrame([json.loads(p or "{}") for p in frame.pop("point")])
        return pd.concat([frame, points], axis=1)

    @_reads
    def table(self, kind: str = "flows") -> pd.DataFrame:
        """One row per flow (`kind="flows"`) or swarm peer (`"peers"`) of every stored run:
        source, scenario, the point's values, seed, then the flow's (peer's) summary fields,
        the run's simulated time and events, and its key."""
        if kind not in ("flows", "peers"):
            raise ScenarioError(f"results: unknown table {kind!r} (accepted: flows, peers)")
        if not self._has_tables():
            return pd.DataFrame()
        ident = "flow" if kind == "flows" else "peer"
        rows = self.con.execute(
            f"SELECT r.source, r.scenario, r.point, r.seed, t.{ident}, t.fields, r.summary, r.key "
            f"FROM {kind} t JOIN runs r ON r.key = t.key ORDER BY r.stored_at, r.key, t.{ident}"
        ).fetchall()
        out = []
        for source, scenario, point, seed, _ident, fields, summary, key in rows:
            run = json.loads(summary)
            run_fields = {k: run[k] for k in ("sim_time_s", "events") if k in run}
            out.append(
                {
                    "source": source,
                    "scenario": scenario,
                    **json.loads(point or "{}"),
                    "seed": seed,
                    **json.loads(fields),
                    **run_fields,
                    "key": key,
                }
            )
        return pd.DataFrame(out)

    # --- writing -----------------------------------------------------------------------------

    def put(self, records: Iterable[Record], replace: bool = False) -> int:
        """Store completed runs, in one transaction; returns how many. `replace` first removes
        what the store holds under the same keys (a rerun); without it a run another process
        stored meanwhile is kept as it is. A write the disk refuses (full, read-only) is one
        StoreError naming the store; what earlier batches stored stays."""
        with self._refusal_named():
            return self._put(list(records), replace)

    @contextmanager
    def _refusal_named(self) -> Iterator[None]:
        """A write the disk or DuckDB refuses as one StoreError naming the store."""
        try:
            yield
        except OSError as e:
            why = e.strerror or str(e)
            raise StoreError(f"{self.path}: cannot store runs ({why})") from None
        except duckdb.Error as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise StoreError(f"{self.path}: cannot store runs ({first})") from None

    def _put(self, records: list[Record], replace: bool) -> int:
        if not records:
            return 0
        self.trace_dir.mkdir(parents=True, exist_ok=True)
        runs, flows, peers = [], [], []
        now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
        version = engine_version()
        for r in records:
            files = {name: self._write_trace(r.key, name, data) for name, data in r.traces.items()}
            config = r.config if isinstance(r.config, str) else canonical(r.config)
            runs.append(
                {
                    "key": r.key,
                    "source": r.source,
                    "scenario": str(r.summary.get("scenario", "")),
                    "seed": int(r.summary.get("seed") or 0),
                    "version": version,
                    "point": json.dumps(r.point),
                    "config": config,
                    "summary": json.dumps(r.summary),
                    "extra": json.dumps(r.extra),
                    "traces": json.dumps(files),
                    "wall_s": float(r.wall_s),
                    "task_s": float(r.task_s or r.wall_s),
                    "stored_at": now,
                }
            )
            for f in r.summary.get("flows") or []:
                fields = {("flow" if k == "id" else k): v for k, v in f.items() if _scalar(v)}
                row = {"key": r.key, "flow": f.get("id"), "cc": f.get("cc")}
                flows.append({**row, "fields": json.dumps(fields)})
            for i, p in enumerate(r.summary.get("peers") or []):
                fields = {k: v for k, v in p.items() if _scalar(v)}
                peers.append({"key": r.key, "peer": p.get("id", i), "fields": json.dumps(fields)})
        schemas = _schemas()
        tables = {
            "runs": pa.Table.from_pylist(runs, schema=schemas[0]),
            "flows": pa.Table.from_pylist(flows, schema=schemas[1]),
            "peers": pa.Table.from_pylist(peers, schema=schemas[2]),
        }
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            con.register("batch_keys", tables["runs"].select(["key"]))
            if replace:
                for name in ("flows", "peers", "runs"):
                    con.execute(f"DELETE FROM {name} WHERE key IN (SELECT key FROM batch_keys)")
            else:
                # Runs another process stored meanwhile (two sweeps of one point) stay as they
                # are: the same config and engine made them.
                have = con.execute("SELECT key FROM runs JOIN batch_keys USING (key)").fetchall()
                if have:
                    keep = sorted({r.key for r in records} - {k for (k,) in have})
                    new = pa.array(keep, type=pa.string())
                    tables = {
                        n: t.filter(pc.is_in(t["key"], value_set=new)) for n, t in tables.items()
                    }
            con.execute("DELETE FROM failed WHERE key IN (SELECT key FROM batch_keys)")
            con.unregister("batch_keys")
            for name, table in tables.items():
                if table.num_rows:
                    con.register(f"batch_{name}", table)
                    cols = ", ".join(table.column_names)
                    con.execute(f"INSERT INTO {name} ({cols}) SELECT {cols} FROM batch_{name}")
                    con.unregister(f"batch_{name}")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return len(records)

    def put_failed(self, failures: Iterable[Failure]) -> None:
        """Keep runs that could not be made, each with its error, in one transaction."""
        now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
        rows = [(f.key, f.source, json.dumps(f.point), f.config, f.error, now) for f in failures]
        if not rows:
            return
        with self._refusal_named():
            self.con.executemany("INSERT OR REPLACE INTO failed VALUES (?, ?, ?, ?, ?, ?)", rows)

    @_reads
    def failed(self) -> pd.DataFrame:
        """The runs that could not be made: key, source, point, config, error, failed_at."""
        if "failed" not in self._tables():
            return pd.DataFrame(columns=["key", "source", "point", "config", "error", "failed_at"])
        return self.con.execute("SELECT * FROM failed ORDER BY failed_at, key").df()


@cache
def _schemas() -> tuple[Any, Any, Any]:
    """The Arrow schemas of runs, flows and peers."""
    s, f64 = pa.string(), pa.float64()
    runs = pa.schema(
        [("key", s), ("source", s), ("scenario", s), ("seed", pa.uint64()), ("version", s)]
        + [("point", s), ("config", s), ("summary", s), ("extra", s), ("traces", s)]
        + [("wall_s", f64), ("task_s", f64), ("stored_at", pa.timestamp("us"))]
    )
    flows = pa.schema([("key", s), ("flow", pa.int32()), ("cc", s), ("fields", s)])
    peers = pa.schema([("key", s), ("peer", pa.int32()), ("fields", s)])
    return runs, flows, peers


def results(store: str | os.PathLike[str] | None = None, kind: str = "flows") -> pd.DataFrame:
    """Every run in a results store (default `out/results.duckdb`) as a DataFrame: one row per
    flow, or per swarm peer with `kind="peers"` (see `Store.table`)."""
    with Store(store or default_store(), read_only=True) as s:
        return s.table(kind)
