"""The bad-input catalogue (issue #15): every case exits 2 with one line on stderr that names
the field, no traceback and no panic, and nothing runs for long."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from slowstart.cli import main

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
]:
    case("satellite", "flow.0.cc", f"flow.0.cc={v}")
# A number too large for a float is too large, not endless.
case("satellite", "flow.0.size", "flow.0.size=1e400")
case("satellite", "flow.0.max_window", "flow.0.max_window=1e400")
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
case("net100-blast", "cross.0.rate", 'cross.0.rate="10Tbps"', "cross.0.packet_size=28")
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
        ("duration = 1\n[[flow]]\n", "path"),
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
