"""`slowstart real --stack quinn`: a real QUIC stack, quinn, through the emulated path.

Each bulk flow is `slowstart-quinn server` in `ss-rcv` and `slowstart-quinn client` in `ss-snd`
(crates/slowstart-quinn): the client connects, sends `size` bytes on one stream and is done when
the server has read them all. Its congestion controller is the flow's slowstart controller
through the adapter (`--stack quinn`), or quinn's own (`--stack quinn-native`: reno is quinn's
NewReno, cubic its Cubic, bbr its BBR). Times are counted from the end of the handshake, when
the first stream data may leave: the simulation it is compared with has no handshake.

Packets: quinn sends 1472-byte UDP payloads (1500-byte IP packets, MTU discovery off), of which
QUIC_MSS are stream data; the simulation sends the same packets (mss QUIC_MSS, header_bytes
QUIC_HEADER_BYTES), ACKs every 2 packets or after 25 ms (RFC 9000 §13.2.1, quinn's
max_ack_delay), with a receive window open from the start, paced as quinn paces (`pacer =
"quinn"`: 1.25 cwnd/srtt). quinn counts its window in datagram bytes: the client's qlog
(`--qlog`, read as ngtcp2's is) gives the flow trace, its cwnd, ssthresh and in-flight columns
converted to stream-payload bytes (times QUIC_MSS / QUIC_DATAGRAM), so that a packet weighs the
same in both; the datagram bytes stay in `cwnd_datagram_bytes`. docs/quinn.md lists the
differences that remain.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.real.program import read_qlog
from slowstart.real.summary import (
    cross_rows,
    cross_warnings,
    cwnd_at,
    in_schema,
    link_rows,
    queues_frame,
    schema,
    trace_frame,
    tun_warnings,
)
from slowstart.real.testbed import (
    PORT,
    RCV_ADDR,
    SND_ADDR,
    START_LEAD_NS,
    RealRunError,
    cargo_binary,
    check_available,
    testbed,
    workdir,
)
from slowstart.running.api import FlowsResult, Result
from slowstart.units import ScenarioError

np = lazy.module("numpy")
pd = lazy.module("pandas")


QUIC_DATAGRAM = 1472  # UDP payload: MTU 1500 minus 20 (IP) and 8 (UDP); slowstart-quinn --mtu
# Stream data in a full 1-RTT packet: 1472 minus the short header (1 + 8-byte connection ID +
# packet number, 2 bytes at these windows), the STREAM frame's type, stream id and 4-byte offset
# (RFC 9000 §19.8; the last frame of a packet carries no length) and the 16-byte AEAD tag.
QUIC_MSS = 1472 - (1 + 8 + 2) - (1 + 1 + 4) - 16
QUIC_HEADER_BYTES = 1500 - QUIC_MSS
# quinn-proto's defaults: an ACK every 2 ack-eliciting packets, max_ack_delay 25 ms (RFC 9000
# §13.2.1, §18.2).
QUIC_FLOW = {
    "mss": QUIC_MSS,
    "header_bytes": QUIC_HEADER_BYTES,
    "handshake": False,
    "abc": True,
    "delayed_ack": True,
    "ack_every": 2,
    "delack_timeout_ns": 25_000_000,
    "quickack": False,
    # quinn paces every connection: the controller hears it (HyStart's ACK-train threshold is
    # then the whole min RTT, tcp_cubic.c), and the simulation paces as quinn does, at
    # 1.25 cwnd/srtt whatever the controller's own rate (quinn-proto connection/pacing.rs).
    "pacing": True,
    "pacer": "quinn",
}
# --stack quinn-native: the slowstart name -> quinn's own controller.
QUINN_CC = {"reno": "newreno", "cubic": "cubic", "bbr": "bbr"}
STACKS = ("quinn", "quinn-native")


def quinn_binary() -> str:
    """Path of slowstart-quinn (testbed.cargo_binary)."""
    return cargo_binary("slowstart-quinn")


def quic_like(config: dict[str, Any]) -> dict[str, Any]:
    """The config with every flow as quinn sends it (QUIC_FLOW), for a like-for-like
    simulation."""
    cfg = json.loads(json.dumps(config))
    for f in cfg["flows"]:
        f.update(QUIC_FLOW)
        if f.get("size_bytes"):
            # QUIC's flow control has no window that opens as data arrives (the simulated
            # receiver's is Linux's tcp_grow_window: 2 segments per segment received), and
            # slowstart-quinn's are 1 GiB: the receiver's window holds the whole transfer.
            f["initrwnd"] = max(f["initrwnd"], -(-f["size_bytes"] // QUIC_MSS))
    return cfg


def cc_args(flow: dict[str, Any], stack: str) -> list[str]:
    """The client's controller options for a flow's cc on `stack`."""
    cc = flow["cc"]
    if stack == "quinn-native":
        if cc["name"] not in QUINN_CC or cc.get("params"):
            raise ScenarioError(
                f"--cc: quinn's own controllers are {', '.join(QUINN_CC)} (no parameters), "
                f"got {cc['name']!r} (--stack quinn runs every slowstart algorithm)"
            )
        return ["--quinn-cc", QUINN_CC[cc["name"]]]
    params = ",".join(f"{k}={_word(v)}" for k, v in (cc.get("params") or {}).items())
    guest = cc.get("guest")
    extra = ["--guest", f"{cc['name']}={guest['path']}"] if guest else []
    return [*extra, "--cc", cc["name"] + (f":{params}" if params else "")]


def _word(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def check_cc(binary: str, config: dict[str, Any], stack: str) -> None:
    """ScenarioError with the adapter's own line for a controller it refuses (`slowstart-quinn
    check`: LEDBAT and uTP, which need one-way delays), before a testbed is set up."""
    for flow in config["flows"]:
        args = cc_args(flow, stack)
        if stack != "quinn":
            continue
        p = subprocess.run([binary, "check", *args], capture_output=True, text=True, check=False)
        if p.returncode != 0:
            why = p.stderr.strip().splitlines()
            raise ScenarioError(
                (why[-1] if why else f"status {p.returncode}").removeprefix("error: ")
            )


def check_flows(config: dict[str, Any]) -> None:
    """ScenarioError naming the first flow quinn cannot run here."""
    for i, flow in enumerate(config["flows"]):
        kind = (flow.get("app") or {"kind": "bulk"})["kind"]
        if kind != "bulk":
            raise ScenarioError(f"app.{i}.kind: the quinn stack runs bulk flows, got {kind!r}")
        if flow.get("size_bytes") is None:
            raise ScenarioError(f'flow.{i}.size: a real bulk flow needs a size such as "10MB"')
        guest = flow["cc"].get("guest")
        if guest is not None and guest["kind"] not in ("wasm", "bpf"):
            raise ScenarioError(
                f"flow.{i}.cc: a Python controller runs in the simulator only; quinn runs "
                "WebAssembly and BPF controllers"
            )
    for link in config["links"]:
        for d in ("forward", "reverse"):
            if link[d].get("drops"):
                # QUIC's packets are encrypted: the emulator cannot tell which segment one is.
                raise ScenarioError(
                    f"link {link['name']}.{d}.drops: the quinn stack's packets are encrypted, so "
                    "the emulator cannot drop a given segment; use loss or the queue"
                )


def _flows_frame(path: Path, flow_id: int, start_s: float, t0_ns: int) -> Any:
    """The client's qlog (read as ngtcp2's is, real_program.read_qlog) → the simulator's flow
    trace, window columns in stream-payload bytes; times from the handshake's end (`t0_ns`
    after the qlog's origin, the connect) at `start_s`."""
    df = pd.DataFrame(read_qlog(path.parent, "client"))
    df["state"] = df["state"].ffill() if "state" in df else "slow_start"
    df = df[df["congestion_window"].notna()]
    df = df[df["t_ms"] * 1e6 >= t0_ns]
    scale = QUIC_MSS / QUIC_DATAGRAM
    ssthresh = (df["ssthresh"] if "ssthresh" in df else pd.Series(np.nan, index=df.index)) * scale
    return trace_frame(
        "flows",
        [
            (df["t_ms"] * 1e6 - t0_ns) / 1e9 + start_s,
            np.full(len(df), flow_id, dtype=np.uint32),
            (df["congestion_window"] * scale).round().astype(np.uint64),
            ssthresh.astype(np.float64),
            (df["bytes_in_flight"] * scale).round().astype(np.uint64),
            df["smoothed_rtt"] / 1e3,
            np.full(len(df), np.nan),
            df["state"].astype(str),
        ],
        {"cwnd_datagram_bytes": df["congestion_window"].astype(np.uint64)},
    )


def run_real_quinn(
    config: dict[str, Any],
    stack: str = "quinn",
    timeout_s: float | None = None,
    pcap: str | None = None,
    calls: bool = False,
) -> Result:
    """Run a canonical config's bulk flows over quinn through the emulated path. With
    `calls`, each client's calls to its controller are kept (summary `calls_files`)."""
    check_available(config)
    check_flows(config)
    config = quic_like(config)
    binary = quinn_binary()
    check_cc(binary, config, stack)
    timeout_s = timeout_s or config["duration_ns"] / 1e9 + 10
    duration_ms = str(int((timeout_s + START_LEAD_NS / 1e9) * 1000))
    runs: list[dict[str, Any]] = []
    with workdir() as work:
        with testbed(config, work, QUIC_MSS, pcap) as session:
            for i, flow in enumerate(config["flows"]):
                port, cert = PORT + i, work / f"cert{i}.der"
                server = session.process(
                    session.ns_rcv,
                    [binary, "server", "--bind", f"{RCV_ADDR}:{port}", "--cert", str(cert)]
                    + ["--duration-ms", duration_ms],
                )
                assert server.stdout is not None
                if server.stdout.readline().strip() != "listening":
                    raise RealRunError(f"flow {i}: the quinn server did not start")
                runs.append({"flow": flow, "port": port, "cert": cert, "rx": server})
            t_base = session.time_zero()
            for i, r in enumerate(runs):
                flow, port = r["flow"], r["port"]
                r["start_at"] = t_base + int(flow["start_ns"])
                r["qlog"] = work / f"qlog{i}" / "client.sqlog"
                r["qlog"].parent.mkdir()
                r["calls"] = work / f"calls{i}.txt"
                r["tx"] = session.process(
                    session.ns_snd,
                    [binary, "client", "--bind", f"{SND_ADDR}:{port}"]
                    + ["--peer", f"{RCV_ADDR}:{port}", "--cert", str(r["cert"])]
                    + ["--bytes", str(flow["size_bytes"]), *cc_args(flow, stack)]
                    + ["--initcwnd", str(flow["initcwnd"]), "--mtu", str(QUIC_DATAGRAM)]
                    + ["--seed", str(config.get("seed", 0)), "--start-at", str(r["start_at"])]
                    + ["--duration-ms", duration_ms, "--qlog", str(r["qlog"])]
                    + (["--calls", str(r["calls"])] if calls else []),
                )
            deadline = time.monotonic() + START_LEAD_NS / 1e9 + timeout_s
            for i, r in enumerate(runs):
                failed = []
                for end, who in (("tx", "client"), ("rx", "server")):
                    p = r[end]
                    try:
                        out, err = session.wait(p, deadline)
                    except subprocess.TimeoutExpired:
                        raise RealRunError(
                            f"flow {i}: not finished within {timeout_s:.0f} s"
                        ) from None
                    if p.returncode != 0:
                        why = (err or "").strip().splitlines()
                        failed.append(f"the {who} {why[-1] if why else f'status {p.returncode}'}")
                    else:
                        r[end + "_report"] = json.loads(out.strip().splitlines()[-1])
                if failed:
                    # Both ends' lines: a client's "connection lost" says why at the server.
                    raise RealRunError(f"flow {i}: quinn failed: {'; '.join(failed)}")
        frames = []
        for i, r in enumerate(runs):
            tx = r["tx_report"]
            # The trace counts from the controller's creation (the connect); data from the
            # handshake's end.
            handshake_ns = tx["start_ns"] - tx["connect_ns"]
            frames.append(_flows_frame(r["qlog"], i, r["flow"]["start_ns"] / 1e9, handshake_ns))
            if calls:
                r["calls_text"] = r["calls"].read_text(encoding="utf-8")
        flows = pd.concat(frames, ignore_index=True)
        phases = list(dict.fromkeys(flows["phase"]))
        flows["phase"] = pd.Categorical(flows["phase"], categories=phases)
        queues = queues_frame(session.emu_log, t_base)
    summary = _summary(config, flows, runs, session.stats, stack)
    if calls:
        summary["calls"] = [r["calls_text"] for r in runs]
    for warning in summary["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    return FlowsResult(
        config=config, summary=summary, flows=flows, queues=queues, phase_names=phases
    )


def _summary(
    config: dict[str, Any],
    flows: Any,
    runs: list[dict[str, Any]],
    stats: dict[str, Any],
    stack: str,
) -> dict[str, Any]:
    rows, warnings = [], []
    for i, r in enumerate(runs):
        flow, tx, rx = r["flow"], r["tx_report"], r["rx_report"]
        done = rx.get("completed_ns")
        completion = (done - tx["start_ns"]) / 1e9 if done else None
        late = (tx["connect_ns"] - r["start_at"]) / 1e9
        if late > 0.005:
            warnings.append(f"flow {i} started {late * 1e3:.1f} ms late")
        f = flows[flows["flow"] == i]
        start_s = flow["start_ns"] / 1e9
        after = f[~f["phase"].astype(str).isin(schema()["initial_phases"])]
        ss_exit = float(after["t_s"].iloc[0]) - start_s if len(after) else None
        episodes = f["phase"].astype(str)
        rows.append(
            in_schema(
                "flow",
                {
                    "id": i,
                    "cc": flow["cc"]["name"],
                    "size_bytes": flow["size_bytes"],
                    "bytes_delivered": rx["bytes"],
                    "completion_s": completion,
                    "goodput_bps": rx["bytes"] * 8 / completion if completion else None,
                    "slow_start_exit_s": ss_exit,
                    "retransmits": tx["lost_packets"],
                    "loss_events": int(
                        ((episodes == "recovery") & (episodes.shift() != "recovery")).sum()
                    )
                    if stack == "quinn"
                    else _episodes(f),
                    "max_cwnd_bytes": int(f["cwnd_bytes"].max()) if len(f) else 0,
                },
                {
                    "cwnd_at_exit_bytes": cwnd_at(
                        f, None if ss_exit is None else ss_exit + start_s
                    ),
                    "mss": QUIC_MSS,
                    "initcwnd": flow["initcwnd"],
                    "start_late_s": late,
                    "handshake_s": (tx["start_ns"] - tx["connect_ns"]) / 1e9,
                    "udp_datagrams": tx["udp_tx_datagrams"],
                    "udp_bytes": tx["udp_tx_bytes"],
                    "congestion_calls": tx["congestion_calls"],
                },
            )
        )
    warnings.extend(tun_warnings(stats))
    warnings.extend(cross_warnings(stats))
    return {
        "scenario": config.get("name"),
        "mode": "real",
        "stack": stack,
        "seed": config.get("seed", 0),
        "flows": rows,
        "links": link_rows(config, stats),
        "apps": [],
        **cross_rows(stats),
        "tun_tx_dropped": stats.get("tun_tx_dropped", {}),
        "warnings": warnings,
    }


def _episodes(f: Any) -> int:
    """Loss events of quinn's own controller: how often its window fell (one reduction per
    recovery episode, RFC 9002 §7.3.2)."""
    cwnd = f["cwnd_datagram_bytes"]
    return int((cwnd < cwnd.shift()).sum())
