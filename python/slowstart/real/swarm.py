"""`slowstart real` on a `[swarm]` scenario: real libtorrent peers, each behind its own emulated
access link, trading the scenario's file.

Topology: a star. Each peer has a namespace `ss-p<i>-<pid>` holding one TUN device and a
libtorrent process (_swarm_peer.py); its access link is one slowstart-emu (crates/slowstart-emu)
whose forward direction is the peer's uplink (`swarm.up`, `swarm.buffer`) and reverse its
downlink (`swarm.down`, `swarm.down_buffer`), each with the peer's one-way `delay`, as the
simulated swarm builds them (crates/slowstart-sim/src/swarm/engine/mod.rs). The far TUN devices
of all peers sit in one hub namespace `ss-hub-<pid>` that routes between them, so a packet from
peer i to peer j crosses i's uplink and j's downlink and nothing else, as simulated.

The swarm is the simulated one's: the simulation of the same scenario and seed is run first
and gives each peer its arrival time, access delay and transport (population "50-50" draws
them), so real and simulated swarms differ only in what the peers do. Peer 0.. are the seeds,
present at time 0. Each leecher, at its arrival, connects (`connect_peer`) to every peer that
arrived before it; there is no tracker, DHT, local discovery, UPnP, NAT-PMP or encryption. A
peer's transport is libtorrent's `enable_outgoing_utp`/`enable_outgoing_tcp` (the one its
connections use, as the connecting side chooses); it accepts both, so in a 50-50 swarm a
connection's transport is its connector's. Linux TCP in every namespace runs `swarm.tcp.cc`
(cubic for the library's others), set on the routes (`congctl`, testbed.route_cc) with
`swarm.tcp.initcwnd`: the namespace's own default would stay the root's bbr; uTP is
libtorrent's own LEDBAT with `utp_target_delay` from `swarm.utp.cc`'s target.

A real swarm runs `seeding = "never-leave"` and ends when every leecher has the file. What it
does not run is refused with one line naming the key: random stays, a block other than
libtorrent's 16 KiB, a piece that is not a power of two, more than MAX_PEERS peers.
A peer that dies, or a swarm still unfinished at the scenario's duration, is one line too;
every process and namespace goes with the run (testbed.workdir, testbed.cleanup_stale).

The emulators run at real-time priority (testbed.REALTIME_PRIORITY), the peers at normal
priority: the links keep time on a busy machine, and a peer that is late is what it is.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.real import testbed
from slowstart.real.summary import frame, schema
from slowstart.real.swarm_peers import (
    DRAIN_S,
    HUB_PREFIX,
    Peer,
    payload,
    queues_of,
    requests_of,
    summary_of,
    utp_target_s,
)
from slowstart.real.testbed import LINUX_CC, RealUnavailable
from slowstart.running.api import SwarmResult, run_config
from slowstart.units import ScenarioError

lt = lazy.module("libtorrent")
np = lazy.module("numpy")
pd = lazy.module("pandas")


# One libtorrent process and one emulator per peer share this machine's cores.
MAX_PEERS = 32
# libtorrent requests 16 KiB blocks (block_size, libtorrent/config.hpp); it cannot be set.
LIBTORRENT_BLOCK = 16 * 1024
PORT = 6881
# A peer has this long to listen and load its torrent (a seed hashes nothing: the torrent is
# made from its file).
READY_TIMEOUT_S = 30.0
# How often the drain reads the peers' totals (each peer reports its progress and request
# queues every `swarm.queue_sample`, as the simulator samples its queues).
DRAIN_POLL_S = 0.1
STOP_GRACE_S = 5.0
# libtorrent adds its connections' bytes to a torrent's totals at its once-a-second tick
# (torrent::second_tick, `m_stat += p->statistics()`), so equal totals mean nothing is in
# flight only once they have held still past a tick: bytes sent and not yet counted at either
# end are counted at one end first (seen: 2304 bytes).
SETTLED_S = 1.5
_PEER = Path(__file__).with_name("_swarm_peer.py")


class SwarmError(ScenarioError):
    """The real swarm cannot run this scenario, or failed: one line, exit status 2."""


def libtorrent_missing() -> str | None:
    """Why libtorrent cannot be imported here, or None."""
    try:
        lt.__version__  # noqa: B018 - the first use imports it
    except ImportError as e:
        return (
            f"libtorrent: cannot import it ({e}); the PyPI wheel is in the dev extras "
            "(make setup), or pip install libtorrent"
        )
    return None


def check_swarm(config: dict[str, Any]) -> None:
    """SwarmError naming the first key a real swarm cannot run."""
    w = config["swarm"]
    peers = w["seeds"] + w["leechers"]
    if peers > MAX_PEERS:
        raise SwarmError(
            f"swarm.leechers: a real swarm runs at most {MAX_PEERS} peers (one libtorrent "
            f"process and one emulator each), got {w['seeds']} seeds and {w['leechers']} "
            "leechers"
        )
    if w["seeding"] != "never_leave":
        raise SwarmError(
            'swarm.seeding: a real swarm runs "never-leave" peers (it ends when every '
            f"leecher has the file), got {w['seeding'].replace('_', '-')!r}"
        )
    if w["block_bytes"] != LIBTORRENT_BLOCK:
        raise SwarmError(
            f'swarm.block: libtorrent requests 16 KiB blocks, so a real swarm needs "16KiB", '
            f"got {w['block_bytes']} bytes"
        )
    piece = w["piece_bytes"]
    if piece & (piece - 1):
        raise SwarmError(
            f'swarm.piece: libtorrent needs a power of two such as "256KiB", got {piece} bytes'
        )
    stop = w["stop_after_completions"]
    if stop is not None and stop < w["leechers"]:
        raise SwarmError(
            f'swarm.stop_after: a real swarm runs until every leecher is done ("none"), got {stop}'
        )
    tcp_cc = w["tcp"]["cc"]["name"]
    if tcp_cc not in LINUX_CC:
        raise SwarmError(
            f"swarm.tcp.cc: a real swarm's TCP is Linux's: {', '.join(LINUX_CC)}, got {tcp_cc!r}"
        )
    utp_cc = w["utp"]["cc"]["name"]
    if utp_cc not in ("ledbat", "utp"):
        raise SwarmError(
            f"swarm.utp.cc: a real swarm's uTP is libtorrent's LEDBAT (ledbat or utp, with its "
            f"target), got {utp_cc!r}"
        )


def draws(config: dict[str, Any]) -> list[dict[str, Any]]:
    """Each peer's arrival, access delay and transport: the simulated swarm's of this seed."""
    sim = run_config(config)
    return [
        {
            "id": p["id"],
            "seed": bool(p["initial_seed"]),
            "arrival_ns": round(p["arrival_s"] * 1e9),
            "delay_ns": round(p["access_delay_s"] * 1e9),
            "transport": p["transport"],
        }
        for p in sim.summary["peers"]
        if not p.get("replacement")
    ]


def make_torrent(work: Path, swarm: dict[str, Any], seed: int) -> tuple[Path, Path]:
    """The shared file (seeded pseudo-random bytes, so every piece differs) and its v1 torrent."""
    src = work / "file"
    src.mkdir()
    data = src / "data.bin"
    data.write_bytes(np.random.default_rng(seed).bytes(swarm["file_bytes"]))
    fs = lt.file_storage()
    lt.add_files(fs, str(data))
    ct = lt.create_torrent(fs, swarm["piece_bytes"], flags=lt.create_torrent.v1_only)
    ct.set_creator("slowstart")
    lt.set_piece_hashes(ct, str(src))
    torrent = work / "swarm.torrent"
    torrent.write_bytes(lt.bencode(ct.generate()))
    return data, torrent


class Star:
    """The hub namespace and every peer's namespace, emulator and process; `close()` undoes
    everything and leaves each emulator's statistics in its peer."""

    def __init__(self, config: dict[str, Any], peers: list[Peer], work: Path) -> None:
        self.pid = os.getpid()
        self.hub = f"ss-hub-{self.pid}"
        self.config, self.peers, self.work = config, peers, work
        self.namespaces: list[str] = []
        self.warned = False

    def open(self, pcap: str | None) -> None:
        w = self.config["swarm"]
        access = w["access"]
        testbed._ip("netns", "add", self.hub)
        self.namespaces.append(self.hub)
        testbed.sysctl(
            self.hub,
            {
                "net.ipv4.ip_forward": "1",
                "net.ipv4.conf.all.rp_filter": "0",
                "net.ipv4.conf.default.rp_filter": "0",
                "net.ipv6.conf.all.disable_ipv6": "1",
                "net.ipv6.conf.default.disable_ipv6": "1",
            },
        )
        testbed._ip("-n", self.hub, "link", "set", "lo", "up")
        tcp = w["tcp"]
        emulator = testbed.emulator_binary()
        for p in self.peers:
            d = p.draw["delay_ns"]
            emu_cfg = {
                "forward": _direction(access["up_bps"], d, access["up_queue"]),
                "reverse": _direction(access["down_bps"], d, access["down_queue"]),
                "seed": self.config.get("seed", 0),
                "mss": tcp["mss"],
                "duration_ns": self.config["duration_ns"],
            }
            (p.folder / "emu.json").write_text(json.dumps(emu_cfg), encoding="utf-8")
            cap = None
            if pcap:
                cap = Path(pcap) / f"peer{p.id}"
                cap.mkdir(parents=True, exist_ok=True)
            p.emu = testbed.spawn_emulator(
                emulator, p.folder / "emu.json", p.tun, p.hub_tun, p.emu_log, cap
            )
            self._realtime(p.emu)
            if not testbed.emulator_ready(p.emu):
                raise SwarmError(f"peer {p.id}: slowstart-emu did not start")
            testbed._ip("netns", "add", p.ns)
            self.namespaces.append(p.ns)
            testbed._ip("link", "set", p.tun, "netns", p.ns)
            testbed._ip("link", "set", p.hub_tun, "netns", self.hub)
            testbed.sysctl(p.ns, testbed.endpoint_sysctls(p.tun, LINUX_CC[tcp["cc"]["name"]]))
            testbed.sysctl(self.hub, {f"net.ipv6.conf.{p.hub_tun}.disable_ipv6": "1"})
            testbed._ip("-n", p.ns, "link", "set", "lo", "up")
            testbed._ip("-n", p.ns, "link", "set", p.tun, "mtu", "1500", "txqueuelen", "10000")
            testbed._ip("-n", p.ns, "link", "set", p.tun, "up")
            testbed._ip("-n", p.ns, "addr", "add", f"{p.addr}/32", "dev", p.tun)
            testbed._ip(
                "-n",
                p.ns,
                "route",
                "replace",
                f"{HUB_PREFIX}0/24",
                "dev",
                p.tun,
                "src",
                p.addr,
                "initcwnd",
                str(tcp["initcwnd"]),
                "initrwnd",
                str(tcp["initrwnd"]),
                *testbed.route_cc(LINUX_CC[tcp["cc"]["name"]]),
            )
            hub = ("-n", self.hub, "link", "set", p.hub_tun)
            testbed._ip(*hub, "mtu", "1500", "txqueuelen", "10000")
            testbed._ip(*hub, "up")
            testbed._ip("-n", self.hub, "route", "replace", f"{p.addr}/32", "dev", p.hub_tun)

    def _realtime(self, p: subprocess.Popen[str]) -> None:
        why = testbed._keep_time(p)
        if why and not self.warned:
            self.warned = True
            print(
                f"warning: no real-time priority for the emulators ({why}): on a busy machine "
                "the emulated links may be late",
                file=sys.stderr,
            )

    def close(self) -> None:
        """Stop every peer, then every emulator (each prints its statistics), delete the
        namespaces. A signal meanwhile waits until it is done (testbed.workdir)."""
        testbed._SIGNALS["closing"] += 1
        try:
            procs = [p.proc for p in self.peers if p.proc is not None]
            for proc in procs:
                if proc.stdin is not None:
                    with contextlib.suppress(OSError):
                        proc.stdin.close()  # a peer still waiting for its arrival ends
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            for proc in procs:
                try:
                    proc.wait(timeout=STOP_GRACE_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            for p in self.peers:
                if p.emu is not None and p.emu.poll() is None:
                    p.tun_tx_dropped = sum(  # an unreadable count as 0
                        testbed.tun_tx_dropped(ns, dev) or 0
                        for ns, dev in ((p.ns, p.tun), (self.hub, p.hub_tun))
                    )
                    p.emu.send_signal(signal.SIGTERM)
            for p in self.peers:
                if p.emu is None:
                    continue
                try:
                    out, _ = p.emu.communicate(timeout=5)
                except subprocess.TimeoutExpired:
                    p.emu.kill()
                    out, _ = p.emu.communicate()
                with contextlib.suppress(json.JSONDecodeError, IndexError):
                    p.stats = json.loads(out.strip().splitlines()[-1])
                p.emu = None
            for ns in reversed(self.namespaces):
                testbed._kill_ns(ns)
            self.namespaces.clear()
        finally:
            testbed._SIGNALS["closing"] -= 1


def _direction(rate_bps: int, delay_ns: int, queue: dict[str, Any]) -> dict[str, Any]:
    return {
        "rate_bps": rate_bps,
        "delay_ns": delay_ns,
        "queue": queue,
        "loss": 0.0,
        "jitter_ns": 0,
        "drops": [],
    }


def _transports(population: str, transport: str) -> dict[str, dict[str, bool]]:
    """libtorrent's enable_incoming/outgoing_utp/tcp for a peer: one transport only in a uTP or
    TCP swarm; in a 50-50 swarm its own outgoing, and both incoming (a connection's transport
    is its connector's)."""
    if population in ("utp", "tcp"):
        return {
            t: {"incoming": t == population, "outgoing": t == population} for t in ("utp", "tcp")
        }
    return {t: {"incoming": True, "outgoing": t == transport} for t in ("utp", "tcp")}


def _read(peer: Peer) -> None:
    assert peer.proc is not None and peer.proc.stdout is not None
    for line in peer.proc.stdout:
        line = line.strip()
        if line == "ready":
            peer.ready.set()
            continue
        with contextlib.suppress(json.JSONDecodeError):
            row = json.loads(line)
            if "done" in row:
                peer.done_ns = int(row["done"])
            else:
                peer.lines.append(row)


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except FileNotFoundError:
        return "no stderr"
    return " | ".join(x.strip() for x in text[-lines:]) or "no stderr"


def run_swarm(config: dict[str, Any], pcap: str | None = None, progress: Any = None) -> Any:
    """Run a canonical `[swarm]` config with real libtorrent peers; returns a Result
    (slowstart.running.api) whose summary has the simulated swarm's `peers` and `swarm` fields, and
    whose queues are each uplink's occupancy sampled every `swarm.queue_sample` from its
    emulator's log. `progress(done, total)` is called with the leechers done."""
    reason = testbed.unavailable_reason() or libtorrent_missing()
    if reason:
        raise RealUnavailable(reason)
    check_swarm(config)
    w = config["swarm"]
    peers_drawn = draws(config)
    duration_ns = config["duration_ns"]
    with testbed.workdir() as work:
        testbed.cleanup_stale()
        data, torrent = make_torrent(work, w, config.get("seed", 0))
        peers = [Peer(d, os.getpid(), work) for d in peers_drawn]
        star = Star(config, peers, work)
        testbed._ACTIVE.append(star)
        try:
            star.open(pcap)
            t0 = _start(star, peers, data, torrent, w)
            _wait(peers, t0, duration_ns, w["queue_sample_ns"] / 1e9, progress)
        finally:
            star.close()
            testbed._ACTIVE.remove(star)
        summary = summary_of(config, peers, t0, data)
        queues = queues_of(peers, t0, w["queue_sample_ns"])
        requests = requests_of(peers, t0)
    result = SwarmResult(config, summary, _no_flows(), queues, connections=requests)
    for warning in summary["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    return result


def _start(star: Star, peers: list[Peer], data: Path, torrent: Path, w: dict[str, Any]) -> int:
    """Start every peer's process (seeds with the file); once all listen, time 0 is set and
    each connects at its arrival to those that arrived before it. Returns time 0 (monotonic
    ns)."""
    target_ms = round(utp_target_s(w) * 1e3)
    order = sorted(peers, key=lambda p: (p.draw["arrival_ns"], p.id))
    for k, p in enumerate(order):
        if p.draw["seed"]:
            os.link(data, p.folder / data.name)
        cfg = {
            "torrent": str(torrent),
            "folder": str(p.folder),
            "addr": p.addr,
            "port": PORT,
            **_transports(w["population"], p.draw["transport"]),
            "utp_target_delay_ms": target_ms,
            "connect": [[q.addr, PORT] for q in order[:k]],
            "sample_ns": w["queue_sample_ns"],
        }
        (p.folder / "peer.json").write_text(json.dumps(cfg), encoding="utf-8")
        with open(p.stderr, "w") as err:
            p.proc = subprocess.Popen(
                ["ip", "netns", "exec", p.ns, sys.executable, str(_PEER)]
                + [str(p.folder / "peer.json")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                cwd=p.folder,
                env=testbed._child_env(),
            )
        threading.Thread(target=_read, args=(p,), daemon=True).start()
    deadline = time.monotonic() + READY_TIMEOUT_S
    for p in peers:
        while not p.ready.wait(0.05):
            assert p.proc is not None
            if p.proc.poll() is not None:
                raise SwarmError(
                    f"peer {p.id}: libtorrent exited with status {p.proc.returncode} before "
                    f"listening: {_tail(p.stderr)}"
                )
            if time.monotonic() > deadline:
                raise SwarmError(
                    f"peer {p.id}: not listening after {READY_TIMEOUT_S:.0f} s: {_tail(p.stderr)}"
                )
    t0 = time.monotonic_ns() + testbed.START_LEAD_NS
    for p in peers:
        assert p.proc is not None and p.proc.stdin is not None
        p.proc.stdin.write(f"arrive {t0 + p.draw['arrival_ns']}\n")
        p.proc.stdin.flush()
    return t0


def _wait(peers: list[Peer], t0: int, duration_ns: int, sample_s: float, progress: Any) -> None:
    """Until every leecher has the file (then `_drain`); SwarmError for a peer that exits, or
    a swarm still unfinished at the duration."""
    leechers = [p for p in peers if not p.draw["seed"]]
    while True:
        for p in peers:
            assert p.proc is not None
            if p.proc.poll() is not None:
                raise SwarmError(
                    f"peer {p.id}: libtorrent exited with status {p.proc.returncode}: "
                    f"{_tail(p.stderr)}"
                )
        done = sum(p.done_ns is not None for p in leechers)
        if progress is not None:
            progress(done, len(leechers))
        if done == len(leechers):
            _drain(peers, sample_s)
            return
        if time.monotonic_ns() >= t0 + duration_ns:
            left = [str(p.id) for p in leechers if p.done_ns is None]
            raise SwarmError(
                f"duration: the swarm was unfinished at {duration_ns / 1e9:g} s (leechers "
                f"{', '.join(left)} still downloading); its peers were stopped and the "
                "namespaces removed"
            )
        time.sleep(0.05)


def _drain(peers: list[Peer], sample_s: float) -> None:
    """Until every block a peer counted as uploaded has been counted as downloaded (libtorrent
    counts a block sent once the socket took it, and the connections between seeds stay open,
    _swarm_peer.py) and the totals have held still for SETTLED_S (and two of the peers'
    samples, `sample_s` apart), or DRAIN_S; the summary warns if they still differ."""
    end = time.monotonic() + DRAIN_S
    settled_s = max(SETTLED_S, 2 * sample_s)
    held, since = None, time.monotonic()
    while time.monotonic() < end:
        totals = payload(peers)
        if totals != held:
            held, since = totals, time.monotonic()
        elif totals[0] == totals[1] and time.monotonic() - since >= settled_s:
            return
        time.sleep(DRAIN_POLL_S)


def _no_flows() -> Any:
    return frame("flows", {c: [] for c in schema()["flows"]}, {})
