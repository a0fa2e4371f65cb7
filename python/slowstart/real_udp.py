"""`slowstart real --stack udp`: the simulator's own transport and controller over UDP.

The same namespaces, TUN devices and emulator as the kernel stack (testbed.py), but each flow's
ends are `slowstart-udp send` and `slowstart-udp recv` (crates/slowstart-udp): the very sender,
receiver and controller the simulation runs, driven by the monotonic clock, one packet per
datagram. Every algorithm of the library runs this way, not only Linux's. Packets are sized to
the MTU: 1500 bytes = 20 (IP) + 8 (UDP) + 48 (the transport's header) + 1424 of payload, and the
simulation it is compared with uses the same MSS and header bytes. Bulk flows only, so far.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from slowstart.api import Result
from slowstart.real_summary import cwnd_at, frame, in_schema, link_rows, queues_frame, tun_warnings
from slowstart.testbed import (
    PORT,
    RCV_ADDR,
    REPO,
    SND_ADDR,
    START_LEAD_NS,
    RealUnavailable,
    check_available,
    testbed,
    workdir,
)

UDP_MSS = 1424  # MTU 1500 minus 20 (IP), 8 (UDP) and 48 (slowstart_transport::wire header)
UDP_HEADER_BYTES = 76
UDP_FLOW = {"mss": UDP_MSS, "header_bytes": UDP_HEADER_BYTES}
UNSET = 2**64 - 1


def udp_binary() -> str:
    """Path of slowstart-udp: $SLOWSTART_UDP, else built (or found up to date) by cargo in
    this checkout."""
    env = os.environ.get("SLOWSTART_UDP")
    if env:
        return env
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    binary = target / "release" / "slowstart-udp"
    if shutil.which("cargo") and (REPO / "crates" / "slowstart-udp").is_dir():
        subprocess.run(
            ["cargo", "build", "--release", "--quiet", "-p", "slowstart-udp"], cwd=REPO, check=False
        )
    if not binary.exists():
        raise RealUnavailable("slowstart-udp: not found; set SLOWSTART_UDP or install cargo")
    return str(binary)


def udp_like(config: dict[str, Any]) -> dict[str, Any]:
    """The config with every flow sized as the UDP stack sends it (MSS 1424, 76 header
    bytes), for the run and for a like-for-like simulation."""
    cfg = json.loads(json.dumps(config))
    for f in cfg["flows"]:
        f.update(UDP_FLOW)
    return cfg


def _check_flows(config: dict[str, Any]) -> None:
    for i, flow in enumerate(config["flows"]):
        kind = (flow.get("app") or {"kind": "bulk"})["kind"]
        if kind != "bulk":
            raise ValueError(f"app.{i}.kind: the UDP stack runs bulk flows only, got {kind!r}")
        if flow.get("size_bytes") is None:
            raise ValueError(f'flow.{i}.size: a real bulk flow needs a size such as "10MB"')
        if flow.get("ecn", False):
            # The emulator marks CE in the IP header, which the UDP endpoints do not read.
            raise ValueError(f"flow.{i}.ecn: the UDP stack does not carry ECN; use --stack kernel")


def _flows_frame(path: Path, flow_id: int, start_s: float) -> Any:
    """The sender's trace (crates/slowstart-udp) → the simulator's flow trace."""
    import numpy as np
    import pandas as pd

    df = pd.read_csv(path, dtype={"ssthresh": np.uint64})
    ssthresh = df["ssthresh"].astype(np.float64)
    ssthresh[df["ssthresh"] == np.uint64(UNSET)] = np.nan
    return frame(
        "flows",
        {
            "t_s": df["t_ns"] / 1e9 + start_s,
            "flow": np.full(len(df), flow_id, dtype=np.uint32),
            "cwnd_bytes": df["cwnd"].astype(np.uint64),
            "ssthresh_bytes": ssthresh,
            "inflight_bytes": df["inflight"].astype(np.uint64),
            "srtt_s": df["srtt_ns"] / 1e9,
            "delivered_bytes": df["delivered"].astype(np.uint64),
            "phase": df["phase"].astype(str),
        },
        {},
    )


def run_real_udp(
    config: dict[str, Any], timeout_s: float | None = None, pcap: str | None = None
) -> Result:
    """Run a canonical config's bulk flows over the UDP stack through the emulated path (with
    `pcap`, the emulator's captures go there)."""
    import pandas as pd

    check_available(config)
    _check_flows(config)
    config = udp_like(config)
    binary = udp_binary()
    timeout_s = timeout_s or config["duration_ns"] / 1e9 + 10
    duration_ms = str(config["duration_ns"] // 1_000_000)
    runs: list[dict[str, Any]] = []
    with workdir() as work:
        with testbed(config, work, UDP_MSS, pcap) as session:
            for i, flow in enumerate(config["flows"]):
                spec = work / f"flow{i}.json"
                spec.write_text(json.dumps(flow), encoding="utf-8")
                port = PORT + i
                rx = session.process(
                    session.ns_rcv,
                    [binary, "recv", "--bind", f"{RCV_ADDR}:{port}", "--flow", str(spec)]
                    + ["--id", str(i), "--duration-ms", duration_ms],
                )
                assert rx.stdout is not None
                if rx.stdout.readline().strip() != "listening":
                    raise RuntimeError(f"flow {i}: the UDP receiver did not start")
                runs.append({"flow": flow, "spec": spec, "port": port, "rx": rx})
            t_base = time.monotonic_ns() + START_LEAD_NS
            for i, r in enumerate(runs):
                r["start_at"] = t_base + int(r["flow"]["start_ns"])
                r["trace"] = work / f"trace{i}.csv"
                r["tx"] = session.process(
                    session.ns_snd,
                    [binary, "send", "--bind", f"{SND_ADDR}:{r['port']}"]
                    + ["--peer", f"{RCV_ADDR}:{r['port']}", "--flow", str(r["spec"])]
                    + ["--id", str(i), "--seed", str(config.get("seed", 0))]
                    + ["--start-at", str(r["start_at"]), "--duration-ms", duration_ms]
                    + ["--trace", str(r["trace"])],
                )
            deadline = time.monotonic() + START_LEAD_NS / 1e9 + timeout_s
            for i, r in enumerate(runs):
                for end in ("tx", "rx"):
                    p = r[end]
                    try:
                        out, err = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
                    except subprocess.TimeoutExpired:
                        raise RuntimeError(
                            f"flow {i}: not finished within {timeout_s:.0f} s"
                        ) from None
                    if p.returncode != 0:
                        why = (err or "").strip().splitlines()
                        side = "sender" if end == "tx" else "receiver"
                        raise RuntimeError(
                            f"flow {i}: the UDP {side} failed: "
                            + (why[-1] if why else f"status {p.returncode}")
                        )
                    r[end + "_report"] = json.loads(out.strip().splitlines()[-1])
        frames = [
            _flows_frame(r["trace"], i, r["flow"]["start_ns"] / 1e9) for i, r in enumerate(runs)
        ]
        flows = pd.concat(frames, ignore_index=True)
        phases = list(dict.fromkeys(flows["phase"]))
        flows["phase"] = pd.Categorical(flows["phase"], categories=phases)
        queues = queues_frame(session.emu_log, t_base)
    summary = _summary(config, flows, runs, session.stats)
    for warning in summary["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    return Result(config=config, summary=summary, flows=flows, queues=queues, phase_names=phases)


def _summary(
    config: dict[str, Any], flows: Any, runs: list[dict[str, Any]], stats: dict[str, Any]
) -> dict[str, Any]:
    rows, warnings = [], []
    for i, r in enumerate(runs):
        flow, tx, rx = r["flow"], r["tx_report"], r["rx_report"]
        t0 = tx["start_ns"]
        late = (t0 - r["start_at"]) / 1e9
        if late > 0.005:
            warnings.append(f"flow {i} started {late * 1e3:.1f} ms late")
        done = rx.get("completed_ns")
        completion = (done - t0) / 1e9 if done else None
        ss_exit = tx.get("slow_start_exit_s")
        f = flows[flows["flow"] == i]
        start_s = flow["start_ns"] / 1e9
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
                    "retransmits": tx["retransmits"],
                    "loss_events": tx["loss_events"],
                    "rto_count": tx["rto_count"],
                    "max_cwnd_bytes": tx["max_cwnd_bytes"],
                },
                {
                    "cwnd_at_exit_bytes": cwnd_at(
                        f, None if ss_exit is None else ss_exit + start_s
                    ),
                    "mss": UDP_MSS,
                    "initcwnd": flow["initcwnd"],
                    "initrwnd": flow["initrwnd"],
                    "start_late_s": late,
                    "pacing_late_p50_us": tx["pacing_late_p50_us"],
                    "pacing_late_p99_us": tx["pacing_late_p99_us"],
                    "dropped_datagrams": {"sender": tx["dropped"], "receiver": rx["dropped"]},
                },
            )
        )
    warnings.extend(tun_warnings(stats))
    return {
        "scenario": config.get("name"),
        "mode": "real",
        "stack": "udp",
        "seed": config.get("seed", 0),
        "flows": rows,
        "links": link_rows(config, stats),
        "apps": [],
        "tun_tx_dropped": stats.get("tun_tx_dropped", {}),
        "warnings": warnings,
    }
