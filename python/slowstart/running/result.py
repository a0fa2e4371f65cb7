"""A run's result, by its kind: what every run has (the config, the summary, the trace frames,
equality and the notebook view) in `Result`, a run of flows in `FlowsResult`; a BitTorrent
swarm's is `slowstart.running.swarm_results.SwarmResult`.

A run's DataFrames are built from the core's columns when first read, so reading only
`summary` imports neither numpy nor pandas.
"""

from __future__ import annotations

import base64
import enum
import html
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from slowstart import lazy
from slowstart.paths import output_folder
from slowstart.plot import plot_cwnd
from slowstart.tables import format_summary, summary_head, summary_tables

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

pd = lazy.module("pandas")


class RunKind(enum.Enum):
    """What a run is of: flows over a path or a topology, or a BitTorrent swarm's peers (the
    core's `RunKind`, crates/slowstart-sim/src/summary.rs)."""

    FLOWS = "flows"
    SWARM = "swarm"

    @classmethod
    def of(cls, config: dict[str, Any]) -> RunKind:
        """The kind of run a canonical config makes: a swarm's if it has a `swarm` table
        (slowstart-config's SimConfig holds one or the flows)."""
        return cls.SWARM if config.get("swarm") is not None else cls.FLOWS


class _Pending:
    """A DataFrame not built yet: `build(*args)`, called on first use (picklable)."""

    def __init__(self, build: Callable[..., pd.DataFrame], *args: Any) -> None:
        self.build, self.args = build, args


def _empty_frame() -> pd.DataFrame:
    return pd.DataFrame()


class Result:
    """One run: `summary` (dict), `flows`, `queues` and `apps` (DataFrames), and the config;
    `text()`, `plot()` and `save()` as its kind shows it (FlowsResult, SwarmResult).

    Constructed as `FlowsResult(config, summary, flows, queues, phase_names=[],
    apps=DataFrame())`, a swarm's as SwarmResult.
    """

    kind: ClassVar[RunKind]
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
        return (
            f"<{type(self).__name__} {s.get('scenario')}: {self._what()}, "
            f"{s.get('sim_time_s', 0):.3f} s simulated, seed {s.get('seed')}>"
        )

    def _what(self) -> str:
        """What the run holds, for its repr ("2 flows")."""
        raise NotImplementedError

    def _html_body(self) -> str:
        """The summary as HTML, for the notebook view."""
        return f"<pre>{html.escape(self.text())}</pre>"

    def _repr_html_(self) -> str:
        """In a notebook: the summary's tables (as `text()`, for flows as HTML tables) and the
        figure of `plot()`, inline."""
        png = io.BytesIO()
        self.plot().savefig(png, format="png", dpi=80)
        figure = base64.b64encode(png.getvalue()).decode("ascii")
        image = f'<img alt="cwnd" src="data:image/png;base64,{figure}"/>'
        return f"<div>{self._html_body()}{image}</div>"

    def text(self) -> str:
        """The summary as `slowstart run` prints it."""
        raise NotImplementedError

    def plot(self, title: str | None = None) -> Figure:
        """The run's figure."""
        raise NotImplementedError

    def save(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write the run's files into `out_dir`; the paths written."""
        raise NotImplementedError

    def save_summary(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write summary.json into `out_dir` (made if missing); its path."""
        out = output_folder(out_dir, "out_dir")
        out.mkdir(parents=True, exist_ok=True)
        path = out / "summary.json"
        path.write_text(json.dumps(self.summary, indent=2) + "\n", encoding="utf-8")
        return path


class FlowsResult(Result):
    """A run of flows: one panel per flow in `plot()`, the flows' and links' tables in
    `text()`."""

    kind = RunKind.FLOWS

    def _what(self) -> str:
        flows = self.summary.get("flows", [])
        return f"{len(flows)} flow{'s' * (len(flows) != 1)}"

    def _html_body(self) -> str:
        return f"<p>{html.escape(summary_head(self.summary))}</p>" + "".join(
            _html_table(headers, rows) for headers, rows in summary_tables(self.summary)
        )

    def text(self) -> str:
        return format_summary(self.summary)

    def plot(self, title: str | None = None) -> Figure:
        """cwnd and bytes in flight against time, one panel per flow, phases shaded."""
        return plot_cwnd(self.flows, title=title or self.summary.get("scenario"))

    def save(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write summary.json, flows.parquet, queues.parquet, cwnd.png (and apps.parquet when
        a flow has a BitTorrent application) into `out_dir`."""
        paths = [self.save_summary(out_dir)]
        out = paths[0].parent
        paths += [out / n for n in ("flows.parquet", "queues.parquet", "cwnd.png")]
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
