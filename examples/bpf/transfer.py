"""One TCP transfer over loopback with a congestion controller chosen per socket: the check
that a registered BPF controller carries a connection. Run it in a fresh network namespace
(README.md):

    ip netns add ss-bpf && ip netns exec ss-bpf python3 transfer.py bpf_reno 8000000

Both ends set TCP_CONGESTION (the listener too: a controller that needs ECN, as DCTCP, sends
its SYN ECT-marked, which a listener accepts for ECN only when its own controller needs ECN,
tcp_ecn_create_request in the kernel). The sender sends BYTES and prints one JSON line: the
controller its socket ended with, whether ECN was negotiated, the bytes the receiver counted,
the seconds taken, and its cwnd and ssthresh (segments) from TCP_INFO at the end. Exit status
1 when the socket did not keep the controller or the receiver got fewer bytes."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import threading
import time

# struct tcp_info (include/uapi/linux/tcp.h): 8 one-byte fields, then 32-bit ones;
# tcpi_snd_ssthresh and tcpi_snd_cwnd are the 18th and 19th of those. tcpi_options is the
# 6th byte, TCPI_OPT_ECN its bit 3.
SSTHRESH_CWND = struct.Struct("=8x68xII")
OPTIONS, OPT_ECN = 5, 8


def transfer(cc: str, size: int) -> dict:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    received = [0]

    def receive() -> None:
        conn, _ = listener.accept()
        with conn:
            while chunk := conn.recv(1 << 16):
                received[0] += len(chunk)

    receiver = threading.Thread(target=receive)
    receiver.start()
    sender = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sender.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    start = time.monotonic()
    sender.connect(listener.getsockname())
    block = b"\0" * (1 << 16)
    sent = 0
    while sent < size:
        sent += sender.send(block[: min(len(block), size - sent)])
    info = sender.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    ssthresh, cwnd = SSTHRESH_CWND.unpack_from(info)
    used = sender.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    sender.close()
    receiver.join(timeout=60)
    seconds = time.monotonic() - start
    listener.close()
    return {
        "cc": used.rstrip(b"\0").decode(),
        "ecn": bool(info[OPTIONS] & OPT_ECN),
        "bytes": received[0],
        "seconds": round(seconds, 3),
        "cwnd": cwnd,
        "ssthresh": ssthresh,
    }


if __name__ == "__main__":
    cc, size = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8_000_000
    result = transfer(cc, size)
    print(json.dumps(result))
    sys.exit(0 if result["cc"] == cc and result["bytes"] == size else 1)
