"""Traces streamed to disk as a run goes (`slowstart run --out DIR --stream`,
`slowstart.run(stream=DIR)`): every sampled row kept, in memory that does not grow with the
run's length (issue #43: a 24-hour simulated run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import slowstart

FAULTS = pytest.mark.faults

# A day of CUBIC on a 2 Mbps path with random loss, sampled every 100 ms: some 830 000 flow
# rows and 3.2 million queue rows.
DAY = """
name = "day"
duration = "24h"
seed = 1
[path]
rate = "2Mbps"
rtt = "100ms"
buffer = "1bdp"
loss = "0.01%"
[[flow]]
cc = "cubic"
[trace]
flow_interval = "100ms"
queue_interval = "100ms"
"""


def test_a_streamed_run_writes_the_frames_the_run_returns(tmp_path: Path) -> None:
    """Under trace.max_rows the streamed files hold exactly the frames of a run kept in
    memory; the result reads them back from there."""
    kept = slowstart.run("lfn-early-loss", duration="60s")
    streamed = slowstart.run("lfn-early-loss", duration="60s", stream=tmp_path)
    assert len(kept.flows) > 1000
    for name in ("flows", "queues"):
        on_disk = pd.read_parquet(tmp_path / f"{name}.parquet")
        assert on_disk.equals(getattr(kept, name)), name
        assert streamed.__getattribute__(name).equals(on_disk), name
    assert not (tmp_path / "apps.parquet").exists()  # no rows, no file, as Result.save
    assert streamed.summary["flows"] == kept.summary["flows"]


def test_stream_needs_out_and_is_not_for_swarms(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "slowstart", "run", "lfn-early-loss", "--stream", "--quiet"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        "error: --stream: needs --out DIR, the folder the traces go to"
    ]
    with pytest.raises(ValueError, match="^stream: traces of swarm scenarios are not streamed"):
        slowstart.run("swarm-adsl", stream=tmp_path, duration="1s")


def peak_rss_kb(cmd: list[str]) -> int:
    """The peak resident memory of `cmd` run to its end (kB, as getrusage reports it)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, proc.stderr.read() if proc.stderr else ""
    return usage.ru_maxrss


@FAULTS
def test_a_day_streamed_keeps_every_row_in_the_memory_of_six_hours(tmp_path: Path) -> None:
    """24 hours simulated: the streamed files equal the frames of the same run kept whole in
    memory (trace.max_rows raised so that nothing is thinned), and the streamed run's peak
    memory is that of a 6-hour one (measured: 167.5 and 167.6 MB; kept whole, 622 MB)."""
    scenario = tmp_path / "day.toml"
    scenario.write_text(DAY)
    run = [sys.executable, "-m", "slowstart", "run", str(scenario), "--quiet", "--json"]
    six = peak_rss_kb([*run, "--duration", "6h", "--out", str(tmp_path / "six"), "--stream"])
    day = peak_rss_kb([*run, "--out", str(tmp_path / "day"), "--stream"])
    whole = peak_rss_kb(
        [*run, "--out", str(tmp_path / "whole"), "--set", "trace.max_rows=100000000"]
    )
    assert day < six * 1.05, (six, day)
    assert whole > day + 200_000, (whole, day)  # the rows the stream did not keep
    summary = json.loads((tmp_path / "day" / "summary.json").read_text())
    assert summary["sim_time_s"] == 86400.0
    for name in ("flows", "queues"):
        streamed = pd.read_parquet(tmp_path / "day" / f"{name}.parquet")
        assert streamed.equals(pd.read_parquet(tmp_path / "whole" / f"{name}.parquet")), name
    assert len(streamed) > 3_000_000  # every link's samples over the day: none thinned
