"""What ns-2's agents put on the uplink, the facts the swarm's defaults and its reproduction page
rest on (docs/reproductions/swarm.md, "Where ours differs").

The BitTorrent module the paper built on (SiangYun/BTcode `bittorrent_connection.cc`) carries a
connection over one `Agent/TCP/FullTcp/Newreno` per side; ns-2's one-way `Agent/TCP` with a
`TCPSink` or `TCPSink/DelAck` is the other way an ns-2 study moves data. `tests/ns2/agents.tcl`
runs each on a 1/8 Mb/s pair of links; Debian's ns2 (`make ns2` installs it as root) runs it,
and the tests skip with the reason where it is absent.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

NS = shutil.which("ns")
pytestmark = pytest.mark.skipif(
    NS is None, reason="ns-2 is not installed (`make ns2` installs Debian's ns2 as root)"
)

SCRIPT = Path(__file__).parent / "ns2" / "agents.tcl"
PIECES = 20 * 16397  # 20 piece messages: a 16 KiB block and the 13-byte header each
MSS = 1460


def departures(case: str, tmp_path: Path) -> Counter[tuple[str, int]]:
    """Packets that left each node in `case`: (from node, size in bytes) -> count."""
    assert NS is not None
    trace = tmp_path / "trace.tr"
    subprocess.run([NS, str(SCRIPT), case, str(trace)], check=True, capture_output=True)
    out: Counter[tuple[str, int]] = Counter()
    for line in trace.read_text().splitlines():
        f = line.split()
        if f[0] == "-":  # a packet leaves a queue onto its link
            out[(f[2], int(f[5]))] += 1
    return out


def test_fulltcp_sends_messages_at_their_size_and_acks_every_full_segment(tmp_path: Path) -> None:
    sent = departures("fulltcp", tmp_path)
    full = sent[("0", MSS + 40)]
    assert full >= PIECES // MSS
    # The downloader's side: 40-byte pure ACKs and its 17-byte requests as 57-byte packets
    # (sendmsg of the message's own length, `BitTorrentApp::send`); nothing else.
    assert set(s for n, s in sent if n == "1") == {40, 17 + 40}
    # segsperack_ 1: a pure ACK for every full-size segment (a few more for duplicates).
    assert full <= sent[("1", 40)] <= full * 1.1
    # Each request is its own packet; ns-2 resends one whose ACK waits behind the uploader's
    # queued data longer than the 200 ms minimum timeout, so at most twice each.
    assert 5 <= sent[("1", 57)] <= 10


def test_fulltcp_acks_every_segment_even_when_both_sides_send_pieces(tmp_path: Path) -> None:
    # Tit-for-tat on one connection: each side's window is full, so its ACKs rarely ride on its
    # own pieces and go as pure ACKs, one per segment received.
    sent = departures("twoway", tmp_path)
    for me, other in (("0", "1"), ("1", "0")):
        received = sent[(other, MSS + 40)]
        assert received > 1000
        assert received <= sent[(me, 40)] <= received * 1.1


@pytest.mark.parametrize("sink, acks_per_segment", [("TCPSink", 1.0), ("TCPSink/DelAck", 0.5)])
def test_one_way_tcp_pads_messages_to_whole_packets(
    tmp_path: Path, sink: str, acks_per_segment: float
) -> None:
    sent = departures(sink, tmp_path)
    # The 17-byte message is a whole packetSize_ packet, and each piece write whole packets:
    # Agent/TCP counts in packets. The one 40-byte packet is its opening SYN (syn_ true).
    assert sent[("0", MSS + 40)] == 1 + -(-PIECES // MSS)
    assert sent[("0", 40)] == 1
    # TCPSink ACKs every packet; TCPSink/DelAck every other (or after interval_, 100 ms).
    ratio = sent[("1", 40)] / sent[("0", MSS + 40)]
    assert ratio == pytest.approx(acks_per_segment, abs=0.06)
