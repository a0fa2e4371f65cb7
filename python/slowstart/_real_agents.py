"""The sender and sink of `slowstart real`, run inside the namespaces with `ip netns exec`.

Standalone (standard library only) so each starts fast. Times are CLOCK_MONOTONIC ns, shared
by every namespace, so the parent aligns them with the emulator's log.

    python _real_agents.py sink PORT
    python _real_agents.py send HOST PORT SIZE CC INTERVAL_NS OUT.json
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import sys
import threading
import time

TCP_INFO = 11
TCP_CONGESTION = 13
# struct tcp_info up to delivery_rate (linux/tcp.h), 168 bytes.
_FMT = "=8B24I4Q4I2IQ"
_NAMES_U32 = [
    "rto",
    "ato",
    "snd_mss",
    "rcv_mss",
    "unacked",
    "sacked",
    "lost",
    "retrans",
    "fackets",
    "last_data_sent",
    "last_ack_sent",
    "last_data_recv",
    "last_ack_recv",
    "pmtu",
    "rcv_ssthresh",
    "rtt",
    "rttvar",
    "snd_ssthresh",
    "snd_cwnd",
    "advmss",
    "reordering",
    "rcv_rtt",
    "rcv_space",
    "total_retrans",
]


def tcp_info(sock: socket.socket) -> dict[str, int]:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 256)
    raw = raw.ljust(struct.calcsize(_FMT), b"\0")
    v = struct.unpack_from(_FMT, raw)
    d = {"state": v[0], "ca_state": v[1]}
    d.update(zip(_NAMES_U32, v[8:32], strict=True))
    d["bytes_acked"] = v[34]
    d["min_rtt"] = v[39]
    d["delivery_rate"] = v[42]
    return d


def sink(port: int) -> None:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(16)
    print("listening", flush=True)
    while True:
        conn, _ = srv.accept()
        total, first, last = 0, None, None
        while True:
            b = conn.recv(1 << 20)
            if not b:
                break
            last = time.monotonic_ns()
            first = first or last
            total += len(b)
        conn.close()
        print(json.dumps({"bytes": total, "first_ns": first, "last_ns": last}), flush=True)


def send(host: str, port: int, size: int, cc: str, interval_ns: int, out: str) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t0 = time.monotonic_ns()
    s.connect((host, port))
    connected = time.monotonic_ns()
    done = threading.Event()

    def writer() -> None:
        chunk = b"\0" * (1 << 16)
        left = size
        while left > 0:
            n = s.send(chunk[: min(left, len(chunk))])
            left -= n
        done.set()

    th = threading.Thread(target=writer, daemon=True)
    th.start()
    samples = []
    next_t = time.monotonic_ns()
    while True:
        now = time.monotonic_ns()
        i = tcp_info(s)
        samples.append((now, i))
        if done.is_set() and i["unacked"] == 0:
            break
        next_t += interval_ns
        delay = next_t - time.monotonic_ns()
        if delay > 0:
            time.sleep(delay / 1e9)
        else:
            next_t = time.monotonic_ns()
    s.close()
    keys = ["ca_state", "snd_cwnd", "snd_ssthresh", "rtt", "min_rtt", "unacked", "sacked"]
    keys += ["lost", "retrans", "delivery_rate", "total_retrans", "snd_mss", "bytes_acked"]
    rows = [[t] + [i[k] for k in keys] for t, i in samples]
    with open(out, "w", encoding="utf-8") as f:
        json.dump(
            {"t0_ns": t0, "connected_ns": connected, "keys": ["t_ns", *keys], "rows": rows}, f
        )


def _die_with_parent() -> None:
    """PR_SET_PDEATHSIG: a killed `slowstart real` takes its sender and sink with it."""
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))


if __name__ == "__main__":
    _die_with_parent()
    if sys.argv[1] == "sink":
        sink(int(sys.argv[2]))
    else:
        a = sys.argv[2:]
        send(a[0], int(a[1]), int(a[2]), a[3], int(a[4]), a[5])
