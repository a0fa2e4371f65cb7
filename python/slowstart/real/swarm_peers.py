"""A real swarm's peers (real/swarm.py runs them): each one's record (`Peer`), its address on
the hub, and what is read from their reports and emulator logs once the swarm is over: the
summary in the simulator's names, the uplink queue series and the request queues."""

from __future__ import annotations

import hashlib
import math
import subprocess
import threading
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.real.summary import empty_trace, trace_frame
from slowstart.running.swarm_results import delay_target

lt = lazy.module("libtorrent")
np = lazy.module("numpy")
pd = lazy.module("pandas")

HUB_PREFIX = "10.201.0."
# After the last leecher is done: how long the blocks still in flight have to arrive (a 16 KiB
# block over the slowest 4 Mbps uplink with a full 100-packet queue takes under 0.4 s).
DRAIN_S = 8.0


def address(i: int) -> str:
    """Peer `i`'s address."""
    return f"{HUB_PREFIX}{i + 1}"


def peer_of(addr: str) -> int:
    """The peer whose address `addr` is."""
    return int(addr.removeprefix(HUB_PREFIX)) - 1


class Peer:
    """A peer's namespace, emulator, libtorrent process and what it reported."""

    def __init__(self, draw: dict[str, Any], pid: int, work: Path) -> None:
        i = draw["id"]
        self.draw, self.id = draw, i
        self.ns = f"ss-p{i}-{pid}"
        self.tun, self.hub_tun = f"sst{pid}p{i}", f"sst{pid}h{i}"
        self.addr = address(i)
        self.folder = work / f"peer{i}"
        self.folder.mkdir()
        self.emu_log = self.folder / "emu.csv"
        self.emu: subprocess.Popen[str] | None = None
        self.proc: subprocess.Popen[str] | None = None
        self.lines: list[dict[str, Any]] = []
        self.ready = threading.Event()
        self.done_ns: int | None = None
        self.stats: dict[str, Any] = {}
        self.stderr = self.folder / "peer.err"
        # Packets its two TUN devices dropped before the emulator read them (testbed.py).
        self.tun_tx_dropped = 0


def same_bytes(a: Path, b: Path) -> bool:
    if not b.exists() or a.stat().st_size != b.stat().st_size:
        return False
    return hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()


def request_queue(peer: Peer) -> tuple[float | None, int | None]:
    """Mean and largest request-queue depth (blocks requested and not yet received) of the
    peer's connections that had any, over its samples before it was done."""
    depths = [
        c["queue"]
        for row in peer.lines
        if peer.done_ns is None or row["t_ns"] < peer.done_ns
        for c in row["conns"]
        if c["queue"] > 0
    ]
    if not depths:
        return None, None
    return sum(depths) / len(depths), max(depths)


def summary_of(config: dict[str, Any], peers: list[Peer], t0: int, data: Path) -> dict[str, Any]:
    w = config["swarm"]
    rows, links, warnings = [], [], []
    done = sorted((p.done_ns, p.id) for p in peers if p.done_ns is not None)
    rank = {pid: k + 1 for k, (_, pid) in enumerate(done)}
    for p in peers:
        last = p.lines[-1] if p.lines else {}
        arrival_s = p.draw["arrival_ns"] / 1e9
        done_s = None if p.done_ns is None else (p.done_ns - t0) / 1e9
        mean_q, max_q = request_queue(p)
        # Every peer it was connected to over the run, and whether over uTP.
        remotes = {peer_of(c["ip"]): c["utp"] for row in p.lines for c in row["conns"]}
        got = p.folder / data.name
        rows.append(
            {
                "id": p.id,
                "transport": p.draw["transport"],
                "initial_seed": p.draw["seed"],
                "replacement": False,
                "arrival_s": arrival_s,
                "done_s": done_s,
                "completion_s": None if done_s is None else done_s - arrival_s,
                "completion_rank": rank.get(p.id),
                "left_s": None,
                "bytes_up": last.get("payload_up", 0),
                "bytes_down": last.get("payload_down", 0),
                "access_delay_s": p.draw["delay_ns"] / 1e9,
                "connections": len(remotes),
                "wire_bytes_up": last.get("up", 0),
                "wire_bytes_down": last.get("down", 0),
                "utp_connections": sum(remotes.values()),
                "connected_to": sorted(remotes),
                "request_queue_mean": mean_q,
                "request_queue_max": max_q,
                "file_ok": True if p.draw["seed"] else same_bytes(data, got),
            }
        )
        if not p.draw["seed"] and not rows[-1]["file_ok"]:
            warnings.append(f"peer {p.id}: its copy of the file differs from the seed's")
        if p.tun_tx_dropped:
            warnings.append(
                f"peer {p.id}'s TUN devices dropped {p.tun_tx_dropped} packets before the "
                "emulator saw them (losses outside the emulated link)"
            )
        for name, direction in ((f"peer{p.id}.up", "forward"), (f"peer{p.id}.down", "reverse")):
            row = dict(p.stats.get(direction, {}))
            links.append({**row, "name": name})
    drops = sum(x.get("drops", 0) for x in links)
    up, down = payload(peers)
    if up != down:
        warnings.append(
            f"payload: the peers uploaded {up} bytes and downloaded {down} ({DRAIN_S:g} s "
            "after the last leecher was done)"
        )
    return {
        "scenario": config.get("name"),
        "mode": "real",
        "stack": "libtorrent",
        "seed": config.get("seed", 0),
        "flows": [],
        "links": links,
        "apps": [],
        "peers": rows,
        "swarm": {
            "population": w["population"],
            "seeding": w["seeding"],
            "file_bytes": w["file_bytes"],
            "pieces": math.ceil(w["file_bytes"] / w["piece_bytes"]),
            "blocks_per_piece": w["piece_bytes"] // w["block_bytes"],
            "peers_joined": len(peers),
            "completions": len(done),
            "connections_opened": sum(r["connections"] for r in rows) // 2,
            "stopped_at_completions": False,
            "uplink_drops": drops,
            "libtorrent": libtorrent_version(),
            "utp_target_delay_s": utp_target_s(w),
        },
        "tun_tx_dropped": sum(p.tun_tx_dropped for p in peers),
        "warnings": warnings,
    }


def libtorrent_version() -> str:
    return str(lt.__version__)


def occupancy(log: Path, direction: str, times_ns: Any) -> tuple[Any, Any]:
    """Queue bytes and packets of the link's `direction` just after the last event at or
    before each of `times_ns` (monotonic), from the emulator's log."""
    q = pd.read_csv(log)
    q = q[(q["dir"] == direction)]
    t = q["t_ns"].to_numpy()
    k = np.searchsorted(t, times_ns, side="right") - 1
    have = k >= 0
    b = np.where(have, q["queue_bytes"].to_numpy()[np.maximum(k, 0)], 0) if len(q) else 0 * k
    n = np.where(have, q["queue_packets"].to_numpy()[np.maximum(k, 0)], 0) if len(q) else 0 * k
    return b, n


def queues_of(peers: list[Peer], t0: int, every_ns: int) -> Any:
    """Each uplink's occupancy every `every_ns` from time 0 to the last completion, as the
    simulated swarm samples it (link `peerN.up`)."""
    end = max((p.done_ns for p in peers if p.done_ns is not None), default=t0)
    times = np.arange(t0, end + 1, every_ns, dtype=np.int64)
    parts = []
    for p in peers:
        if not p.emu_log.exists():
            continue
        b, n = occupancy(p.emu_log, "forward", times)
        columns = [(times - t0) / 1e9, f"peer{p.id}.up", np.asarray(b, dtype=np.uint64)]
        parts.append(trace_frame("queues", [*columns, np.asarray(n, dtype=np.uint64)], {}))
    if not parts:
        return empty_trace("queues")
    out = pd.concat(parts, ignore_index=True)
    out["link"] = out["link"].astype("category")
    return out


# One row per connection and sample (`_requests`, written as connections.parquet): the blocks
# `peer` picked from `remote` (`queue`; `queue_bytes` of them requested), `remote`'s requests
# waiting at `peer` (`upload_queue`) and `peer`'s buffered bytes for it (`send_buffer`).
REQUEST_COLUMNS = (
    "t_s",
    "peer",
    "remote",
    "utp",
    "queue",
    "queue_bytes",
    "upload_queue",
    "send_buffer",
    "downloading",
)


def requests_of(peers: list[Peer], t0: int) -> Any:
    """Every sample of every connection's request queues at both ends (REQUEST_COLUMNS)."""
    rows = [
        {
            "t_s": (row["t_ns"] - t0) / 1e9,
            "peer": p.id,
            "remote": peer_of(c["ip"]),
            "utp": c["utp"],
            "queue": c["queue"],
            "queue_bytes": c["queue_bytes"],
            "upload_queue": c["upload_queue"],
            "send_buffer": c["send_buffer"],
            "downloading": p.done_ns is None or row["t_ns"] < p.done_ns,
        }
        for p in peers
        for row in p.lines
        for c in row["conns"]
    ]
    return pd.DataFrame(rows, columns=list(REQUEST_COLUMNS))


def utp_target_s(swarm: dict[str, Any]) -> float:
    """libtorrent's `utp_target_delay`: `swarm.utp.cc`'s target (utp's default is
    libtorrent's, 100 ms)."""
    return delay_target(swarm["utp"]["cc"])


def payload(peers: list[Peer]) -> tuple[int, int]:
    """Payload bytes uploaded and downloaded, summed over the peers' latest samples."""
    last = [p.lines[-1] for p in peers if p.lines]
    return sum(r["payload_up"] for r in last), sum(r["payload_down"] for r in last)
