"""The bad-input catalogue (issue #15): every case exits 2 with one line on stderr that names
the field, no traceback and no panic, and nothing runs for long."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

import slowstart
from conftest import cli
from slowstart.cli import main
from slowstart.loading.defaults import choices, limits, spellings

U = "18446744073709551615"  # u64::MAX

# (scenario, overrides, the field the one line must name)
CASES: list[tuple[str, list[str], str]] = []


def case(scenario: str, field: str, *sets: str) -> None:
    CASES.append((scenario, list(sets), field))


# Flow integers.
for key, bad in {
    "mss": ["0", "-1", '"abc"', "1.5", "true", U, "70000"],
    "initcwnd": ["0", "-3", '"ten"', "2.5", U, "1000000000"],
    "initrwnd": ["0", '"x"', U],
    "ack_every": ["0", "false", U],
    "header_bytes": ["-1", "65000", '"forty"'],
}.items():
    for v in bad:
        case("satellite", f"flow.0.{key}", f"flow.0.{key}={v}")
# Flow times.
for key in ("min_rto", "max_rto", "delack_timeout"):
    for v in ['"abc"', '"-1s"', '"1parsec"', f'"{U}ns"', '"nan"', '"inf"']:
        case("satellite", f"flow.0.{key}", f"flow.0.{key}={v}")
case("satellite", "flow.0.start", 'flow.0.start="1000000s"')
case("satellite", "flow.0.start", 'flow.0.start="abc"')
# Windows, booleans and choices.
for key in ("max_window", "max_rwnd"):
    for v in ['"0"', '"abc"', '"-5seg"', '"100"']:
        case("satellite", f"flow.0.{key}", f"flow.0.{key}={v}")
for key in ("handshake", "delayed_ack", "abc", "pacing", "quickack"):
    for v in ['"yes"', "1"]:
        case("satellite", f"flow.0.{key}", f"flow.0.{key}={v}")
for key in ("recovery", "loss_detection"):
    for v in ['"fast"', "3"]:
        case("satellite", f"flow.0.{key}", f"flow.0.{key}={v}")
# Algorithms and their parameters.
for v in [
    '"nope"',
    '"reno:"',
    '"cubic:beta=nan"',
    '"cubic:beta=inf"',
    '"aimd:a=inf"',
    '"aimd:period=0.2"',  # read only with mode=periodic
    '"aimd:mode=periodic,a=2"',  # a and b come from RFC 3649's table in that mode
    '"cubic:beta=5"',
    '"cubic:zzz=1"',
    '":"',
    '""',
    "7",
    # Issue #31: a parameter the chosen rule never reads, or one given twice.
    '"reno:max_ssthresh=5"',
    '"cubic:search_thresh=0.5"',
    '"hystart-pb:max_ssthresh=5"',
    '"aimd:mode=static,hystart_detect=delay"',
    '"cubic:beta=0.5,beta=0.6"',
    '{name = "lss", slow_start = "standard", max_ssthresh = 50}',
    # TCP Prague's parameters (draft-briscoe-iccrg-prague-congestion-control-04).
    '"prague:g=0"',
    '"prague:g=2"',
    '"prague:rtt_virt_min_ms=-1"',
    '"prague:rtt_virt_min_ms=nan"',
    '"prague:alpha_init=0.5"',
]:
    case("satellite", "flow.0.cc", f"flow.0.cc={v}")
# Prague reads Accurate ECN feedback only.
case("prague-l4s", "flow.0.ecn_feedback", 'flow.0.ecn_feedback="dctcp"')
# A number too large for a float is too large, not endless.
case("satellite", "flow.0.size", "flow.0.size=1e400")
case("satellite", "flow.0.max_window", "flow.0.max_window=1e400")
# Deeper than Python's TOML parser recurses (an internal RecursionError).
case("satellite", "flow.0.mss", "flow.0.mss=" + "[" * 5_000 + "]" * 5_000)
# The path.
for key, bad in {
    "rate": ['"0Mbps"', '"-1Mbps"', '"fast"', '"５Mbps"', '"1e30bps"'],
    "rtt": ['"0ms"', '"abc"', '"-5ms"'],
    "buffer": ['"0"', '"1e18bdp"', '"abc"', '"10bytes"', '"-1pkt"'],
    "loss": ["1", "-0.1", '"abc"', "2"],
    "jitter": ['"abc"', '"-1ms"'],
}.items():
    for v in bad:
        case("satellite", f"path.{key}", f"path.{key}={v}")
# Drops, queue disciplines and bursty loss: bounds the core checks, named as written.
case("satellite", "path.drop.0.flow", "path.drop=[{flow = 5, seq = 1}]")
case("satellite", "path.drop.0.seq", "path.drop=[{flow = 0, seq = 0}]")
case("satellite", "path.queue.interval", 'path.queue={kind = "codel", interval = "0ms"}')
case("satellite", "path.queue.flows", 'path.queue={kind = "fq_codel", flows = 0}')
case("satellite", "path.queue.max_th", 'path.queue={kind = "red", min_th = 30}')
case("satellite", "path.reverse_queue.alpha", 'path.reverse_queue={kind = "pie", alpha = -1}')
case("satellite", "path.loss.p", "path.loss={p = 2}")
case("satellite", "path.queue.target", 'path.queue={kind = "pie", target = "0ms"}')
case("satellite", "path.queue.max_p", 'path.queue={kind = "red", max_p = 2}')
case("satellite", "path.queue.w_q", 'path.queue={kind = "red", w_q = "often"}')
case("satellite", "path.queue.flows", 'path.queue={kind = "fq_codel", flows = 1.5}')
case("satellite", "path.queue.memory_limit", 'path.queue={kind = "fq_codel", memory_limit = 0}')
case("satellite", "path.queue.drop_overload", 'path.queue={kind = "dualpi2", drop_overload = "no"}')
case("satellite", "path.queue.step", 'path.queue={kind = "dualpi2", step = "0ms"}')
case("satellite", "path.queue.quantum", 'path.queue={kind = "codel", quantum = 1514}')
# Settings that contradict each other (issue #31): as refused as their plain forms.
case("satellite", "path.queue.memory_limit", 'path.queue={kind = "fq_codel", memory_limit = 1000}')
case("satellite", "path.loss.loss_good", "path.loss={p = 0.01, loss_good = 1}")
case("satellite", "path.loss.loss_good", "path.loss={p = 0, loss_good = 1}")
case("satellite", "path.loss.loss_bad", "path.loss={p = 0.01, r = 0}")
# Run-wide settings.
for v in ['"0s"', '"abc"', '"-1s"', f'"{U}ns"']:
    case("satellite", "duration", f"duration={v}")
for v in ["-1", '"abc"', "1.5"]:
    case("satellite", "seed", f"seed={v}")
case("satellite", "trace.max_rows", "trace.max_rows=0")
case("satellite", "trace.flow_interval", f'trace.flow_interval="{U}ns"')
case("satellite", "trace.queue_interval", 'trace.queue_interval="-1s"')
# Unknown keys.
case("satellite", "flow.0.foo", "flow.0.foo=1")
case("satellite", "path.foo", "path.foo=1")
case("satellite", "foo", "foo=1")
case("satellite", "flow.9", "flow.9.mss=1000")
# Applications.
case("web-initcwnd", "app.0.request", f"app.0.request={U}")
case("web-initcwnd", "app.0.objects", "app.0.objects=0")
case("web-initcwnd", "app.0.response", 'app.0.response="0B"')
case("bittorrent-request-slowstart", "app.0.max_queue", "app.0.max_queue=0")
case("bittorrent-request-slowstart", "app.0.min_queue", f"app.0.min_queue={U}1")
case("bittorrent-request-slowstart", "app.0.queue_time", 'app.0.queue_time="soon"')
case("web-initcwnd", "app.0.foo", "app.0.foo=1")
case("web-initcwnd", "app.0.keep_alive", 'app.0.keep_alive="yes"')
case("web-initcwnd", "app.0.response", "app.0.response=[]")
case("web-initcwnd", "app.0.kind", 'app.0.kind="ftp"')
case("web-initcwnd", "app.0.size", 'flow.0.app={kind = "web", response = "1kB", size = 1}')
case("web-initcwnd", "app.7.request", "app.7.request=1")
# Cross traffic (issue #13): units in Python, defaults and bounds in config.rs.
for key, v in [
    ("rate", "0"),
    ("rate", '"fast"'),
    ("packet_size", "20"),
    ("packet_size", '"70kB"'),
    ("kind", '"poisson"'),
    ("on", '"1s"'),
    ("stop", '"1s"'),
    ("start", '"1000s"'),
    ("src", '"moon"'),
    ("distribution", '"fixed"'),
    ("foo", "1"),
]:
    case("net100-blast", f"cross.0.{key}", f"cross.0.{key}={v}")
case(
    "net100-blast", "cross.0.distribution", 'cross.0.kind="onoff"', 'cross.0.distribution="pareto"'
)
case("net100-blast", "cross.0.off", 'cross.0.kind="onoff"', 'cross.0.off="2h"')
# Work a source's model bounds (issue #31): no faster than its link out, on for a packet.
case("net100-blast", "cross.0.rate", 'cross.0.rate="10Tbps"', "cross.0.packet_size=28B")
case("net100-blast", "cross.0.on", 'cross.0.kind="onoff"', 'cross.0.on="1ns"', 'cross.0.off="1ns"')
case("satellite", "flow.0.cwnd_limited", 'flow.0.cwnd_limited="loose"')
case("satellite", "flow.0.cwnd_limited", "flow.0.cwnd_limited=1")
case("swarm-adsl", "swarm.tcp.cwnd_limited", 'swarm.tcp.cwnd_limited="Linux"')
# The swarm (issue #10).
for key, v in [
    ("leechers", "0"),
    ("seeds", "0"),
    ("piece", '"30MB"'),
    ("block", '"1MB"'),
    ("up", '"-1Mbps"'),
    ("down", '"0bps"'),
    ("population", '"martians"'),
    ("seeding", '"forever"'),
    ("buffer", '"0pkt"'),
    ("delay", '["25ms", "1ms"]'),
    ("stay_factor", '"nan"'),
    ("file", '"0MB"'),
    ("arrival_mean", '"-1s"'),
    ("stop_after", "0"),
    ("bittorrent.pipeline", "0"),
    ("bittorrent.super_seeding", "true"),
    ("bittorrent.unchoke_slots", "0"),
    ("bittorrent.piece_picker", '"fastest"'),
    ("bittorrent.whole_pieces_threshold", '"20s"'),
    ("bittorrent.hold_requests_beyond_target", "true"),
    ("bittorrent.send_buffer", '"kernel"'),
    ("bittorrent.messages", '"inline"'),
    ("bittorrent.send_buffer_low_watermark", '"0B"'),
    ("bittorrent.send_buffer_watermark", '"1KiB"'),
    ("tcp.cc", '"nope"'),
    ("tcp.recovery", '"fast"'),
    ("utp.loss_detection", "3"),
    ("utp.mss", "0"),
    ("foo", "1"),
    ("queue_sample", '"1ns"'),
    ("bittorrent.min_peers", "41"),
    ("bittorrent.unchoke_slots", "41"),
    ("bittorrent.max_initiate", "41"),
]:
    case("swarm-adsl", f"swarm.{key}", f"swarm.{key}={v}")
case("swarm-adsl", "--cc", "--cc")


@pytest.mark.parametrize(("scenario", "sets", "field"), CASES)
def test_bad_input_exits_2_naming_the_field(
    scenario: str, sets: list[str], field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", scenario, "--json"]
    for s in sets:
        argv += ["--cc", "reno"] if s == "--cc" else ["--set", s]
    start = time.monotonic()
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    # The field first, or the override that named it ("--set flow.0.foo=1: unknown key").
    assert lines[0].startswith((f"error: {field}", f"error: --set {field}")), lines[0]
    assert "Traceback" not in err and "panicked" not in err
    assert time.monotonic() - start < 10


def test_catalogue_is_large() -> None:
    assert len(CASES) >= 100, len(CASES)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("duration = \n", "invalid TOML"),
        ("x = " + "[" * 20_000 + "]" * 20_000 + "\n", "nested too deeply"),
        ('duration = "1s"\n[[flow]]\n', "path"),
        ('name = 3\nduration = "1s"\n', "name"),
    ],
)
def test_bad_files(tmp_path: Path, text: str, where: str, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and where in err[0], err


def test_missing_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "no-such-scenario"]) == 2
    assert capsys.readouterr().err.startswith("error: no-such-scenario: no such file")


# --- issue #31: files, sweeps, stores and options, each answered in one line -------------------


def one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """`slowstart ARGV` exits 2 with one line on stderr; that line."""
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def trace_scenario(tmp_path: Path, trace: Path) -> Path:
    path = tmp_path / "traced.toml"
    path.write_text(
        f'duration = "1s"\n[path]\nrate = {{trace = "{trace}"}}\nrtt = "10ms"\n'
        '[[flow]]\nsize = "10kB"\n'
    )
    return path


def test_files_are_read_only_when_regular_and_bounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A device or a pipe would be read for ever, a huge file into memory: refused by their
    type and size before they are opened, each naming the file and the setting that names it."""
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.toml"
    with open(huge, "wb") as fh:
        fh.truncate(limits()["scenario_file_bytes"] + 1)  # sparse: no disk
    for path, why in [
        ("/dev/zero", "not a regular file"),
        (str(fifo), "not a regular file"),
        (str(tmp_path), "is a directory"),
        (str(huge), f"{limits()['scenario_file_bytes'] + 1} bytes, more than"),
    ]:
        line = one_line(["run", path], capsys)
        assert line.startswith(f"error: {path}: {why}"), line
    binary = tmp_path / "binary.txt"
    binary.write_bytes(bytes(range(256)))
    beyond = tmp_path / "beyond.txt"
    beyond.write_text(f"1\n2\n{2**64}\n")
    for trace, why in [
        (Path("/dev/zero"), "/dev/zero: not a regular file"),
        (fifo, "fifo.toml: not a regular file"),
        (binary, "binary.txt line 1: expected a time in ms"),
        (beyond, "beyond.txt line 3: expected a time in ms, an integer in 0..=3600000"),
    ]:
        line = one_line(["run", str(trace_scenario(tmp_path, trace))], capsys)
        assert line.startswith("error: path.rate.trace: ") and why in line, line
    plan = tmp_path / "plan.toml"
    os.mkfifo(plan)
    line = one_line(["sweep", str(plan), "--vary", "flow.0.mss=1000"], capsys)
    assert "plan.toml: not a regular file" in line, line
    line = one_line(["sweep", str(plan)], capsys)  # is it a plan? It says why it cannot tell
    assert line.startswith(f"error: {plan}: not a regular file"), line


def test_list_reads_only_regular_scenario_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`slowstart list` reads the scenarios/ folder of the working directory: a pipe there
    blocked it, a device filled memory; each is listed as unreadable, the rest as usual."""
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "fine.toml").write_text('description = "a fine one"\n')
    os.mkfifo(tmp_path / "scenarios" / "pipe.toml")
    (tmp_path / "scenarios" / "zero.toml").symlink_to("/dev/zero")
    (tmp_path / "scenarios" / "deep.toml").write_text("x = " + "[" * 20_000 + "]" * 20_000)
    monkeypatch.chdir(tmp_path)
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "  fine  a fine one\n" in out, out
    assert f"  deep  (unreadable: {Path.cwd() / 'scenarios'}/deep.toml: invalid TOML" in out, out
    for name in ("pipe", "zero"):
        assert f"  {name}  (unreadable: {Path.cwd() / 'scenarios' / name}.toml: not a" in out, out


def plan_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "plan.toml"
    path.write_text('scenario = "satellite"\n' + text)
    return str(path)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        # Sized before their points are listed (these filled 7 GB).
        ('[sample]\ncount = 1000000000\nbox = {"path.rtt" = "1ms..9ms"}\n', "sample.count: "),
        ('[axes]\n"path.rtt" = {range = "1ms..9ms", count = 1000000000}\n', "axes.path.rtt.count"),
        (
            '[axes]\n"path.rtt" = {range = "0.5ms..9.5ms", count = 4000}\n'
            '[sample]\ncount = 5000\nbox = {"path.rate" = "1Mbps..9Mbps"}\n',
            "plan: ",
        ),
        # Tables that are not, keys that do not exist.
        ("sample = 5\n", "sample: expected a table"),
        ("axes = 5\n", "axes: expected a table"),
        ("x = " + "[" * 20_000 + "]" * 20_000 + "\n", "plan.toml: invalid TOML: nested too deeply"),
        (
            '[sample]\ncount = 2\nsead = 1\nbox = {"path.rtt" = "1ms..9ms"}\n',
            "sample.sead: unknown",
        ),
        ('[sample]\ncount = 2\nseed = "x"\nbox = {"path.rtt" = "1ms..9ms"}\n', "sample.seed: "),
        # Ranges read as written, or refused.
        ('[axes]\n"path.rtt" = {range = "1ms...10ms", count = 3}\n', "expected a range"),
        ('[axes]\n"path.rtt" = {range = "0.01..10ms", count = 3}\n', "need the same unit"),
        ('[axes]\n"path.rtt" = {range = "10ms..1ms", count = 3}\n', "must be below the high end"),
        ('[axes]\n"path.rtt" = {range = "1e400ms..1e401ms", count = 3}\n', "too large"),
    ],
)
def test_a_bad_sweep_plan_is_refused_before_it_is_expanded(
    tmp_path: Path, text: str, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_line(["sweep", plan_file(tmp_path, text), "--quiet"], capsys)
    assert where in line, line


def test_sweep_options_are_checked_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each of these ran (or expanded) first, or was dropped without a word."""
    existing = tmp_path / "a-file"
    existing.write_text("")
    vary = ["sweep", "satellite", "--vary", "flow.0.initcwnd=10", "--quiet"]
    for extra, start in [
        (["--seeds", "0-50000000"], "error: --seeds 0-50000000: 50000001 runs, more than"),
        (["--seeds", ""], "error: --seeds : expected seeds"),
        (["--metric", ""], "error: --metric : not a number"),
        (["--out", str(existing)], f"error: --out {existing}: exists and is not a folder"),
        (["--out", ""], "error: --out: expected a folder"),
        (["--cluster", "bogus"], "error: --cluster bogus: expected local:N"),
    ]:
        assert one_line([*vary, *extra], capsys).startswith(start)
    plan = plan_file(tmp_path, '[axes]\n"flow.0.initcwnd" = [10]\n')
    line = one_line(["sweep", plan, "--seeds", "1-3"], capsys)
    assert line.startswith("error: --seeds: ") and "its seeds = ... say which" in line, line


PLAN = ["plan", "--rtt", "50ms", "--rate", "10Mbps", "--size", "10kB"]
WINDOWS = ",".join(map(str, range(1, 4000)))
CC = 'error: flow.0.cc: unknown algorithm "nope"'


def test_options_that_do_not_apply_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv, start in [
        (["reproduce", "floyd", "--leechers", "4"], "error: --leechers: only for the swarm"),
        (
            ["results", str(tmp_path / "r.duckdb"), "--out", str(tmp_path)],
            "error: --out: only with --traces",
        ),
        (["run", "satellite", "--out", ""], "error: --out: expected a folder"),
        (["results", "r.duckdb", "--csv", ""], "error: --csv: expected a file name"),
        (["results", "r.duckdb", "--traces", "", "--out", "x"], "error: --traces: expected a run"),
        (["results", "r.duckdb", "--json", "--csv", "x.csv"], "error: --json: prints the table"),
        (
            [*PLAN, "--set", "path.rate=1Mbps"],
            "error: --set path.rate=1Mbps: the plan sets path.rate itself; use --rate",
        ),
        ([*PLAN, "--initcwnd", ""], "error: --initcwnd: expected a comma-separated list"),
        # A plan's grid is sized as a sweep's is, before any run.
        (
            [*PLAN, "--initcwnd", WINDOWS, "--initrwnd", WINDOWS],
            "error: --size x --initcwnd x --initrwnd: 15992001 runs, more than",
        ),
        # reproduce ran some variants before a bad --cc, and dropped --json or --list's others.
        (["reproduce", "floyd", "--cc", "nope", "--store", str(tmp_path / "r.duckdb")], CC),
        (["reproduce", "floyd", "--json", "--markdown"], "error: --json: not with --markdown"),
        (["reproduce", "floyd", "--list"], "error: --list: lists every experiment, as text"),
        # score took --jobs 0 as "one per CPU", and a bad --cluster once runs were due.
        (["score", "--jobs", "0"], "error: --jobs 0: expected at least 1"),
        (["score", "--cluster", "bogus"], "error: --cluster bogus: expected local:N"),
    ]:
        assert one_line(argv, capsys).startswith(start)
    with pytest.raises(ValueError, match="^pcap: expected a folder name, got 5$"):
        slowstart.run("satellite", duration="1s", pcap=5)  # type: ignore[arg-type]
    # From Python too: a store or a folder to save to is a name (a TypeError from pathlib, or
    # the working directory, before).
    with pytest.raises(ValueError, match="^store: expected a file name, got 5$"):
        slowstart.results(5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='^store: expected a file name, got ""$'):
        slowstart.sweep("satellite", {"flow.0.initcwnd": ["10"]}, store="")
    with pytest.raises(ValueError, match='^out_dir: expected a folder name, got ""$'):
        slowstart.run("satellite", duration="10ms").save("")


def test_where_files_go_is_checked_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every option naming a folder or a file to write: refused before anything runs or is
    read (`real --out ''` was dropped, `compare` and `report` failed after their work), each by
    one check (slowstart.paths.output_folder, output_file)."""
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    under_file = f"{a_file}/x"
    store = str(tmp_path / "absent.duckdb")  # never opened: the options are checked first
    for argv, start in [
        (["real", "satellite", "--out", ""], 'error: --out: expected a folder name, got ""'),
        (["real", "satellite", "--pcap", str(a_file)], f"error: --pcap {a_file}: exists and"),
        (["compare", "satellite", "--out", ""], "error: --out: expected a folder name"),
        (["compare", "satellite", "--out", str(a_file)], f"error: --out {a_file}: exists and"),
        (["score", "--out", ""], "error: --out: expected a folder name"),
        (["score", "--out", under_file], f"error: --out {under_file}: {a_file} is not a folder"),
        (["report", store, "--out", ""], 'error: --out: expected a file name, got ""'),
        (["report", store, "--out", str(tmp_path)], f"error: --out {tmp_path}: is a folder"),
        (["report", store, "--out", under_file], f"error: --out {under_file}: {a_file} is not"),
        (["results", store, "--csv", str(tmp_path)], f"error: --csv {tmp_path}: is a folder"),
        (["results", store, "--traces", "ab", "--out", ""], "error: --out: expected a folder"),
        (
            ["sweep", "satellite", "--vary", "flow.0.initcwnd=10", "--store", ""],
            "error: --store: expected a file name",
        ),
        (["reproduce", "floyd", "--store", str(tmp_path)], f"error: --store {tmp_path}: is a"),
    ]:
        line = one_line(argv, capsys)
        assert line.startswith(start), line
    assert not (tmp_path / "absent.duckdb").exists()


def test_the_cross_sources_are_bounded_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three sources of 28-byte packets at 10 Gbps for 10 s: 446 million packets each, in
    bounds one by one, 1.34 billion together (the core's bound is 10^9)."""
    source = '[[cross]]\nrate = "10Gbps"\npacket_size = "28B"\nstop = "10s"\n'
    path = tmp_path / "crowded.toml"
    path.write_text(
        'duration = "10s"\n[path]\nrate = "10Gbps"\nrtt = "10ms"\n[[flow]]\nsize = "10kB"\n'
        + source * 3
    )
    line = one_line(["run", str(path)], capsys)
    assert line.startswith("error: cross: the 3 sources send about 1339285713 packets"), line
    path.write_text(path.read_text().replace(source, "", 1))
    status = main(["run", str(path), "--duration", "1ms", "--json"])
    assert status == 0, capsys.readouterr().err


def test_a_controller_file_is_read_only_when_regular_and_bounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bound is the core's largest module (one owner), for a Python source too."""
    most = limits()["controller_file_bytes"]
    huge = tmp_path / "huge.wasm"
    with open(huge, "wb") as fh:
        fh.truncate(most + 1)  # sparse: no disk
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    for ref, why in [
        (str(huge), f"{huge}: {most + 1} bytes, more than a controller may have ({most})"),
        (f"{fifo}:Start", f"{fifo}: not a regular file"),
    ]:
        line = one_line(["run", "satellite", "--cc", ref], capsys)
        assert line.startswith(f"error: flow.0.cc: {why}"), line


def test_a_damaged_store_is_named_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every way a store can be damaged: one line naming the store and what is wrong, from the
    CLI and as a ValueError from Python (DuckDB's own errors came out raw)."""
    store = tmp_path / "good.duckdb"
    slowstart.sweep("satellite", {"flow.0.initcwnd": ["10"]}, duration="100ms", jobs=1, store=store)

    def copy(name: str, edit: str | None = None) -> Path:
        path = tmp_path / name
        shutil.copy(store, path)
        if edit:
            con = duckdb.connect(str(path))
            con.execute(edit)
            con.close()
        return path

    truncated = copy("truncated.duckdb")
    os.truncate(truncated, truncated.stat().st_size // 2)
    empty = tmp_path / "empty.duckdb"
    empty.write_bytes(b"")
    lite = tmp_path / "lite.db"
    with sqlite3.connect(lite) as con:
        con.execute("CREATE TABLE t (x)")
    fifo = tmp_path / "fifo.duckdb"
    os.mkfifo(fifo)
    foreign = tmp_path / "foreign.duckdb"
    con = duckdb.connect(str(foreign))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.close()
    for path, why in [
        (foreign, "a DuckDB file but not a slowstart results store"),
        (truncated, "a damaged results store"),
        (empty, "an empty file, not a results store"),
        (lite, "not a DuckDB file, not a results store"),  # not an extension download first
        (fifo, "not a file (a folder, device or pipe)"),
        (copy("banana.duckdb", "UPDATE meta SET value = 'banana'"), "store schema 'banana'"),
        (copy("json.duckdb", "UPDATE runs SET summary = '{oops'"), "a damaged results store"),
    ]:
        line = one_line(["results", str(path)], capsys)
        assert line.startswith(f"error: {path}: {why}"), line
        with pytest.raises(ValueError, match=f"^{path}: "):
            slowstart.results(path)


def test_nodes_cost_memory_with_their_number_not_its_square(tmp_path: Path) -> None:
    """60 000 nodes, one link and one flow asked the engine for 14.4 GB; under a 2 GB address
    space limit the run now completes."""
    names = ", ".join(f'"n{i}"' for i in range(60_000))
    path = tmp_path / "many.toml"
    path.write_text(
        f'duration = "1s"\nnodes = [{names}]\n'
        '[[link]]\na = "n0"\nb = "n1"\nrate = "10Mbps"\ndelay = "10ms"\nbuffer = "100pkt"\n'
        '[[flow]]\nsrc = "n0"\ndst = "n1"\nsize = "100kB"\n'
    )
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))"
    main_call = (
        f"from slowstart.cli import main; raise SystemExit(main(['run', {str(path)!r}, '--json']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", f"{limit}\n{main_call}"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["flows"][0]["bytes_delivered"] == 100_000


def test_a_parameter_the_rule_never_reads_is_refused_by_load() -> None:
    """Before any run (a sweep loads every point first), not when the run builds the flow."""
    with pytest.raises(ValueError, match="^flow.0.cc reno: parameter 'max_ssthresh' is not read"):
        slowstart.load("satellite", cc="reno:max_ssthresh=5")


def test_a_sweep_from_python_is_sized_before_it_is_listed() -> None:
    with pytest.raises(ValueError, match="^seeds: 1000000000 runs, more than one sweep may"):
        slowstart.sweep("satellite", {"flow.0.initcwnd": ["10"]}, seeds=range(10**9))


def test_a_sweep_in_which_no_flow_completes_is_tabulated_by_goodput(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """100 MB in 100 ms: no flow completes, so no row has a completion time (this was
    `error: missing "completion_s"`, from the sweep and from its report)."""
    argv = ["sweep", "satellite", "--vary", "flow.0.initcwnd=10", "--duration", "100ms"]
    assert main([*argv, "--quiet"]) == 0, capsys.readouterr().err
    assert "metric: goodput_bps (default: no flow completed" in capsys.readouterr().out


def test_what_ran_as_something_else_without_a_word_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue #43: a loss too small for a float ran lossless; an invalid --set value on a key
    --vary also sets was never read; a Python sweep over no values ran nothing."""
    tiny = "is too small to hold (a number below about 5e-324 is 0 here); write 0 if you mean none"
    for value in ("1e-400", '"1e-400%"', "-1e-400"):
        line = one_line(["run", "satellite", "--set", f"path.loss={value}"], capsys)
        assert line == f"error: path.loss: {value.strip(chr(34))} {tiny}", line
    scenario = tmp_path / "tiny-loss.toml"
    scenario.write_text(
        'duration = "1s"\n[path]\nrate = "10Mbps"\nrtt = "50ms"\nloss = 1e-400\n[[flow]]\n'
    )
    assert one_line(["run", str(scenario)], capsys) == f"error: path.loss: 1e-400 {tiny}"
    # The smallest a float holds is still a loss, and 0 is none.
    assert slowstart.load("satellite", set=["path.loss=5e-324"])["links"][1]["forward"]["loss"] > 0
    assert (
        slowstart.load("satellite", set=["path.loss=0.0e-400"])["links"][1]["forward"]["loss"] == 0
    )
    for valid in ("reno", "nope"):  # the --set value would never run, valid or not
        line = one_line(
            ["sweep", "satellite", "--set", f"flow.0.cc={valid}", "--vary", "flow.0.cc=reno,cubic"],
            capsys,
        )
        assert line.startswith(f"error: --set flow.0.cc={valid}: flow.0.cc is also varied"), line
    for call, message in [
        (
            lambda: slowstart.sweep("satellite", {"flow.0.initcwnd": []}),
            "^vary.flow.0.initcwnd: an empty list",
        ),
        (
            lambda: slowstart.sweep("satellite", {"flow.0.initcwnd": [10]}, seeds=[]),
            "^seeds: an empty list",
        ),
        (
            lambda: slowstart.sweep([], {"flow.0.initcwnd": [10]}),
            "^sweep: an empty list of scenarios",
        ),
        (lambda: slowstart.sweep("satellite", grid=[]), "^grid: an empty list of points"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()


def test_an_unknown_population_names_the_cores_words() -> None:
    """`compare --populations` lists what the core accepts, spelled as a scenario spells it."""
    r = cli("compare", "real-swarm", "--populations", "utp,bittorrent")
    words = [spellings().get(v, v) for v in choices("population")]
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0] == (
        f"error: --populations: expected {', '.join(words[:-1])} or {words[-1]} "
        '(comma-separated), got "bittorrent"'
    )
