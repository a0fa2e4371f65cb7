"""`slowstart sweep` and `slowstart.sweep`: a scenario over a grid of overrides and seeds."""

import json
import sys

import pandas as pd
import pytest

from conftest import cli
from slowstart.loading.scenario import ScenarioError
from slowstart.running.api import run
from slowstart.running.sweeps import parse_seeds, parse_vary, points, sweep

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# 200 kB over 10 Mbps, 40 ms: a few round trips of slow start, a few ms of wall time per run.
SMALL = {
    "name": "small",
    "duration": "20s",
    "path": {"rate": "10Mbps", "rtt": "40ms", "buffer": "4bdp"},
    "flow": [{"cc": "reno", "size": "200kB"}],
}


def test_vary_values_keep_algorithm_parameters_together():
    axes = parse_vary(["flow.0.cc=aimd:a=15,b=0.3,reno", "path.buffer=1bdp", "path.buffer=2bdp"])
    assert axes == {"flow.0.cc": ["aimd:a=15,b=0.3", "reno"], "path.buffer": ["1bdp", "2bdp"]}
    assert parse_seeds("1-3,7") == [1, 2, 3, 7]
    grid = points({"a": ["x", "y"], "b": ["1"]}, [5, 6])
    assert grid == [
        {"a": "x", "b": "1", "seed": 5},
        {"a": "x", "b": "1", "seed": 6},
        {"a": "y", "b": "1", "seed": 5},
        {"a": "y", "b": "1", "seed": 6},
    ]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: parse_vary(["flow.0.cc"]), "expected KEY=V1,V2"),
        (lambda: parse_vary(["flow.0.cc=reno,,cubic"]), "an empty value"),
        (lambda: parse_vary(["flow.0.cc=reno,reno"]), "listed twice"),
        (lambda: parse_seeds("3-1"), "not a range"),
        (lambda: parse_seeds("one"), "expected seeds"),
        (lambda: sweep(SMALL, ["flow.0.nope=1,2"]), "flow.0.nope=1"),
        (lambda: sweep(SMALL, ["flow.0.cc=reno,warp"]), "accepted: reno"),
        (lambda: sweep(SMALL, ["flow.0.initcwnd=1,2"], jobs=0), "at least 1"),
    ],
)
def test_bad_input_names_the_field(call, message):
    with pytest.raises(ScenarioError, match=message):
        call()


def test_rows_are_the_single_runs_in_grid_order_for_any_number_of_processes():
    vary = {"flow.0.initcwnd": ["2", "10"], "path.buffer": ["0.5bdp", "4bdp"]}
    serial = sweep(SMALL, vary, seeds=[1, 2], jobs=1)
    parallel = sweep(SMALL, vary, seeds=[1, 2], jobs=2)
    pd.testing.assert_frame_equal(serial, parallel)
    assert len(serial) == 8
    assert list(serial.columns[:4]) == ["flow.0.initcwnd", "path.buffer", "seed", "flow"]
    assert serial["seed"].tolist() == [1, 2] * 4
    # A row is the flow summary of that point run alone.
    for i in (0, 5):
        row = serial.iloc[i]
        sets = [f"flow.0.initcwnd={row['flow.0.initcwnd']}", f"path.buffer={row['path.buffer']}"]
        alone = run(SMALL, set=sets, seed=int(row["seed"])).summary["flows"][0]
        assert row["completion_s"] == alone["completion_s"]
        assert row["retransmits"] == alone["retransmits"]


def test_a_larger_initial_window_helps_until_it_fills_the_pipe():
    # 137 segments through a 4-BDP (137-packet) buffer, the receiver's window out of the way:
    # each step of initcwnd up to the BDP (34 segments) saves round trips; past it the link
    # sets the pace, so 40 and 100 finish together. No drop anywhere.
    vary = {"flow.0.initcwnd": ["2", "10", "40", "100"]}
    rows = sweep(SMALL, vary, set=["flow.0.initrwnd=200"], jobs=1)
    assert rows["retransmits"].tolist() == [0, 0, 0, 0]
    two, ten, forty, hundred = rows["completion_s"].tolist()
    assert two > ten > forty
    assert hundred == pytest.approx(forty, abs=1e-3)


def test_several_scenarios_make_the_first_axis():
    deep = {**SMALL, "name": "deep", "path": {**SMALL["path"], "buffer": "8bdp"}}
    rows = sweep([SMALL, deep], {"flow.0.cc": ["reno", "cubic"]}, jobs=1)
    assert list(rows.columns[:3]) == ["scenario", "flow.0.cc", "seed"]
    assert rows["scenario"].tolist() == ["small", "small", "deep", "deep"]
    assert rows["cc"].tolist() == ["reno", "cubic"] * 2
    with pytest.raises(ScenarioError, match="named twice"):
        sweep([SMALL, SMALL], {"flow.0.cc": ["reno"]})


def test_cli_writes_every_run_and_a_plot(tmp_path):
    scenario = tmp_path / "small.toml"
    scenario.write_text(
        'name = "small"\nduration = "20s"\n'
        '[path]\nrate = "10Mbps"\nrtt = "40ms"\nbuffer = "0.5bdp"\n'
        '[[flow]]\ncc = "reno"\nsize = "200kB"\n'
    )
    out = tmp_path / "out"
    args = ["--vary", "flow.0.cc=reno,cubic", "--seeds", "1-2", "--out", str(out)]
    proc = cli("sweep", str(scenario), *args, "--metric", "retransmits")
    assert proc.returncode == 0, proc.stderr
    header = proc.stdout.splitlines()[0].split()
    assert header[:5] == ["flow.0.cc", "flow", "cc", "retransmits", "median"]
    rows = pd.read_parquet(out / "sweep.parquet")
    assert rows["flow.0.cc"].tolist() == ["reno", "reno", "cubic", "cubic"]
    assert (out / "sweep.png").read_bytes().startswith(PNG_MAGIC)
    listed = json.loads(cli("sweep", str(scenario), *args[:4], "--json").stdout)
    assert [r["cc"] for r in listed] == ["reno", "reno", "cubic", "cubic"]
    for metric in ("speed", "cc", "id"):  # unknown, text, an identity: refused before any run
        bad = cli("sweep", str(scenario), "--vary", "flow.0.cc=reno", "--metric", metric)
        assert bad.returncode == 2, bad.stderr
        assert bad.stderr.startswith(f"error: --metric {metric}: not a number"), bad.stderr
        assert "runs made" not in bad.stderr and "retransmits" in bad.stderr


def test_a_scenario_name_works_as_in_the_cli():
    rows = sweep("real-20mbps", {"flow.0.cc": ["reno"]}, duration="1s", jobs=1)
    assert rows["cc"].tolist() == ["reno"]
    assert rows["completion_s"].isna().all()  # 10 MB do not arrive in 1 s: no value


def test_no_submodule_shadows_a_lazily_loaded_function():
    # Importing a submodule sets the package's attribute of that name, so a `sweep.py` beside
    # the lazily loaded `slowstart.sweep` turned it into the module after its first use.
    import importlib
    import importlib.util

    import slowstart

    for name, module in slowstart._LAZY.items():
        assert importlib.util.find_spec(f"slowstart.{name}") is None, name
        importlib.import_module(module)
        assert getattr(slowstart, name) is getattr(sys.modules[module], name), name
    assert slowstart.sweep is sweep
