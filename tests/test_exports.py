"""Captures (--pcap) and qlog files (--qlog): what Wireshark and qvis open.

The capture test reads the simulator's files with Debian's tshark (`make tshark` installs it
when run as root) and skips with the reason where it is absent.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import slowstart
from slowstart.cli import main

TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(
    TSHARK is None, reason="tshark is not installed (`make tshark` installs it as root)"
)

# 1% random loss on a 20 Mbps, 40 ms path: a few dozen recovery episodes in 3 MB.
LOSSY: dict[str, Any] = {
    "name": "lossy",
    "duration": "30s",
    "seed": 3,
    "path": {"rate": "20Mbps", "rtt": "40ms", "buffer": "1bdp", "loss": 0.01},
    "flow": [{"cc": "reno", "size": "3MB"}],
}
# The same path without loss and with room for the whole transfer in its buffer.
CLEAN: dict[str, Any] = {
    **LOSSY,
    "name": "clean",
    "path": {"rate": "20Mbps", "rtt": "40ms", "buffer": "10MB"},
    "flow": [{"cc": "reno", "size": "300kB"}],
}


@pytest.fixture(scope="module")
def lossy(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("lossy")
    r = slowstart.run(LOSSY, qlog=out / "qlog", pcap=out / "pcap")
    return r.summary, out


def tshark_count(capture: Path, display_filter: str) -> int:
    """Frames of `capture` that tshark's two-pass analysis matches with `display_filter`."""
    assert TSHARK is not None
    done = subprocess.run(
        [TSHARK, "-n", "-2", "-r", str(capture), "-R", display_filter, "-T", "fields"]
        + ["-e", "frame.number"],
        capture_output=True,
        text=True,
        check=True,
    )
    return len(done.stdout.split())


# tshark flags a segment below the highest sequence seen as a retransmission, a fast
# retransmission (after two duplicate ACKs, when the ACKs are in the same file), a spurious one,
# or out-of-order when it comes within the handshake's RTT of the highest (packet-tcp.c,
# tcp_analyze_sequence_number). Captured where the sender's link takes them, segments cannot
# be reordered: each of those is a retransmission.
RETRANSMISSION = (
    "tcp.len > 0 && (tcp.analysis.retransmission || tcp.analysis.fast_retransmission"
    " || tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order)"
)


@needs_tshark
@pytest.mark.parametrize("scenario", [LOSSY, CLEAN], ids=["lossy", "clean"])
def test_tshark_finds_the_retransmissions_and_duplicate_acks_the_summary_counts(
    scenario: dict[str, Any], tmp_path: Path
) -> None:
    summary = slowstart.run(scenario, pcap=tmp_path).summary
    flow = summary["flows"][0]
    # access: the sender's link (everything it sends); bottleneck_reverse: the receiver's.
    sent, acks = tmp_path / "access.pcap", tmp_path / "bottleneck_reverse.pcap"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "access.pcap",
        "access_reverse.pcap",
        "bottleneck.pcap",
        "bottleneck_reverse.pcap",
    ]
    assert tshark_count(sent, RETRANSMISSION) == flow["retransmits"]
    assert tshark_count(acks, "tcp.analysis.duplicate_ack") == flow["dup_acks"]
    assert tshark_count(sent, "tcp.len > 0") == flow["data_packets_sent"]
    if scenario is LOSSY:
        assert flow["retransmits"] > 50 and flow["dup_acks"] > 200, flow
        # Most are plain retransmissions, not only out-of-order guesses.
        assert tshark_count(sent, "tcp.analysis.retransmission") > flow["retransmits"] // 2
        assert tshark_count(acks, "tcp.options.sack_le") > 0
    else:
        assert flow["retransmits"] == 0 and flow["dup_acks"] == 0, flow


@needs_tshark
def test_tshark_reads_the_handshake_options_and_checksums(lossy: tuple[dict, Path]) -> None:
    _, out = lossy
    sent = out / "pcap" / "access.pcap"
    syn = "tcp.flags.syn == 1 && tcp.flags.ack == 0"
    assert tshark_count(sent, f"{syn} && tcp.options.mss_val == 1460") == 1
    assert tshark_count(sent, f"{syn} && tcp.options.sack_perm && tcp.options.wscale.shift") == 1
    assert tshark_count(sent, "tcp.options.timestamp.tsval") == tshark_count(sent, "tcp")
    # RFC 791 header checksums verify; nothing is malformed.
    check = ["-o", "ip.check_checksum:TRUE"]
    for capture in (sent, out / "pcap" / "bottleneck_reverse.pcap"):
        done = subprocess.run(
            [
                str(TSHARK),
                "-n",
                "-r",
                str(capture),
                *check,
                "-Y",
                "ip.checksum.status == 0 || _ws.malformed",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout == "", done.stdout[:500]
    # Timestamps are simulated time: the SYN at 0, the last segment within the run.
    done = subprocess.run(
        [str(TSHARK), "-n", "-r", str(sent), "-T", "fields", "-e", "frame.time_epoch"],
        capture_output=True,
        text=True,
        check=True,
    )
    times = [float(t) for t in done.stdout.split()]
    assert times[0] == 0 and times == sorted(times) and times[-1] < 30


def tshark_fields(capture: Path, display_filter: str, *fields: str) -> list[list[int]]:
    """Integer `fields` of the frames of `capture` that `display_filter` matches."""
    assert TSHARK is not None
    args = [TSHARK, "-n", "-r", str(capture), "-Y", display_filter, "-T", "fields"]
    for f in fields:
        args += ["-e", f]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return [[int(v) for v in line.split("\t")] for line in done.stdout.splitlines()]


@needs_tshark
def test_web_requests_travel_as_data_the_other_way(tmp_path: Path) -> None:
    # web-initcwnd: a 400-byte request from the receiver, then a 17 kB response.
    slowstart.run("web-initcwnd", pcap=tmp_path)
    sent, acks = tmp_path / "access.pcap", tmp_path / "bottleneck_reverse.pcap"
    [[seq, length]] = tshark_fields(acks, "tcp.len > 0", "tcp.seq_raw", "tcp.len")
    assert length == 400
    # Every segment of the response acknowledges the request (one file holds one direction,
    # so the raw numbers, not tshark's relative ones), and the ACKs follow it.
    data = tshark_fields(sent, "tcp.len > 0", "tcp.ack_raw", "tcp.len")
    assert [a for a, _ in data] == [(seq + 400) % 2**32] * 12
    assert sum(n for _, n in data) == 17_000
    later = tshark_fields(acks, "tcp.len == 0 && tcp.flags.syn == 0", "tcp.seq_raw")
    assert later == [[(seq + 400) % 2**32]] * 6
    for capture in (sent, acks):
        assert tshark_count(capture, "_ws.malformed || tcp.analysis.flags") == 0


# --- qlog -----------------------------------------------------------------------------------

# draft-ietf-quic-qlog-quic-events-03 (with main-schema-04, qlog_version "0.3"): the fields of
# the events written, with their CDDL types. A "?" marks an optional field.
UINT = "uint"
FLOAT = "float"
TEXT = "text"
PACKET_TYPES = {"initial", "handshake", "0RTT", "1RTT", "retry", "version_negotiation"}
PACKET_TYPES |= {"stateless_reset", "unknown"}
EVENTS: dict[str, dict[str, Any]] = {
    "transport:packet_sent": {"header": "PacketHeader", "?frames": "frames", "?raw": "RawInfo"},
    "transport:packet_received": {
        "header": "PacketHeader",
        "?frames": "frames",
        "?raw": "RawInfo",
    },
    "recovery:metrics_updated": {
        "?min_rtt": FLOAT,
        "?smoothed_rtt": FLOAT,
        "?latest_rtt": FLOAT,
        "?rtt_variance": FLOAT,
        "?pto_count": UINT,
        "?congestion_window": UINT,
        "?bytes_in_flight": UINT,
        "?ssthresh": UINT,
        "?packets_in_flight": UINT,
        "?pacing_rate": UINT,
    },
    "recovery:congestion_state_updated": {
        "?old": TEXT,
        "new": TEXT,
        "?trigger": {"persistent_congestion", "ECN"},
    },
    "recovery:packet_lost": {
        "?header": "PacketHeader",
        "?frames": "frames",
        "?is_mtu_probe_packet": bool,
        "?trigger": {"reordering_threshold", "time_threshold", "pto_expired"},
    },
}
STRUCTS: dict[str, dict[str, Any]] = {
    "PacketHeader": {"packet_type": PACKET_TYPES, "?packet_number": UINT},
    "RawInfo": {"?length": UINT, "?payload_length": UINT},
    "stream": {"frame_type": {"stream"}, "stream_id": UINT, "offset": UINT, "length": UINT},
    "ack": {"frame_type": {"ack"}, "?ack_delay": FLOAT, "?acked_ranges": "ranges"},
}


def check(value: Any, kind: Any, where: str) -> None:
    """Assert `value` has CDDL type `kind` (a name above, a set of strings, bool or a map)."""
    if kind == UINT:
        assert type(value) is int and value >= 0, f"{where}: {value!r} is not a uint"
    elif kind == FLOAT:
        assert type(value) in (int, float), f"{where}: {value!r} is not a number"
    elif kind == TEXT:
        assert isinstance(value, str), f"{where}: {value!r} is not text"
    elif kind is bool:
        assert isinstance(value, bool), where
    elif isinstance(kind, set):
        assert value in kind, f"{where}: {value!r} not one of {sorted(kind)}"
    elif kind == "frames":
        assert isinstance(value, list), where
        for i, frame in enumerate(value):
            check(frame, STRUCTS[frame["frame_type"]], f"{where}[{i}]")
    elif kind == "ranges":
        assert isinstance(value, list) and value, where
        for r in value:
            assert isinstance(r, list) and 1 <= len(r) <= 2 and r == sorted(r), f"{where}: {r}"
            for n in r:
                check(n, UINT, where)
    elif isinstance(kind, str):
        check(value, STRUCTS[kind], where)
    else:
        assert isinstance(value, dict), f"{where}: {value!r} is not a map"
        names = {k.lstrip("?") for k in kind}
        assert set(value) <= names, f"{where}: unknown fields {set(value) - names}"
        for k, sub in kind.items():
            name = k.lstrip("?")
            if name in value:
                check(value[name], sub, f"{where}.{name}")
            else:
                assert k.startswith("?"), f"{where}: {name} missing"


def records(path: Path) -> list[dict[str, Any]]:
    """RFC 7464 JSON text sequence: each record is 0x1E, one JSON text and a line feed."""
    raw = path.read_bytes()
    assert raw.startswith(b"\x1e") and raw.endswith(b"\n")
    parts = raw.split(b"\x1e")[1:]
    for p in parts:
        assert p.endswith(b"\n") and b"\n" not in p[:-1]
    return [json.loads(p) for p in parts]


def test_qlog_records_carry_the_drafts_fields_and_types(lossy: tuple[dict, Path]) -> None:
    summary, out = lossy
    files = sorted((out / "qlog").iterdir())
    assert [f.name for f in files] == ["lossy-flow0.sqlog"]
    header, *events = records(files[0])
    assert header["qlog_version"] == "0.3" and header["qlog_format"] == "JSON-SEQ"
    assert header["trace"]["vantage_point"]["type"] == "client"
    assert header["trace"]["common_fields"]["time_format"] == "relative"
    last = 0.0
    for i, e in enumerate(events):
        assert set(e) == {"time", "name", "data"}, e
        check(e["time"], FLOAT, f"record {i + 1}.time")
        assert e["time"] >= last, f"record {i + 1}: time goes back"
        last = e["time"]
        assert e["name"] in EVENTS, e["name"]
        check(e["data"], EVENTS[e["name"]], f"record {i + 1} ({e['name']})")
        if e["name"] == "recovery:metrics_updated":
            assert e["data"], f"record {i + 1}: metrics_updated with no metric"

    by_name: dict[str, list[dict]] = {}
    for e in events:
        by_name.setdefault(e["name"], []).append(e["data"])
    flow = summary["flows"][0]
    sent = [d for d in by_name["transport:packet_sent"] if d["header"]["packet_type"] == "1RTT"]
    assert len(sent) == flow["data_packets_sent"]
    # Each lost packet names one sent before it, with the same bytes.
    offsets = {d["header"]["packet_number"]: d["frames"][0]["offset"] for d in sent}
    lost = by_name["recovery:packet_lost"]
    assert len(lost) >= flow["loss_events"] > 0
    for d in lost:
        assert offsets[d["header"]["packet_number"]] == d["frames"][0]["offset"]
    cwnd = [
        d["congestion_window"]
        for d in by_name["recovery:metrics_updated"]
        if "congestion_window" in d
    ]
    assert max(cwnd) == flow["max_cwnd_bytes"]
    states = by_name["recovery:congestion_state_updated"]
    assert states[0] == {"new": "slow_start"}
    assert sum(s["new"] == "recovery" for s in states) == flow["loss_events"]


TRIGGERS: dict[str, tuple[dict[str, Any], str, str]] = {
    # The last segment lost and only DupThresh to find losses: the retransmission timer.
    "timeout": (
        {
            "name": "tail",
            "duration": "10s",
            "path": {"rate": "20Mbps", "rtt": "40ms", "buffer": "10MB"}
            | {"drop": [{"flow": 0, "seq": 205}]},
            "flow": [{"cc": "reno", "size": "300kB", "loss_detection": "dupthresh"}],
        },
        "pto_expired",
        "persistent_congestion",
    ),
    # CoDel marks instead of dropping: the window shrinks on ECN echoes, nothing is lost.
    "ecn": (
        {
            "name": "ecn",
            "duration": "10s",
            "path": {"rate": "20Mbps", "rtt": "40ms", "buffer": "1bdp"}
            | {"queue": "codel", "ecn": True},
            "flow": [{"cc": "cubic", "size": "5MB", "ecn": True}],
        },
        "",
        "ECN",
    ),
}


@pytest.mark.parametrize("case", TRIGGERS)
def test_qlog_names_what_triggered_losses_and_state_changes(case: str, tmp_path: Path) -> None:
    scenario, lost_trigger, state_trigger = TRIGGERS[case]
    flow = slowstart.run(scenario, qlog=tmp_path).summary["flows"][0]
    _, *events = records(tmp_path / f"{scenario['name']}-flow0.sqlog")
    for i, e in enumerate(events):
        check(e["data"], EVENTS[e["name"]], f"record {i + 1} ({e['name']})")
    lost = [e["data"]["trigger"] for e in events if e["name"] == "recovery:packet_lost"]
    states = [e["data"] for e in events if e["name"] == "recovery:congestion_state_updated"]
    if lost_trigger:
        assert lost == [lost_trigger] * flow["retransmits"] and lost, lost
    else:
        assert lost == [] and flow["retransmits"] == 0
    triggered = [s for s in states if "trigger" in s]
    expected = flow["rto_count"] if case == "timeout" else flow["ecn_reductions"]
    assert [s["trigger"] for s in triggered] == [state_trigger] * expected and expected > 0


# --- both ---------------------------------------------------------------------------------


def test_same_scenario_and_seed_write_the_same_bytes(tmp_path: Path) -> None:
    for run in ("a", "b"):
        slowstart.run(LOSSY, qlog=tmp_path / run / "qlog", pcap=tmp_path / run / "pcap")
    a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.*"))
    assert len(a) == 5
    for rel in a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel


def test_an_unwritable_folder_is_an_error_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    for option in ("--pcap", "--qlog"):
        code = main(["run", "satellite", "--duration", "1s", "--quiet", option, str(blocker / "x")])
        err = capsys.readouterr().err
        assert code == 2
        said = f"error: {option} {blocker / 'x'}: {blocker} is not a folder"
        assert err.startswith(said) and err.count("\n") == 1, err


def test_swarm_runs_refuse_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "swarm-adsl", "--quiet", "--pcap", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "not written for swarm scenarios" in err and err.count("\n") == 1
