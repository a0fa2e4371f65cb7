"""`slowstart score`: each metric on a constructed case with a known value, the seeds' findings
through the scorecard, the store's reuse, the suite file's errors and the page in Chromium."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, chromium, cli, foreground, needs_browser
from slowstart.reports.score import column, default_controllers, score
from slowstart.reports.score_metrics import (
    METRICS,
    Run,
    harm_delay,
    harm_throughput,
    incumbent_numbers,
)
from slowstart.reports.score_suite import load_suite, select
from slowstart.running.api import FlowsResult, Result, run

# A 12 Mbps, 100 ms path: 100 packets of 1500 bytes in flight fill it (BDP 150 000 bytes); its
# 10-BDP buffer first overflows in slow start's eighth round, after what these tests read.
RATE, RTT, BDP = 12e6, 0.1, 150_000
PATH = {
    "name": "path",
    "duration": "3s",
    "path": {"rate": "12Mbps", "rtt": "100ms", "buffer": "10bdp"},
    "flow": [{"cc": "reno", "delayed_ack": False}],
}


def measured(scenario: dict, name: str, **run_kw: object) -> float | None:
    return METRICS[name].value(Run(run(scenario, **run_kw), 0))  # type: ignore[arg-type]


# --- each metric on a constructed case ---------------------------------------------------------


def test_time_to_90_is_reno_doubling_until_the_gap_of_its_last_partial_round_leaves_the_window():
    # Every ACK (one per segment) releases two segments, so each round's packets cross the
    # bottleneck back to back: round k (10 x 2^k segments, 10 x 2^k ms of line time) keeps it
    # busy for that long, then it idles until the next round starts one RTT after this one.
    # Round 3 (80 segments) is busy 80 ms of 100; from round 4 (160) it never idles. The
    # goodput over the last RTT reaches 90% of 12 Mbps, 92.5% of the payload line rate
    # (1460 / 1500 of it), once round 3's 20 ms gap is 7.5 ms from leaving the window: 192.5 ms
    # after round 3's first ACK. That ACK comes 5 RTTs after the start (the handshake, then
    # rounds 0 to 3), each round later by one packet's time at the bottleneck (1 ms).
    first_ack_round_3 = 5 * RTT + 4 * 0.001
    expected = first_ack_round_3 + 0.1925
    assert measured(PATH, "time_to_90_s") == pytest.approx(expected, abs=0.003)


def test_exit_cwnd_is_the_window_when_three_sacks_mark_the_early_loss():
    # Segment 40 is dropped. Slow start grows cwnd by each segment an ACK delivers,
    # cumulatively or by SACK (Linux's acked_sacked): the 39 before the hole and the first two
    # SACKed above it, 10 + 39 + 2 = 51 segments; the third SACK marks 40 lost first (RFC 6675
    # DupThresh, RACK's three SACKs), which ends slow start at 51.
    early_loss = {**PATH, "path": {**PATH["path"], "drop": [{"flow": 0, "seq": 40}]}}
    assert measured(early_loss, "exit_cwnd_bdp") == pytest.approx(51 * 1460 / BDP)
    assert measured(early_loss, "overshoot_drops") == 1


def test_queue_delay_of_a_window_twice_the_pipe_is_one_rtt():
    # A 200-segment window on a 100-packet pipe and no loss: 100 packets wait in the queue, a
    # standing 100 ms at 12 Mbps; slow start never ends (no loss), so the peak is over the run.
    capped = {
        **PATH,
        "duration": "60s",
        "flow": [{"cc": "reno", "delayed_ack": False, "max_window": "200seg"}],
    }
    result = run(capped)
    peak = METRICS["peak_queue_delay_s"].value(Run(result, 0))
    mean = METRICS["queue_delay_s"].value(Run(result, 0))
    assert peak == pytest.approx(RTT, rel=0.02)
    # The mean over the run: the standing queue less the first second's climb to it.
    assert mean == pytest.approx(RTT, rel=0.03)
    assert mean < peak
    assert METRICS["overshoot_drops"].value(Run(result, 0)) == 0


def test_a_transfer_in_one_flight_completes_in_the_ideal_time():
    # initcwnd and initrwnd of 100 segments: 50 kB leaves at once after the handshake, so the
    # completion is the ideal's: 1 RTT handshake + wire bytes at 12 Mbps + RTT/2.
    one_flight = {
        **PATH,
        "flow": [{"cc": "reno", "size": "50kB", "initcwnd": 100, "initrwnd": 100}],
    }
    result = run(one_flight)
    wire = (50_000 + 35 * 40) * 8 / RATE  # 35 segments of at most 1460 bytes
    assert result.summary["flows"][0]["completion_s"] == pytest.approx(1.5 * RTT + wire, abs=2e-4)
    assert METRICS["completion_x_ideal"].value(Run(result, 0)) == pytest.approx(1.0, abs=0.002)
    # A web object waits for its request: a whole RTT more than the handshake, not half.
    web = {
        **PATH,
        "flow": [
            {
                "cc": "reno",
                "initcwnd": 100,
                "initrwnd": 100,
                "app": {"kind": "web", "response": "50kB"},
            }
        ],
    }
    assert measured(web, "completion_x_ideal") == pytest.approx(1.0, abs=0.01)
    goodput = METRICS["goodput_bps"].value(Run(result, 0))
    assert goodput == pytest.approx(50_000 * 8 / result.summary["flows"][0]["completion_s"])


def _synthetic(rate_bps: float, rtt_s: float) -> Result:
    """One flow delivering at `rate_bps` with a smoothed RTT of `rtt_s`, sampled every 0.1 s
    for 10 s."""
    t = [i / 10 for i in range(101)]
    flows = pd.DataFrame(
        {
            "t_s": t,
            "flow": 0,
            "delivered_bytes": [rate_bps / 8 * x for x in t],
            "srtt_s": rtt_s,
            "cwnd_bytes": 1.0,
        }
    )
    config = {"flows": [{"start_ns": 0}, {"start_ns": 2_000_000_000}], "duration_ns": 10**10}
    summary = {"sim_time_s": 10.0, "flows": [{"completion_s": None}, {"completion_s": None}]}
    return FlowsResult(config, summary, flows, pd.DataFrame())


def test_harm_is_ware_et_als_relative_loss_of_the_incumbent():
    # Alone the incumbent delivers 10 Mbps at 50 ms; with the newcomer 4 Mbps at 80 ms:
    # throughput harm (10 - 4) / 10 = 0.6, delay harm (80 - 50) / 80 = 0.375.
    alone = incumbent_numbers(_synthetic(10e6, 0.05), 0, 2.0, 10.0)
    assert alone == {"throughput_bps": pytest.approx(10e6), "rtt_s": pytest.approx(0.05)}
    shared = Run(_synthetic(4e6, 0.08), flow=1, incumbent=0, alone=alone)
    assert harm_throughput(shared) == pytest.approx(0.6)
    assert harm_delay(shared) == pytest.approx(0.375)
    same = Run(_synthetic(10e6, 0.05), flow=1, incumbent=0, alone=alone)
    assert harm_throughput(same) == pytest.approx(0.0) and harm_delay(same) == pytest.approx(0.0)


def test_every_metric_has_a_unit_a_direction_and_a_definition():
    for m in METRICS.values():
        assert m.unit and m.better_text, m.name
        assert len(m.doc) > 40, m.name


def test_the_documentation_lists_every_metric_with_its_unit_and_direction():
    text = (ROOT / "docs" / "scorecard.md").read_text()
    for m in METRICS.values():
        row = rf"\| `{m.name}` \| {re.escape(m.unit)}[^|]* \| {m.better_text} \|"
        assert re.search(row, text), m.name


# --- the seeds' findings, through the scorecard ------------------------------------------------


def _scored(tmp_path: Path, keys: list[str], ccs: list[str]):
    card = score(select(load_suite(), keys), ccs, store=tmp_path / "s.duckdb", jobs=1)
    return card, {
        (p.key, m.name): col
        for p, m, col in [
            (p, METRICS[n], column(card, p, METRICS[n]))
            for p in card.suite.paths
            for n in p.metrics
        ]
    }


def test_limited_slow_start_drops_fewer_packets_than_standard_on_floyds_path(tmp_path: Path):
    # net100: "Using Floyd's modified slow-start we eliminated losses" (PSC to LBL).
    _card, cols = _scored(tmp_path, ["floyd-burst"], ["reno", "lss"])
    drops = cols[("floyd-burst", "overshoot_drops")]
    assert drops["lss"].median < drops["reno"].median
    assert drops["lss"].best and not drops["reno"].best


def test_hystart_pb_reaches_full_rate_on_the_satellite_sooner_than_hystart(tmp_path: Path):
    # picoquic: HyStart 8.9 s, the peak-bandwidth start 5.2 s for the 100 MB.
    _card, cols = _scored(tmp_path, ["satellite"], ["cubic:slow_start=hystart", "hystart-pb"])
    full = cols[("satellite", "time_to_90_s")]
    assert full["hystart-pb"].median < full["cubic:slow_start=hystart"].median
    assert full["hystart-pb"].rank == 1


def test_ledbat_harms_an_incumbent_less_than_reno(tmp_path: Path):
    # RFC 6817: LEDBAT yields to TCP where the queue can exceed its 100 ms target.
    _card, cols = _scored(tmp_path, ["newcomer"], ["reno", "ledbat"])
    for name in ("harm_throughput", "harm_delay"):
        harm = cols[("newcomer", name)]
        assert harm["ledbat"].median < harm["reno"].median, name
    assert cols[("newcomer", "harm_throughput")]["reno"].median > 0.1


def test_reno_on_the_random_loss_path_gets_mathis_rate(tmp_path: Path):
    # Mathis et al. (CCR 1997): rate = C x MSS / (RTT x sqrt(p)), C = sqrt(3/2) with cwnd
    # grown by bytes ACKed (RFC 3465, so delayed ACKs do not slow it): 1.43 Mbps at 1%, 100 ms.
    _card, cols = _scored(tmp_path, ["loss-1pct"], ["reno"])
    mathis = (3 / 2) ** 0.5 * 1460 * 8 / (0.1 * 0.01**0.5)
    goodput = cols[("loss-1pct", "goodput_bps")]["reno"]
    assert len(goodput.values) == 5 and goodput.low < goodput.high
    assert goodput.median == pytest.approx(mathis, rel=0.25)


# --- small suites through the command ---------------------------------------------------------

SMALL_SUITE = """
version = 1
name = "small"

[[path]]
key = "short"
title = "A 200 kB transfer, 10 Mbps, 40 ms"
source = "a test"
metrics = ["completion_s", "goodput_bps", "exit_cwnd_bdp"]
figure = "1s"

[path.scenario]
name = "short"
duration = "5s"
path = { rate = "10Mbps", rtt = "40ms", buffer = "1bdp" }
flow = [{ cc = "reno", size = "200kB" }]

[[path]]
key = "lossy"
title = "Random loss, three seeds"
source = "a test"
seeds = [1, 2, 3]
metrics = ["goodput_bps"]
figure = "1s"

[path.scenario]
name = "lossy"
duration = "3s"
path = { rate = "10Mbps", rtt = "40ms", buffer = "1bdp", loss = "2%" }
flow = [{ cc = "reno" }]
"""


@pytest.fixture
def small_suite(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_SUITE)
    return path


def test_a_second_score_with_one_more_controller_runs_only_that_one(
    small_suite: Path, tmp_path: Path
):
    store = str(tmp_path / "results.duckdb")
    args = ["score", "--suite", str(small_suite), "--store", store, "--jobs", "1", "--json"]
    first = cli(*args, "--cc", "reno")
    assert first.returncode == 0, first.stderr
    assert "score: 4 runs made, 0 read from" in first.stderr  # 1 + 3 seeds
    second = cli(*args, "--cc", "reno", "--cc", "cubic:slow_start=hystart++")
    assert second.returncode == 0, second.stderr
    assert "score: 4 runs made, 4 read from" in second.stderr
    card = json.loads(second.stdout)
    assert card["controllers"] == ["reno", "cubic:slow_start=hystart++"]
    lossy = card["paths"][1]
    assert lossy["seeds"] == [1, 2, 3]
    reno = lossy["cells"]["reno"]["goodput_bps"]
    # Three seeds, three runs: the median between the spread's ends.
    assert len(reno["values"]) == 3 and reno["min"] <= reno["median"] <= reno["max"]
    assert reno["min"] < reno["max"], "random loss draws differ by seed"
    # The best of each ranked column is the one the metric's direction says.
    for path in card["paths"]:
        for name in path["metrics"]:
            better = card["metrics"][name]["better"]
            cells = {cc: path["cells"][cc][name] for cc in card["controllers"]}
            if better == "none":
                assert all(c["rank"] is None for c in cells.values())
                continue
            values = [c["median"] for c in cells.values() if c["median"] is not None]
            pick = {"lower": min, "higher": max}.get(better)
            if pick is not None:
                assert all((c["median"] == pick(values)) == c["best"] for c in cells.values())


def test_progress_counts_every_cell_and_a_stored_one_as_done(small_suite: Path, tmp_path: Path):
    suite, store = load_suite(small_suite), tmp_path / "r.duckdb"
    seen: list[tuple[int, int]] = []
    first = score(suite, ["reno"], store=store, jobs=1, progress=lambda *a: seen.append(a))
    assert (first.runs, first.stored) == (4, 0)
    assert seen[-1] == (4, 4) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    seen.clear()
    again = score(suite, ["reno", "bbr"], store=store, jobs=1, progress=lambda *a: seen.append(a))
    assert (again.runs, again.stored) == (4, 4)
    assert seen[0] == (4, 8) and seen[-1] == (8, 8)


def test_the_text_table_marks_the_best_and_shows_the_spread(small_suite: Path, tmp_path: Path):
    done = cli(
        "score",
        "--suite",
        str(small_suite),
        "--store",
        str(tmp_path / "r.duckdb"),
        "--cc",
        "reno",
        "--cc",
        "ledbat",
        "--path",
        "lossy",
    )
    assert done.returncode == 0, done.stderr
    rows = [
        line.split()
        for line in done.stdout.splitlines()
        if line.strip().startswith(("reno", "ledbat"))
    ]
    assert len(rows) == 4  # the path's table and the mean ranks
    cell = rows[0][1] + " " + rows[0][2]
    assert re.fullmatch(r"[\d.]+\*? \[[\d.]+-[\d.]+\]", cell), cell
    assert sum("*" in r[1] for r in rows[:2]) == 1


def test_the_default_controllers_are_every_built_in_and_cubic_with_each_rule():
    from slowstart import algorithms

    ccs = default_controllers()
    names = [a["name"] for a in algorithms()]
    assert ccs[: len(names)] == names
    rules = [c.split("=", 1)[1] for c in ccs[len(names) :]]
    assert "hystart" not in rules, "CUBIC's own rule is plain cubic"
    assert {"standard", "lss", "hystart++", "search", "hystart-pb"} == set(rules)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("metrics = [", 'colour = "red"\nmetrics = ['),
            r"path\.0\.colour: unknown key \(accepted: key, title",
        ),
        (
            ('"completion_s", ', '"completion_s", "fastness", '),
            r'unknown metric "fastness" \(accepted: time_to_90_s',
        ),
        (("version = 1", "version = 9"), r"version: 9 is newer than this slowstart reads \(1\)"),
        (('key = "lossy"', 'key = "short"'), r'path key "short" is used twice'),
        (
            ('name = "small"', 'name = "small"\nauthor = "x"'),
            r"author: unknown key \(accepted: version",
        ),
        (("seeds = [1, 2, 3]", 'seeds = "3-1"'), r"path\.1\.seeds: --seeds 3-1"),
        (('["goodput_bps"]', '["harm_delay"]'), r"path\.1\.metrics: harm_delay needs an incumbent"),
        (('figure = "1s"', 'figure = "soon"'), r"path\.0\.figure: expected"),
        (
            ('title = "Random', 'flow = 3\ntitle = "Random'),
            r"path lossy: flow = 3, but it has no such",
        ),
    ],
)
def test_a_bad_suite_exits_2_with_one_line_naming_the_field(
    small_suite: Path, edit: tuple[str, str], message: str
):
    text = small_suite.read_text()
    assert edit[0] in text
    small_suite.write_text(text.replace(edit[0], edit[1], 1))
    done = cli("score", "--suite", str(small_suite), "--cc", "reno")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert re.search(message, lines[0]), lines[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--path", "mars"], r"--path mars: not in .* \(paths: short, lossy\)"),
        (["--cc", "warp"], r'path short, cc warp: flow\.0\.cc: unknown algorithm "warp"'),
        (["--suite", "no-such.toml"], r"no-such\.toml: no such file"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(small_suite: Path, args: list[str], message: str):
    base = [] if "--suite" in args else ["--suite", str(small_suite)]
    done = cli("score", *base, *args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(message, lines[0]), done.stderr


def test_the_built_in_suite_loads_with_every_source_and_a_seed_spread_where_random():
    suite = load_suite()
    keys = [p.key for p in suite.paths]
    for key in ("satellite", "floyd-early-loss", "1g-shallow", "1g-deep", "web-17kB", "web-1MB"):
        assert key in keys
    for key in ("lte", "codel", "loss-1pct", "newcomer", "adsl-upload"):
        assert key in keys
    assert all(p.source for p in suite.paths)
    lossy = next(p for p in suite.paths if p.key == "loss-1pct")
    assert len(lossy.seeds) >= 3
    assert (
        "../shared/traces/ATT-LTE-driving-2016.down"
        in (ROOT / "suites" / "scorecard.toml").read_text()
    )


# --- Ctrl-C ------------------------------------------------------------------------------------


def test_ctrl_c_stops_the_workers_at_once_and_exits_130(tmp_path: Path):
    ccs = ["cubic", "bbr", "scalable", "hstcp", "bbr1", "hystart-pb"]
    cmd = [sys.executable, "-m", "slowstart", "score", "--path", "floyd-early-loss", "--jobs", "2"]
    cmd += ["--store", str(tmp_path / "r.duckdb"), *(f"--cc={cc}" for cc in ccs)]
    proc = foreground(cmd, stderr=subprocess.PIPE, text=True)
    try:
        # Once both workers are in their first 250 s runs (seconds each; more than a minute
        # for them all), which are queued two batches per worker.
        deadline = time.monotonic() + 120
        while len(workers := _children(proc.pid)) < 2:
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "no workers after 2 minutes"
            time.sleep(0.2)
        time.sleep(1.0)
        # To the command alone (a terminal's Ctrl-C reaches the workers too; they ignore it):
        # it must not wait for the runs in progress, nor for those queued behind them.
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        stopped_after = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert stopped_after < 5
    assert err.strip().splitlines() == ["error: interrupted"], err
    assert not [p for p in workers if Path(f"/proc/{p}").exists()], "workers left running"


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


# --- the page in a browser ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("score")
    suite = tmp / "small.toml"
    suite.write_text(SMALL_SUITE)
    done = cli(
        "score",
        "--suite",
        str(suite),
        "--store",
        str(tmp / "r.duckdb"),
        "--cc",
        "reno",
        "--cc",
        "cubic",
        "--cc",
        "bbr",
        "--out",
        str(tmp / "card"),
    )
    assert done.returncode == 0, done.stderr
    return tmp / "card" / "scorecard.html"


def test_the_page_holds_every_path_and_metric_and_links_nothing(page: Path):
    text = page.read_text()
    for key in ("short", "lossy"):
        assert f'<h2 id="{key}">{key}: ' in text
    for name in ("completion_s", "goodput_bps", "exit_cwnd_bdp"):
        assert f"<td>{name}</td>" in text  # the definitions table
    assert text.count('class="figure"') == 3  # the rank heat map and a cwnd figure per path
    assert text.count('class="best"') >= 3
    assert not re.search(r'<script[^>]+src=|<link[^>]+href="http|<img[^>]+src="(?!data:)', text)
    assert json.loads((page.parent / "scorecard.json").read_text())["controllers"] == [
        "reno",
        "cubic",
        "bbr",
    ]


@needs_browser
def test_the_page_draws_every_figure_in_chromium_without_errors(page: Path):
    dom = chromium("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    drawn = re.search(r'data-figures="(\d+)/(\d+)"', dom.stdout)
    assert drawn and drawn.group(1) == drawn.group(2) == "3", drawn
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if re.search(r"error|uncaught", line, re.I)], console
