"""The sender and sink of `slowstart real`, run inside the namespaces with `ip netns exec`.

Standalone (standard library only) so each starts fast. Times are CLOCK_MONOTONIC ns, shared
by every namespace, so the parent aligns them with the emulator's log.

    python _agents.py sink PORT [CC]
    python _agents.py send HOST PORT SIZE CC INTERVAL_NS OUT.json START_AT_NS
    python _agents.py server PORT CC REQUEST SIZES OBJECTS KEEP_ALIVE INTERVAL_NS OUT.json
    python _agents.py client HOST PORT REQUEST SIZES OBJECTS KEEP_ALIVE START_AT_NS [CC]

SIZES is a comma-separated list of byte counts, KEEP_ALIVE 1 or 0. The receiving end's CC (a
BPF controller's, kernel.py) matters where the controller needs ECN: Linux accepts ECN on a
connection whose SYN is ECT only if the receiving end's controller needs ECN too, and such a
controller's receive side makes the echo (DCTCP's, one ECE per CE-marked segment).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import struct
import sys
import threading
import time

TCP_INFO = 11
TCP_CONGESTION = 13
TCP_CC_INFO = 26
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


def bbr_gains(sock: socket.socket) -> tuple[int, int]:
    """BBR's (pacing_gain, cwnd_gain) in units of 256, from TCP_CC_INFO (struct
    tcp_bbr_info, linux/inet_diag.h: bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain)."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, 20).ljust(20, b"\0")
    return struct.unpack_from("=5I", raw)[3:5]


def _sleep_until(t_ns: int) -> None:
    """Sleep, then spin the last 2 ms: a flow's start lands within microseconds."""
    delay = t_ns - 2_000_000 - time.monotonic_ns()
    if delay > 0:
        time.sleep(delay / 1e9)
    while time.monotonic_ns() < t_ns:
        pass


def _listener(port: int, cc: str | None = None) -> socket.socket:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if cc:
        # Accepted connections inherit the listener's congestion control (the route's
        # initcwnd is applied when the connection is set up, so cc is not changed later).
        srv.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    srv.bind(("0.0.0.0", port))
    srv.listen(16)
    print("listening", flush=True)
    return srv


class Sampler(threading.Thread):
    """TCP_INFO of the current data-sending socket every `interval_ns`; `bytes_acked` runs on
    across connections (a web flow without keep-alive opens one per object)."""

    KEYS = ("ca_state", "snd_cwnd", "snd_ssthresh", "rtt", "min_rtt", "unacked", "sacked")
    KEYS += ("lost", "retrans", "delivery_rate", "total_retrans", "snd_mss", "bytes_acked")
    KEYS += ("bbr_pacing_gain", "bbr_cwnd_gain")

    def __init__(self, interval_ns: int, cc: str) -> None:
        super().__init__(daemon=True)
        self.interval_ns = interval_ns
        self.bbr = cc == "bbr"
        self.sock: socket.socket | None = None
        self.rows: list[list[int]] = []
        self.base = {"bytes_acked": 0, "total_retrans": 0}
        self.last: dict[str, int] | None = None
        self.stopped = threading.Event()
        self.lock = threading.Lock()

    def sample(self) -> dict[str, int] | None:
        with self.lock:
            if self.sock is None:
                return None
            try:
                i = tcp_info(self.sock)
                gains = bbr_gains(self.sock) if self.bbr else (0, 0)
            except OSError:
                return None
            i["bbr_pacing_gain"], i["bbr_cwnd_gain"] = gains
            self.last = i
            row = [time.monotonic_ns()] + [i[k] + self.base.get(k, 0) for k in self.KEYS]
            self.rows.append(row)
            return i

    def switch(self, sock: socket.socket | None) -> None:
        with self.lock:
            if self.last is not None:
                for k in self.base:
                    self.base[k] += self.last[k]
                # tcpi_bytes_acked counts the SYN too: once per connection.
                self.base["bytes_acked"] -= 1
            self.sock, self.last = sock, None

    def drain(self) -> None:
        """Wait until everything written on the current socket is acknowledged."""
        while True:
            i = self.sample()
            if i is None or i["unacked"] == 0:
                return
            time.sleep(self.interval_ns / 1e9)

    def run(self) -> None:
        next_t = time.monotonic_ns()
        while not self.stopped.is_set():
            self.sample()
            next_t += self.interval_ns
            delay = next_t - time.monotonic_ns()
            if delay > 0:
                time.sleep(delay / 1e9)
            else:
                next_t = time.monotonic_ns()

    def save(self, out: str, **extra: object) -> None:
        self.stopped.set()
        self.join()
        with open(out, "w", encoding="utf-8") as f:
            json.dump({"keys": ["t_ns", *self.KEYS], "rows": self.rows, **extra}, f)


def sink(port: int, cc: str | None = None) -> None:
    """Bulk receiver: one JSON line (bytes, first and last byte times) per connection."""
    srv = _listener(port, cc)
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


def send(
    host: str, port: int, size: int, cc: str, interval_ns: int, out: str, start_at: int
) -> None:
    """Bulk sender: connect at `start_at`, write `size` bytes at once, sample until acked."""
    _sleep_until(start_at)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sampler = Sampler(interval_ns, cc)
    t0 = time.monotonic_ns()
    s.connect((host, port))
    sampler.switch(s)
    sampler.start()
    s.sendall(b"\0" * size)
    sampler.drain()
    sampler.switch(None)
    s.close()
    sampler.save(out, t0_ns=t0)


def _sizes(arg: str) -> list[int]:
    return [int(x) for x in arg.split(",")]


def _recv_exact(conn: socket.socket, n: int) -> bool:
    while n > 0:
        b = conn.recv(min(n, 1 << 16))
        if not b:
            return False
        n -= len(b)
    return True


def server(
    port: int,
    cc: str,
    request: int,
    sizes: list[int],
    objects: int,
    keep_alive: bool,
    interval_ns: int,
    out: str,
) -> None:
    """Web server (the data sender): answer each complete request with its object at once,
    as the simulator's web app does (no think time); without keep-alive, close after each."""
    srv = _listener(port, cc)
    sampler = Sampler(interval_ns, cc)
    sampler.start()
    answered = 0
    while answered < objects:
        conn, _ = srv.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        got = conn.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
        if got != cc:
            raise SystemExit(f"server: connection runs {got}, not {cc}")
        sampler.switch(conn)
        while answered < objects and _recv_exact(conn, request):
            conn.sendall(b"\0" * sizes[answered % len(sizes)])
            answered += 1
            if not keep_alive:
                break
        sampler.drain()
        sampler.switch(None)
        conn.close()
    sampler.save(out)


def client(
    host: str,
    port: int,
    request: int,
    sizes: list[int],
    objects: int,
    keep_alive: bool,
    start_at: int,
    cc: str | None = None,
) -> None:
    """Web client: connect at `start_at`, request objects one after another (no pipelining),
    each the moment the previous one's last byte arrived; print one JSON line with each
    object's wanted, first- and last-byte times (the first object is wanted from the start,
    so its times include the handshake, as in the simulator)."""
    _sleep_until(start_at)
    t0 = time.monotonic_ns()
    wanted = t0
    conn: socket.socket | None = None
    results = []
    for k in range(objects):
        if conn is None:
            conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if cc:
                conn.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.connect((host, port))
        conn.sendall(b"\0" * request)
        size, got, first = sizes[k % len(sizes)], 0, None
        while got < size:
            b = conn.recv(1 << 20)
            if not b:
                raise SystemExit(f"client: connection closed after {got} of {size} bytes")
            now = time.monotonic_ns()
            first = first or now
            got += len(b)
        results.append({"bytes": size, "wanted_ns": wanted, "first_ns": first, "last_ns": now})
        wanted = now
        if not keep_alive:
            conn.close()
            conn = None
    if conn is not None:
        conn.close()
    print(json.dumps({"t0_ns": t0, "objects": results}), flush=True)


def _die_with_parent() -> None:
    """PR_SET_PDEATHSIG: a killed `slowstart real` takes its sender and sink with it. A parent
    that died before the signal was armed is seen by its pid ($SLOWSTART_PARENT) being gone."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))
    parent = os.environ.get("SLOWSTART_PARENT")
    if parent and os.getppid() != int(parent):
        raise SystemExit("parent gone")


if __name__ == "__main__":
    _die_with_parent()
    role, a = sys.argv[1], sys.argv[2:]
    if role == "sink":
        sink(int(a[0]), a[1] if len(a) > 1 else None)
    elif role == "send":
        send(a[0], int(a[1]), int(a[2]), a[3], int(a[4]), a[5], int(a[6]))
    elif role == "server":
        server(int(a[0]), a[1], int(a[2]), _sizes(a[3]), int(a[4]), a[5] == "1", int(a[6]), a[7])
    else:
        cc = a[7] if len(a) > 7 else None
        client(a[0], int(a[1]), int(a[2]), _sizes(a[3]), int(a[4]), a[5] == "1", int(a[6]), cc)
