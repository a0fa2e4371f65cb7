"""A real BitTorrent swarm (`slowstart real` on a [swarm] scenario, python/slowstart/real/swarm.py):
libtorrent peers, each behind its own emulated access link, in a star through a hub namespace.

The runs need root (namespaces, TUN) and libtorrent (the PyPI wheel in the dev extras); elsewhere
they are skipped, saying which is missing. Each is judged by what the peers and the emulators
logged, not by the wall clock.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from conftest import NETWORK, cli
from slowstart.loading.scenario import load
from slowstart.real import testbed
from slowstart.real.swarm import SwarmError, check_swarm, libtorrent_missing
from test_real import REASON, processes

NO_LIBTORRENT = libtorrent_missing()
needs_swarm = pytest.mark.skipif(
    REASON is not None or NO_LIBTORRENT is not None,
    reason=f"skipped: {REASON or NO_LIBTORRENT}",
)

pytestmark = NETWORK

# 1 seed and 3 leechers at 4/20 Mbps, a 2 MB file in 8 pieces: the seed's uplink alone would
# take 4 s per copy, so the leechers must trade pieces among themselves.
SMALL = """
duration = "60s"
seed = 3
[swarm]
seeds = 1
leechers = 3
arrival_mean = "0.5s"
file = "2MB"
piece = "256KiB"
population = "{population}"
seeding = "never-leave"
stop_after = "none"
up = "4Mbps"
down = "20Mbps"
buffer = "100pkt"
down_buffer = "100pkt"
delay = ["5ms", "20ms"]
[swarm.tcp]
cc = "cubic"
mss = 1448
initcwnd = 10
delayed_ack = true
[swarm.utp]
cc = "utp"
mss = 1448
"""


@pytest.fixture(scope="module", autouse=True)
def emu_built():
    """The emulator built once, before the runs, and named to each (as in test_real.py)."""
    with pytest.MonkeyPatch.context() as mp:
        if REASON is None:
            mp.setenv("SLOWSTART_EMU", testbed.emulator_binary())
        yield


def swarm_leftovers(pid: int) -> list[str]:
    """What the real swarm of process `pid` made and left: its hub and peer namespaces, TUN
    devices, work folders and processes."""
    own = re.compile(rf"ss-(?:hub|p\d+)-{pid}$")
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    found = [w for w in netns.split() if own.match(w)]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    tun = re.compile(rf"sst{pid}[ph]\d+$")
    found += [d for d in {w.rstrip(":").split("@")[0] for w in links.split()} if tun.match(d)]
    prefix = testbed.RunNames(pid).workdir_prefix
    found += [d.name for d in Path(tempfile.gettempdir()).glob(prefix + "*")]
    return found + processes(pid)


def write(tmp_path: Path, population: str) -> str:
    path = tmp_path / f"swarm-{population}.toml"
    path.write_text(SMALL.format(population=population))
    return str(path)


def test_a_real_swarm_refuses_what_it_cannot_run(tmp_path):
    """One line naming the key, before anything starts."""
    base = load(write(tmp_path, "utp"))
    check_swarm(base)
    for override, message in (
        ("swarm.seeding=random-stay", 'swarm.seeding: a real swarm runs "never-leave" peers'),
        ("swarm.block=8KiB", "swarm.block: libtorrent requests 16 KiB blocks"),
        ("swarm.piece=200KiB", "swarm.piece: libtorrent needs a power of two"),
        ("swarm.leechers=40", "swarm.leechers: a real swarm runs at most 32 peers"),
        ("swarm.stop_after=2", "swarm.stop_after: a real swarm runs until every leecher"),
        ("swarm.tcp.cc=vegas", "swarm.tcp.cc: a real swarm's TCP is Linux's"),
        ("swarm.utp.cc=cubic", "swarm.utp.cc: a real swarm's uTP is libtorrent's LEDBAT"),
    ):
        with pytest.raises(SwarmError, match=re.escape(message)):
            check_swarm(load(write(tmp_path, "utp"), set=[override]))


def test_without_libtorrent_a_real_swarm_says_so(tmp_path, monkeypatch):
    """Before anything starts: one line naming libtorrent and how to install it."""
    from slowstart.real import swarm as real_swarm

    monkeypatch.setattr(testbed, "unavailable_reason", lambda: None)
    monkeypatch.setattr(real_swarm, "libtorrent_missing", lambda: "libtorrent: cannot import it")
    with pytest.raises(testbed.RealUnavailable, match="^libtorrent: cannot import it$"):
        real_swarm.run_swarm(load(write(tmp_path, "utp")))


@needs_swarm
@pytest.mark.parametrize("population", ["utp", "tcp"])
def test_a_real_swarm_delivers_the_file_to_every_leecher(tmp_path, population):
    """1 seed + 3 leechers: every leecher has the seed's exact bytes (libtorrent checks each
    piece's SHA-1, and the run compares the files), over the population's transport only; the
    emulators' queue logs saw the peers' packets; nothing is left behind."""
    out = tmp_path / "out"
    ran = cli("real", write(tmp_path, population), "--json", "--out", str(out), timeout=240)
    assert ran.returncode == 0, ran.stderr
    s = json.loads(ran.stdout)
    peers = s["peers"]
    leechers = [p for p in peers if not p["initial_seed"]]
    assert len(peers) == 4 and len(leechers) == 3
    size = 2_000_000
    for p in leechers:
        assert p["file_ok"], p
        assert p["bytes_down"] >= size
        assert p["completion_s"] > 0
        # 2 MB through a 20 Mbps downlink takes 0.8 s at least.
        assert p["completion_s"] > 0.8
    # One transport everywhere: every connection at the end is uTP, or none is.
    utp = population == "utp"
    assert all(p["utp_connections"] == (p["connections"] if utp else 0) for p in peers)
    # Each leecher connected to every peer before it: a full mesh of 4.
    assert all(p["connected_to"] == [q for q in range(4) if q != p["id"]] for p in peers)
    # Bytes conserved: every payload byte a peer counted as sent, one counted as received (a
    # block that came twice in end game counts twice at both ends; the run waits for the
    # blocks in flight at the last completion, real_swarm._drain).
    up, down = sum(p["bytes_up"] for p in peers), sum(p["bytes_down"] for p in peers)
    assert down >= 3 * size and up == down
    # The seed alone cannot have sent all 6 MB: the leechers traded among themselves.
    assert sum(p["bytes_up"] for p in leechers) > 0
    # Every uplink forwarded packets, and its queue log (queues.parquet, sampled) saw them.
    ups = [link for link in s["links"] if link["name"].endswith(".up")]
    assert len(ups) == 4 and all(link["forwarded"] > 0 for link in ups)
    total_forwarded = sum(link["forwarded"] for link in ups)
    assert total_forwarded >= 3 * size / 1448
    queues = pd.read_parquet(out / "queues.parquet")
    assert set(queues["link"].astype(str)) == {f"peer{i}.up" for i in range(4)}
    assert queues["queue_packets"].max() > 0
    # Each end's view of every connection (connections.parquet): the seed asks for nothing; a
    # leecher has requested (queue_bytes) only blocks it picked (queue), 16 KiB each, and at
    # some point had requests out to the seed.
    conns = pd.read_parquet(out / "connections.parquet")
    assert set(conns["peer"]) == {0, 1, 2, 3}
    seed = conns[conns["peer"] == 0]
    assert (seed["queue"] == 0).all() and (seed["queue_bytes"] == 0).all()
    leech = conns[conns["peer"] != 0]
    assert (leech["queue_bytes"] <= leech["queue"] * 16 * 1024).all()
    assert (leech[leech["remote"] == 0]["queue_bytes"] > 0).any()
    assert (conns[["upload_queue", "send_buffer"]] >= 0).all().all()
    assert s["tun_tx_dropped"] == 0 and s["warnings"] == []
    assert swarm_leftovers(ran.pid) == []


@needs_swarm
def test_a_swarm_past_its_duration_is_one_line_and_leaves_nothing(tmp_path):
    """A swarm that cannot finish by its duration: one line, exit 2, the star removed."""
    path = write(tmp_path, "utp")
    ran = cli("real", path, "--set", "duration=3s", timeout=120)
    assert ran.returncode == 2, ran.stderr
    assert "duration: the swarm was unfinished at 3 s" in ran.stderr
    assert len(ran.stderr.strip().splitlines()) == 1, ran.stderr
    assert swarm_leftovers(ran.pid) == []


@pytest.mark.skipif(REASON is not None, reason=f"skipped: {REASON}")
def test_a_route_gives_a_namespace_its_tcp_algorithm_where_the_sysctl_may_not():
    """libtorrent's sockets take the namespace's algorithm: the swarm sets it on the peers'
    routes (testbed.route_cc), since a namespace's own default takes only what the root
    namespace allows (on this host cubic is refused and bbr stays)."""
    ns = f"ss-cc-probe-{os.getpid()}"
    script = (
        "import socket\n"
        "s = socket.socket(); s.bind(('10.203.0.1', 0)); s.listen()\n"
        "c = socket.create_connection(s.getsockname()); a, _ = s.accept()\n"
        f"print(*(x.getsockopt(socket.IPPROTO_TCP, {socket.TCP_CONGESTION}, 16)"
        ".rstrip(b'\\0').decode() for x in (c, a)))\n"
    )
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        run = ["ip", "netns", "exec", ns]
        testbed.sysctl(ns, testbed.endpoint_sysctls("lo", "cubic"))
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        subprocess.run(["ip", "-n", ns, "addr", "add", "10.203.0.1/32", "dev", "lo"], check=True)
        for cc in ("reno", "cubic"):
            subprocess.run(
                ["ip", "-n", ns, "route", "replace", "local", "10.203.0.1", "dev", "lo"]
                + ["table", "local", *testbed.route_cc(cc)],
                check=True,
            )
            got = subprocess.run(
                [*run, "python3", "-c", script], check=True, capture_output=True, text=True
            )
            # Both the connecting and the accepting end.
            assert got.stdout.split() == [cc, cc], got.stdout
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
