"""A hostile middlebox beside a real UDP-stack run: `python hostile_udp.py PID PORTS OUT SEED`.

It watches the datagrams of the ports PORTS (comma-separated) arriving in each namespace of
run PID (`ss-snd-PID`, `ss-rcv-PID`, AF_PACKET on their TUN devices) and sends the receiving
endpoint more of them from the other namespace, with the real sender's address and port (a
raw IP socket), so they cross the emulated link like the originals: truncated, oversized
(longer than their header says), duplicated, reordered (held back behind the next), replayed
(a copy of one seen long before) and forged (random bytes, a wrong version, data that is not
the pattern, ACKs of data never sent, SACK blocks past the end). The originals pass
untouched. On SIGTERM, or once the namespaces are gone, it writes how many of each it sent to
OUT as JSON: also when that comes before it found the run's devices (all counts 0 then). It
prints "armed" once a SIGTERM would be handled so.
"""

from __future__ import annotations

import ctypes
import json
import os
import random
import select
import signal
import socket
import struct
import sys
import time
from collections import Counter
from pathlib import Path

from slowstart.real.testbed import RunNames

CLONE_NEWNET = 0x40000000
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
HEADER = 48  # slowstart_transport::wire
KIND_DATA, KIND_ACK, KIND_REQUEST = 2, 3, 4


def enter(path: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    with open(path) as f:
        if libc.setns(f.fileno(), CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {path}")


def sockets(ns: str, dev: str) -> tuple[socket.socket, socket.socket]:
    """In namespace `ns`: a tap on `dev` and a raw IPv4 socket (the caller writes headers).
    The process goes back to its own namespace after (sockets keep theirs): the run kills
    whatever is left in its namespaces when it deletes them."""
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        enter(f"/run/netns/{ns}")
        tap = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
        tap.bind((dev, 0))
        raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    finally:
        enter(f"/proc/self/fd/{home}")
        os.close(home)
    return tap, raw


def udp_of(ip: bytes, ports: set[int]) -> tuple[bytes, bytes, int, int, bytes] | None:
    """(src, dst, sport, dport, payload) of an IPv4/UDP packet to or from one of `ports`."""
    if len(ip) < 28 or ip[0] >> 4 != 4 or ip[9] != socket.IPPROTO_UDP:
        return None
    ihl = (ip[0] & 15) * 4
    sport, dport, length = struct.unpack("!HHH", ip[ihl : ihl + 6])
    if sport not in ports and dport not in ports:
        return None
    return ip[12:16], ip[16:20], sport, dport, ip[ihl + 8 : ihl + length]


def packet(src: bytes, dst: bytes, sport: int, dport: int, payload: bytes) -> bytes:
    """IPv4 + UDP; the kernel fills the IP checksum and length; UDP checksum 0 (none)."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, src, dst)
    return ip + udp


def mangle(rng: random.Random, d: bytes, history: list[bytes], sent: Counter) -> list[bytes]:
    """Extra datagrams to send after seeing `d` (the original goes on untouched)."""
    out: list[bytes] = []
    roll = rng.random()
    if roll < 0.02 and d:  # an empty one is a truncation of its own, come back
        out.append(d[: rng.randrange(len(d))])
        sent["truncated"] += 1
    elif roll < 0.04:
        out.append(d + bytes(rng.randrange(256) for _ in range(1500 - 28 - len(d))))
        sent["oversized"] += 1
    elif roll < 0.06:
        out.append(d)
        sent["duplicated"] += 1
    elif roll < 0.08 and len(history) > 100:
        out.append(history[rng.randrange(len(history) - 100)])
        sent["replayed"] += 1
    elif roll < 0.09:
        out.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 1400))))
        sent["forged: random bytes"] += 1
    elif roll < 0.10:
        out.append(d[:2] + bytes([9]) + d[3:])
        sent["forged: wrong version"] += 1
    elif roll < 0.14 and len(d) >= HEADER:
        # d may be one of this script's own forgeries coming back (it crosses the link like
        # the originals): its SACK block count (byte 5) need not fit its length.
        kind, payload = d[3], HEADER + 8 * d[5]
        if kind in (KIND_DATA, KIND_REQUEST) and len(d) > payload:
            i = rng.randrange(payload, len(d))
            out.append(d[:i] + bytes([d[i] ^ 0x55]) + d[i + 1 :])
            sent["forged: payload not the pattern"] += 1
        elif kind == KIND_ACK:
            seq = struct.unpack("!Q", d[16:24])[0]
            out.append(d[:16] + struct.pack("!Q", seq + 10**9) + d[24:])
            sent["forged: ACK of data never sent"] += 1
            if d[5] == 0:  # one SACK block 3-4 MB past the cumulative ACK
                sack = d[:5] + b"\x01" + d[6:HEADER] + struct.pack("!II", 3_000_000, 4_000_000)
                out.append(sack)
                sent["forged: SACK past the end"] += 1
    history.append(d)
    if len(history) > 5000:
        del history[:1000]
    return out


def main() -> None:
    # First of all: a SIGTERM from here on ends the loops below, and the counts are written;
    # "armed" tells the caller so.
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    print("armed", flush=True)
    sent: Counter = Counter()
    try:
        meddle(
            RunNames(int(sys.argv[1])),
            {int(p) for p in sys.argv[2].split(",")},
            sys.argv[4],
            sent,
            stop,
        )
    finally:
        Path(sys.argv[3]).write_text(json.dumps(sent), encoding="utf-8")
        # The counts are written: the caller's SIGTERM, which may come once the run has ended
        # and this script with it, has nothing left to stop. Ignored, it cannot land in the
        # interpreter's shutdown, which puts Python-level handlers back to the default (status
        # -15 in a suite run); SIG_IGN is kept through it.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def meddle(run: RunNames, ports: set[int], seed: str, sent: Counter, stop: list[int]) -> None:
    """Add datagrams to run `run`'s until `stop` is not empty or its namespaces are gone."""
    rng = random.Random(int(seed))
    # Each side's tap sees what arrives there; what to add to it leaves from the other side.
    # The run creates the namespaces first and moves its TUN devices in after: wait for them.
    deadline = time.monotonic() + 30
    while not stop:
        try:
            snd_tap, snd_raw = sockets(run.ns_snd, run.tun_snd)
            rcv_tap, rcv_raw = sockets(run.ns_rcv, run.tun_rcv)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)
    else:
        return
    other = {snd_tap: rcv_raw, rcv_tap: snd_raw}
    held: dict[socket.socket, bytes | None] = {snd_tap: None, rcv_tap: None}
    history: dict[socket.socket, list[bytes]] = {snd_tap: [], rcv_tap: []}
    while not stop and Path(f"/run/netns/{run.ns_snd}").exists():
        try:
            ready, _, _ = select.select([snd_tap, rcv_tap], [], [], 0.2)
        except InterruptedError:
            continue
        for tap in ready:
            try:
                ip, addr = tap.recvfrom(65536)
            except OSError:
                continue  # ENETDOWN, once, for a tap bound before its device came up
            if addr[2] == PACKET_OUTGOING:
                continue
            u = udp_of(ip, ports)
            if u is None:
                continue
            src, dst, sport, dport, d = u
            extra = mangle(rng, d, history[tap], sent)
            if held[tap] is not None:
                extra.append(held[tap])  # reordered: after the datagram that followed it
                held[tap] = None
            elif rng.random() < 0.02:
                held[tap] = d
                sent["reordered"] += 1
            for x in extra:
                try:
                    other[tap].sendto(packet(src, dst, sport, dport, x), (socket.inet_ntoa(dst), 0))
                except OSError:
                    sent["send failed"] += 1


if __name__ == "__main__":
    main()
