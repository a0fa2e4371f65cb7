"""One peer of `slowstart real` on a `[swarm]` scenario: a libtorrent session in its own
namespace, run with `ip netns exec` (swarm.py starts it).

    python _swarm_peer.py CONFIG.json

Standalone (libtorrent and the standard library only) so each starts fast. CONFIG names the
torrent, the folder holding (seed) or receiving (leecher) its file, the peer's address and port,
the transports it may use and the peers it connects to at its arrival. It prints `ready` once it
listens, reads `arrive T` on stdin (T: CLOCK_MONOTONIC ns, shared by every namespace), waits
until T, connects, then prints one JSON line per sample
(`sample_ns` apart) with its progress, payload bytes up and down and, per connection, the
request-queue depth (`peer_info.download_queue_length`; `queue_bytes` of it requested), the
remote's requests waiting here (`upload_queue_length`) and this peer's buffered bytes for it
(`used_send_buffer`); `{"done": T}` when it has every piece (libtorrent checks each piece's
SHA-1 on arrival). It runs until SIGTERM.

No DHT, local discovery, UPnP, NAT-PMP, encryption, tracker or peer exchange: peers meet only
through `connect_peer`, as the scenario's arrivals say.
"""

from __future__ import annotations

import json
import signal
import sys
import time

import libtorrent as lt

# peer_info::utp_socket (libtorrent/peer_info.hpp): bit 17 of the flags; the Python bindings do
# not all export its name.
UTP_SOCKET = int(getattr(lt.peer_info, "utp_socket", 1 << 17))
STOP = {"now": False}


def settings(cfg: dict) -> dict:
    """The session's settings: explicit connections only, the scenario's transports, no
    limits."""
    utp, tcp = cfg["utp"], cfg["tcp"]
    return {
        "listen_interfaces": f"{cfg['addr']}:{cfg['port']}",
        "outgoing_interfaces": "",
        "enable_dht": False,
        "enable_lsd": False,
        "enable_upnp": False,
        "enable_natpmp": False,
        "enable_incoming_utp": utp["incoming"],
        "enable_outgoing_utp": utp["outgoing"],
        "enable_incoming_tcp": tcp["incoming"],
        "enable_outgoing_tcp": tcp["outgoing"],
        # pe_disabled: no obfuscation either way (the scenario's peers speak plain BitTorrent).
        "out_enc_policy": int(lt.enc_policy.disabled),
        "in_enc_policy": int(lt.enc_policy.disabled),
        "utp_target_delay": cfg["utp_target_delay_ms"],
        "alert_mask": int(lt.alert.category_t.status_notification),
        # Every peer shares one /16 (the hub's); libtorrent would otherwise treat them as one
        # network's and skip limits meant for remote peers, and refuse a second peer per IP.
        "allow_multiple_connections_per_ip": True,
        # Two seeds keep their connection (libtorrent closes it by default): a block still in
        # flight when its receiver completes then arrives and counts at both ends, so the
        # swarm's payload up and down can be compared exactly (real_swarm._drain).
        "close_redundant_connections": False,
        "announce_to_all_trackers": False,
        "peer_fingerprint": "-SS0001-",
        "user_agent": "slowstart-peer",
    }


def sample(h: lt.torrent_handle) -> dict:
    st = h.status()
    conns = []
    for p in h.get_peer_info():
        if p.flags & lt.peer_info.connecting or p.flags & lt.peer_info.handshake:
            continue  # not a connection yet (or one to itself, dropped at the handshake)
        conns.append(
            {
                "ip": p.ip[0],
                "utp": bool(int(p.flags) & UTP_SOCKET),
                # Blocks picked for this peer, requested or not yet (m_download_queue and
                # m_request_queue); `queue_bytes`: the requested ones' bytes only
                # (m_outstanding_bytes). peer_connection::get_peer_info, libtorrent RC_2_1.
                "queue": p.download_queue_length,
                "queue_bytes": p.queue_bytes,
                # Its requests to us not yet answered (m_requests) and our buffer's bytes the
                # socket has not taken (m_send_buffer).
                "upload_queue": p.upload_queue_length,
                "send_buffer": p.used_send_buffer,
                "up": p.total_upload,
                "down": p.total_download,
            }
        )
    return {
        "t_ns": time.monotonic_ns(),
        "done_bytes": st.total_done,
        "payload_up": st.total_payload_upload,
        "payload_down": st.total_payload_download,
        "up": st.total_upload,
        "down": st.total_download,
        "seeding": st.is_seeding,
        "conns": conns,
    }


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        cfg = json.load(f)
    signal.signal(signal.SIGTERM, lambda *_: STOP.update(now=True))
    signal.signal(signal.SIGINT, lambda *_: STOP.update(now=True))
    # Flags 0: without the default plugins, so no peer exchange (ut_pex) either: a peer
    # knows only those it was told to connect to, and those that connect to it.
    ses = lt.session(settings(cfg), 0)
    params = lt.add_torrent_params()
    params.ti = lt.torrent_info(cfg["torrent"])
    params.save_path = cfg["folder"]
    h = ses.add_torrent(params)
    # Listening: the parent starts the next peer only once this one can be reached.
    deadline = time.monotonic() + 20
    while ses.listen_port() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    while h.status().state not in (
        lt.torrent_status.seeding,
        lt.torrent_status.downloading,
        lt.torrent_status.finished,
    ):
        if time.monotonic() > deadline:
            print(json.dumps({"error": f"torrent stuck in state {h.status().state}"}), flush=True)
            return 1
        time.sleep(0.01)
    print("ready", flush=True)
    # The run's time 0 is set once every peer listens: the parent sends this peer's arrival.
    line = sys.stdin.readline().split()
    if len(line) != 2 or line[0] != "arrive":
        return 0  # the run ended before it began
    arrive = int(line[1])
    while (left := arrive - time.monotonic_ns()) > 0 and not STOP["now"]:
        time.sleep(min(left / 1e9, 0.05))
    for addr, port in cfg["connect"]:
        h.connect_peer((addr, int(port)))
    done = h.status().is_seeding
    every = int(cfg["sample_ns"])
    next_at = time.monotonic_ns()
    while not STOP["now"]:
        for a in ses.pop_alerts():
            if isinstance(a, lt.torrent_finished_alert) and not done:
                done = True
                print(json.dumps({"done": time.monotonic_ns()}), flush=True)
        if time.monotonic_ns() >= next_at:
            print(json.dumps(sample(h)), flush=True)
            next_at += every
        ses.wait_for_alert(max(1, min(every // 1_000_000, 50)))
    print(json.dumps(sample(h)), flush=True)
    # The session's destructor waits for the disk threads: the file is whole on disk after it.
    ses.pause()
    del h, ses
    return 0


if __name__ == "__main__":
    sys.exit(main())
