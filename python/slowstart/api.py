"""Run a scenario through the core and return its summary and traces as DataFrames."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from slowstart.scenario import load

if TYPE_CHECKING:
    from matplotlib.figure import Figure

UNSET = np.iinfo(np.uint64).max


def _columns(table: dict[str, tuple[bytes, str]]) -> dict[str, np.ndarray]:
    """The core's (little-endian bytes, dtype) columns as native numpy arrays."""
    out = {}
    for name, (data, dtype) in table.items():
        dt = np.dtype(dtype)
        out[name] = np.frombuffer(data, dtype=dt).astype(dt.newbyteorder("="))
    return out


def flows_frame(table: dict[str, tuple[bytes, str]], phase_names: list[str]) -> pd.DataFrame:
    c = _columns(table)
    ssthresh = c["ssthresh_bytes"].astype(np.float64)
    ssthresh[c["ssthresh_bytes"] == UNSET] = np.nan
    return pd.DataFrame(
        {
            "t_s": c["t_ns"] / 1e9,
            "flow": c["flow"],
            "cwnd_bytes": c["cwnd_bytes"],
            "ssthresh_bytes": ssthresh,
            "inflight_bytes": c["inflight_bytes"],
            "srtt_s": c["srtt_ns"] / 1e9,
            "delivered_bytes": c["delivered_bytes"],
            "phase": pd.Categorical.from_codes(
                c["phase"].astype(np.int16), categories=list(phase_names)
            ),
        }
    )


def queues_frame(table: dict[str, tuple[bytes, str]], link_names: list[str]) -> pd.DataFrame:
    c = _columns(table)
    return pd.DataFrame(
        {
            "t_s": c["t_ns"] / 1e9,
            "link": pd.Categorical.from_codes(c["link"].astype(np.int64), categories=link_names),
            "queue_bytes": c["queue_bytes"],
            "queue_packets": c["queue_packets"],
        }
    )


def apps_frame(table: dict[str, tuple[bytes, str]]) -> pd.DataFrame:
    """Application series (BitTorrent flows): the downloader's request queue."""
    c = _columns(table)
    return pd.DataFrame(
        {
            "t_s": c["t_ns"] / 1e9,
            "flow": c["flow"],
            "outstanding_requests": c["outstanding_requests"],
            "target_queue": c["target_queue"],
            "download_rate_bps": c["download_rate_bps"],
        }
    )


@dataclass
class Result:
    """One run: `summary` (dict), `flows`, `queues` and `apps` (DataFrames), and the config."""

    config: dict[str, Any]
    summary: dict[str, Any]
    flows: pd.DataFrame
    queues: pd.DataFrame
    phase_names: list[str] = field(default_factory=list)
    apps: pd.DataFrame = field(default_factory=pd.DataFrame)

    def plot(self, title: str | None = None) -> Figure:
        """cwnd and bytes in flight against time, one panel per flow, phases shaded."""
        from slowstart.plot import plot_cwnd

        return plot_cwnd(self.flows, title=title or self.summary.get("scenario"))

    def save(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write summary.json, flows.parquet, queues.parquet, cwnd.png (and apps.parquet when
        a flow has a BitTorrent application) into `out_dir`."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / n for n in ("summary.json", "flows.parquet", "queues.parquet", "cwnd.png")]
        paths[0].write_text(json.dumps(self.summary, indent=2) + "\n", encoding="utf-8")
        self.flows.to_parquet(paths[1], index=False)
        self.queues.to_parquet(paths[2], index=False)
        self.plot().savefig(paths[3], dpi=120)
        if len(self.apps):
            paths.append(out / "apps.parquet")
            self.apps.to_parquet(paths[-1], index=False)
        return paths


def run_config(config: dict[str, Any]) -> Result:
    """Run an already canonical config."""
    from slowstart import _core

    start = time.perf_counter()
    out = _core.run(json.dumps(config))
    wall_s = time.perf_counter() - start
    summary = json.loads(out["summary"])
    summary.setdefault("wall_s", wall_s)
    links = [link["name"] for link in summary["links"]]
    return Result(
        config=config,
        summary=summary,
        flows=flows_frame(out["flows"], out["phase_names"]),
        queues=queues_frame(out["queues"], links),
        phase_names=list(out["phase_names"]),
        apps=apps_frame(out["apps"]),
    )


def run(
    scenario: str | os.PathLike[str] | dict[str, Any],
    *,
    cc: str | dict[str, Any] | None = None,
    set: list[str] | tuple[str, ...] | str = (),  # noqa: A002 - the documented keyword
    seed: int | None = None,
    duration: str | int | float | None = None,
) -> Result:
    """Load a scenario (TOML path or dict), apply overrides, run it.

    `cc` replaces every flow's algorithm ("reno", "lss:max_ssthresh=100"); `set` is a list of
    "key=value" overrides such as "flow.0.initcwnd=20"; `seed` and `duration` ("10s") override
    the scenario's. Bad input raises ValueError naming the field.
    """
    return run_config(load(scenario, cc=cc, set=set, seed=seed, duration=duration))
