"""The `slowstart` command as a user runs it: exit codes, one-line errors, outputs."""

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, cli

SATELLITE = str(ROOT / "scenarios" / "satellite.toml")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_one_line_error(proc, status: int = 2) -> str:
    assert proc.returncode == status, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    assert proc.stdout == ""
    return lines[0]


def test_missing_file():
    line = assert_one_line_error(cli("run", "no/such/file.toml"))
    assert line == "error: no/such/file.toml: no such file"


def test_malformed_toml(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[path\nrate = 1\n')
    line = assert_one_line_error(cli("run", str(bad)))
    assert "bad.toml: invalid TOML" in line and "line 2" in line


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--set", "flow.0.mss=abc"], 'error: flow.0.mss: expected a positive integer, got "abc"'),
        (["--set", "path.rate=-5Mbps"], 'error: path.rate: must not be negative, got "-5Mbps"'),
        (["--set", "path.buffer=3 parsecs"], "error: path.buffer: expected a buffer such as"),
        (["--set", "nope=1"], 'error: --set nope=1: unknown key "nope" in the scenario'),
        (["--set", "flow.0.colour=red"], 'error: --set flow.0.colour=red: unknown key "colour"'),
        (["--cc", "warp"], 'error: flow.0.cc: unknown algorithm "warp" (accepted: reno'),
        (["--cc", "reno:beta=0.7"], 'error: flow.0.cc: reno has no parameter "beta"'),
        (["--duration=-1s"], 'error: duration: must not be negative, got "-1s"'),
        (["--seed=-3"], "error: seed: expected an integer >= 0, got -3"),
        (["--seed", "abc"], "error: argument --seed: invalid int value: 'abc'"),
    ],
)
def test_bad_overrides(args, expected):
    line = assert_one_line_error(cli("run", SATELLITE, *args))
    assert line.startswith(expected), line


def test_error_found_by_the_core_is_one_line_too(tmp_path):
    # Valid to the loader, but there is no route from a to c: the core rejects it.
    scenario = tmp_path / "islands.toml"
    scenario.write_text(
        'duration = "1s"\nnodes = ["a", "b", "c", "d"]\n'
        '[[link]]\na = "a"\nb = "b"\nrate = "1Mbps"\ndelay = "1ms"\nbuffer = "10pkt"\n'
        '[[link]]\na = "c"\nb = "d"\nrate = "1Mbps"\ndelay = "1ms"\nbuffer = "10pkt"\n'
        '[[flow]]\nsrc = "a"\ndst = "c"\n'
    )
    assert_one_line_error(cli("run", str(scenario)))


@pytest.mark.parametrize(
    "args",
    [[], ["fly"], ["run"], ["reproduce", "nobody"], ["run", SATELLITE, "--bogus"]],
)
def test_usage_errors_are_one_line(args):
    assert_one_line_error(cli(*args))


def test_list_shows_scenarios_and_algorithms():
    proc = cli("list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    scenario_lines = {line.split()[0]: line for line in lines if line.startswith("  ")}
    assert "Floyd's early slow-start loss" in scenario_lines["lfn-early-loss"]
    assert "100 MB transfer" in scenario_lines["satellite"]
    assert "RFC 5681" in scenario_lines["reno"]
    assert lines.index("algorithms:") > lines.index(
        next(x for x in lines if x.startswith("scenarios"))
    )
    # Each queue discipline with the core's defaults, as a scenario writes them.
    start = next(i for i, x in enumerate(lines) if x.startswith("queue disciplines"))
    queues = {line.split()[0]: line for line in lines[start + 1 :]}
    assert list(queues) == ["droptail", "codel", "fq_codel", "pie", "red", "dualpi2"]
    assert 'target = "5ms", interval = "100ms", mtu = "1514B"' in queues["codel"]
    assert 'memory_limit = "32MiB"' in queues["fq_codel"]
    assert "alpha = 0.16015625, beta = 3.19921875" in queues["dualpi2"]


def test_list_finds_scenarios_from_another_directory(tmp_path):
    proc = cli("list", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "lfn-early-loss" in proc.stdout


def test_list_prefers_scenarios_under_the_working_directory(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "mine.toml").write_text('description = "my own"\n')
    proc = cli("list", cwd=tmp_path)
    assert "mine  my own" in proc.stdout
    assert "lfn-early-loss" not in proc.stdout


def test_run_json_prints_exactly_the_summary():
    proc = cli("run", SATELLITE, "--json", "--duration", "5s", "--seed", "7")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)  # one object, nothing else on stdout
    assert summary["scenario"] == "satellite" and summary["seed"] == 7
    assert summary["sim_time_s"] <= 5.0
    assert [f["cc"] for f in summary["flows"]] == ["reno"]


def test_run_by_scenario_name_prints_a_table():
    proc = cli("run", "satellite", "--duration", "3s", "--cc", "reno")
    assert proc.returncode == 0, proc.stderr
    header = next(line for line in proc.stdout.splitlines() if line.startswith("flow "))
    for column in ("cc", "goodput", "ss_exit_s", "window_cap_s", "max_cwnd"):
        assert column in header
    assert any(line.startswith("bottleneck ") for line in proc.stdout.splitlines())


def test_run_out_writes_the_files(tmp_path):
    out = tmp_path / "sat"
    proc = cli(
        "run", SATELLITE, "--set", "flow.0.initcwnd=20", "--duration", "4s", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scenario"] == "satellite"
    flows = pd.read_parquet(out / "flows.parquet")
    assert flows["cwnd_bytes"].iloc[0] == 20 * 1460
    assert set(flows["phase"].cat.categories) >= {"slow_start", "congestion_avoidance"}
    queues = pd.read_parquet(out / "queues.parquet")
    assert set(queues["link"].unique()) <= {link["name"] for link in summary["links"]}
    assert (out / "cwnd.png").read_bytes()[:8] == PNG_MAGIC


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "slowstart"
    assert script.exists()
