"""Sweep plans (TOML files) and sweeps on a Dask cluster."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import cli
from slowstart.loading.scenario import ScenarioError
from slowstart.running.sweepplan import load_plan, range_values, sample_box
from slowstart.running.sweeps import sweep

SMALL = {
    "name": "small",
    "duration": "20s",
    "path": {"rate": "10Mbps", "rtt": "40ms", "buffer": "4bdp"},
    "flow": [{"cc": "reno", "size": "200kB"}],
}


def test_ranges_lin_and_log_in_the_ends_unit():
    assert range_values("path.rtt", {"range": "10ms..200ms", "count": 5, "spacing": "log"}) == [
        "10ms",
        "21ms",
        "45ms",
        "95ms",
        "200ms",
    ]
    assert range_values("path.buffer", {"range": "0.5bdp..2bdp", "count": 4}) == [
        "0.5bdp",
        "1bdp",
        "1.5bdp",
        "2bdp",
    ]
    assert range_values("flow.0.initcwnd", {"range": "1..4", "count": 7}) == ["1", "2", "3", "4"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"range": "10ms-200ms", "count": 3}, "expected a range"),
        ({"range": "10ms..2s", "count": 3}, "same unit"),
        ({"range": "10ms..200ms"}, "count: expected an integer"),
        ({"range": "0ms..200ms", "count": 3, "spacing": "log"}, "above zero"),
        ({"range": "1..2", "count": 3, "spacing": "exp"}, "lin or log"),
    ],
)
def test_bad_ranges_name_the_axis(spec, message):
    with pytest.raises(ScenarioError, match=message):
        range_values("path.rtt", spec)


def test_sampling_a_box_is_reproducible_and_stays_inside():
    box = {"path.rtt": "10ms..200ms", "path.rate": {"range": "1Mbps..100Mbps", "spacing": "log"}}
    a, b = sample_box(box, 20, 7), sample_box(box, 20, 7)
    assert a == b != sample_box(box, 20, 8)
    rtts = [int(p["path.rtt"].removesuffix("ms")) for p in a]
    assert all(10 <= r <= 200 for r in rtts)


def test_a_plan_file_runs_as_its_sweep(tmp_path):
    scenario = tmp_path / "small.toml"
    scenario.write_text(
        'name = "small"\nduration = "20s"\n[path]\nrate = "10Mbps"\nrtt = "40ms"\n'
        'buffer = "4bdp"\n[[flow]]\ncc = "reno"\nsize = "200kB"\n'
    )
    plan = tmp_path / "plan.toml"
    plan.write_text(
        'scenario = "small.toml"\nseeds = "1-2"\nmetrics = ["completion_s", "retransmits"]\n'
        '[axes]\n"flow.0.initcwnd" = { range = "2..10", count = 3 }\n'
        '[sample]\ncount = 2\nseed = 3\nbox = { "path.rtt" = "20ms..80ms" }\n'
    )
    loaded = load_plan(plan)
    assert loaded.axes == {"flow.0.initcwnd": ["2", "6", "10"]}
    assert len(loaded.grid()) == 3 * 2 * 2
    store = tmp_path / "r.duckdb"
    done = cli("sweep", str(plan), "--store", str(store), "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert "completion_s median" in done.stdout and "retransmits median" in done.stdout
    assert "12 runs made, 0 read" in done.stderr
    rows = pd.DataFrame(json.loads(cli("sweep", str(plan), "--store", str(store), "--json").stdout))
    assert list(rows.columns[:3]) == ["flow.0.initcwnd", "path.rtt", "seed"]
    assert len(rows) == 12
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'scenario = "small.toml"\n[axes]\n"path.rtt" = { range = "1ms..2s", count = 2 }\n'
    )
    done = cli("sweep", str(bad))
    assert done.returncode == 2 and "axes.path.rtt: both ends" in done.stderr


def test_same_rows_in_process_in_a_pool_and_on_a_local_dask_cluster(tmp_path):
    vary = {"flow.0.initcwnd": ["2", "10", "40"], "path.buffer": ["0.5bdp", "4bdp"]}
    serial = sweep(SMALL, vary, seeds=[1, 2], jobs=1)
    pool = sweep(SMALL, vary, seeds=[1, 2], jobs=2)
    store = tmp_path / "r.duckdb"
    dask = sweep(SMALL, vary, seeds=[1, 2], cluster="local:2", store=store)
    pd.testing.assert_frame_equal(serial, pool)
    pd.testing.assert_frame_equal(serial, dask)
    assert dask.attrs == {"runs": 12, "stored": 0}
    with pytest.raises(ScenarioError, match="expected local:N or tcp://"):
        sweep(SMALL, vary, cluster="mars:2")
