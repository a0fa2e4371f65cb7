"""The core's tables (a run's traces, as `_core.run` returns them) decoded once into arrays,
and those arrays as a DataFrame or, for the results store, a pyarrow Table; the core's names
(`_core.schema()`) read once.

numpy and pandas are imported when a table is first decoded, not before: a caller that reads
only a run's summary (`slowstart run --json`) never loads them.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart import lazy

if TYPE_CHECKING:
    import numpy
    import pandas as pd

_core = lazy.module("slowstart._core")
np = lazy.module("numpy")
pa = lazy.module("pyarrow")
pq = lazy.module("pyarrow.parquet")
pd = lazy.module("pandas")


UNSET = 2**64 - 1  # the core's "no value" in a u64 column (np.iinfo(np.uint64).max)

# A table as the core returns it: column name -> (little-endian bytes, numpy dtype, whether
# u64::MAX means "no value", the name list its codes index or None). The core declares the
# columns (crates/slowstart-config/src/trace.rs); `decode` reads any of them.
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


def decode(
    table: Table, names: dict[str, list[str]]
) -> dict[str, numpy.ndarray | tuple[numpy.ndarray, list[str]]]:
    """A trace table's columns by their shown names: `*_ns` columns as seconds, "no value" as
    NaN, a column of codes as (codes, the names from `names` they index: "phases", "links")."""
    columns: dict[str, Any] = {}
    for name, (data, dtype, unset, codes) in table.items():
        dt = np.dtype(dtype)
        values = np.frombuffer(data, dtype=dt).astype(dt.newbyteorder("="))
        if unset:
            column = values.astype(np.float64)
            column[values == UNSET] = np.nan
            columns[name] = column
        elif codes is not None:
            columns[name] = (values, list(names[codes]))
        elif name.endswith("_ns"):
            columns[shown_name(name)] = values / 1e9
        else:
            columns[name] = values
    return columns


def frame(table: Table, names: dict[str, list[str]]) -> pd.DataFrame:
    """A trace table as a DataFrame (`decode`), codes as categories."""
    return pd.DataFrame(
        {
            name: pd.Categorical.from_codes(c[0].astype(np.int64), categories=c[1])
            if isinstance(c, tuple)
            else c
            for name, c in decode(table, names).items()
        }
    )


def arrow_table(table: Table, names: dict[str, list[str]]) -> Any:
    """The same table as `frame` makes, as a pyarrow Table built straight from the columns
    (no pandas): what the results store writes to Parquet, several times faster."""
    return pa.table(
        {
            name: pa.DictionaryArray.from_arrays(
                pa.array(c[0].astype(np.int32)), pa.array(c[1], pa.string())
            )
            if isinstance(c, tuple)
            else pa.array(c)
            for name, c in decode(table, names).items()
        }
    )


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
