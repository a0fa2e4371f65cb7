"""`slowstart real` on Linux TCP: the kernel's own stack through the testbed (testbed.py).

A bulk flow is a sender in `ss-snd` writing `size` bytes at once to a sink in `ss-rcv`; a web
flow is a server in `ss-snd` and a client in `ss-rcv` that connects, sends a request of
`request` bytes, reads the response, and asks for the next object at once (keep-alive) or on a
new connection, as crates/slowstart-apps/src/web.rs; first and last byte are timed at the
client. The endpoints are _agents.py. Congestion control is set per socket
(`TCP_CONGESTION`): Linux's own (`LINUX_CC`) or a BPF object's, registered for the run
(bpf.py); segments are MSS 1448 (MTU 1500 with timestamps). The data sender samples
TCP_INFO into a trace that summary.py turns into the simulator's schema.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart import lazy
from slowstart.real import bpf
from slowstart.real.summary import MSS, PHASES, flows_frame, kernel_summary, queues_frame
from slowstart.real.testbed import (
    LINUX_CC,
    PORT,
    RCV_ADDR,
    SND_ADDR,
    START_LEAD_NS,
    RealRunError,
    Session,
    check_available,
    testbed,
    workdir,
)
from slowstart.running.api import FlowsResult, Result
from slowstart.units import ScenarioError

if TYPE_CHECKING:
    from slowstart.running.api import Result

pd = lazy.module("pandas")


_AGENTS = Path(__file__).with_name("_agents.py")


def _linux_cc(flow: dict[str, Any], bpf_names: dict[str, str]) -> str:
    """The kernel name of a flow's algorithm: Linux's own, or its BPF object's as registered
    (`bpf_names`: spec name -> kernel name, from bpf.registered_flows)."""
    cc = flow["cc"]
    return bpf_names[cc["name"]] if bpf.is_bpf(cc) else LINUX_CC[cc["name"]]


def _receiver_cc(flow: dict[str, Any], bpf_names: dict[str, str]) -> list[str]:
    """The receiving end's algorithm, for a BPF controller only: one that needs ECN
    (TCP_CONG_NEEDS_ECN, DCTCP's) sends an ECT SYN, which Linux answers with ECN only from a
    socket whose controller needs it too, and its receive side makes the ECN echo (DCTCP's);
    Linux's own algorithms leave the receiver's default, as before."""
    return [bpf_names[flow["cc"]["name"]]] if bpf.is_bpf(flow["cc"]) else []


def _web(flow: dict[str, Any]) -> dict[str, Any] | None:
    app = flow.get("app") or {"kind": "bulk"}
    return app if app["kind"] == "web" else None


def check_flows(config: dict[str, Any]) -> None:
    """ScenarioError naming the first flow Linux TCP cannot run here."""
    for i, flow in enumerate(config["flows"]):
        kind = (flow.get("app") or {"kind": "bulk"})["kind"]
        if kind not in ("bulk", "web"):
            raise ScenarioError(f"app.{i}.kind: real runs accept bulk or web, got {kind!r}")
        if kind == "bulk" and flow.get("size_bytes") is None:
            raise ScenarioError(f'flow.{i}.size: a real bulk flow needs a size such as "10MB"')
        cc = flow["cc"]["name"]
        if cc not in LINUX_CC and not bpf.is_bpf(flow["cc"]):
            raise ScenarioError(
                f"flow.{i}.cc: real runs accept {', '.join(LINUX_CC)} or PATH.bpf.o, got {cc!r}"
            )
        # The server's route carries initcwnd and the client's initrwnd, one route each way,
        # so every flow over the path shares them.
        for key in ("initcwnd", "initrwnd"):
            if flow[key] != config["flows"][0][key]:
                raise ScenarioError(
                    f"flow.{i}.{key}: real flows share one route, so it must equal flow.0's "
                    f"{config['flows'][0][key]}, got {flow[key]}"
                )
        # ECN is negotiated per namespace (net.ipv4.tcp_ecn), so all flows or none.
        ecn, ecn0 = flow.get("ecn", False), config["flows"][0].get("ecn", False)
        if ecn != ecn0:
            raise ScenarioError(
                f"flow.{i}.ecn: real flows share one net.ipv4.tcp_ecn, so it must equal "
                f"flow.0's {str(ecn0).lower()}"
            )


def _agent(session: Session, ns: str, *args: str) -> subprocess.Popen[str]:
    return session.process(ns, [sys.executable, str(_AGENTS), *args], stderr=False)


def _start_flows(
    session: Session, work: Path, interval: int, bpf_names: dict[str, str]
) -> tuple[int, list[dict[str, Any]]]:
    """Start every flow's passive end (bulk sink, web server), then its active end (bulk
    sender, web client) timed to the flow's `start`. Returns time 0 and per flow its agents."""
    runs: list[dict[str, Any]] = []
    for i, flow in enumerate(session.flows):
        port, web = str(PORT + i), _web(flow)
        trace = work / f"trace{i}.json"
        if web:
            objects = web.get("objects") or len(web["response_bytes"])
            args = [
                str(web["request_bytes"]),
                ",".join(str(n) for n in web["response_bytes"]),
                str(objects),
                "1" if web["keep_alive"] else "0",
            ]
            passive = _agent(
                session,
                session.ns_snd,
                "server",
                port,
                _linux_cc(flow, bpf_names),
                *args,
                str(interval),
                str(trace),
            )
        else:
            args = []
            passive = _agent(session, session.ns_rcv, "sink", port, *_receiver_cc(flow, bpf_names))
        assert passive.stdout is not None
        if passive.stdout.readline().strip() != "listening":
            raise RealRunError(f"flow {i}: the {'server' if web else 'sink'} did not start")
        runs.append(
            {
                "flow": flow,
                "web": web,
                "port": port,
                "args": args,
                "passive": passive,
                "trace": trace,
            }
        )
    t_base = session.time_zero()
    for r in runs:
        r["start_at"] = t_base + int(r["flow"]["start_ns"])
        if r["web"]:
            r["active"] = _agent(
                session,
                session.ns_rcv,
                "client",
                SND_ADDR,
                r["port"],
                *r["args"],
                str(r["start_at"]),
                *_receiver_cc(r["flow"], bpf_names),
            )
        else:
            r["active"] = _agent(
                session,
                session.ns_snd,
                "send",
                RCV_ADDR,
                r["port"],
                str(r["flow"]["size_bytes"]),
                _linux_cc(r["flow"], bpf_names),
                str(interval),
                str(r["trace"]),
                str(r["start_at"]),
            )
    return t_base, runs


def run_real(
    config: dict[str, Any], timeout_s: float | None = None, pcap: str | None = None
) -> Result:
    """Run a canonical config's flows for real (Linux TCP through the emulated path); with
    `pcap`, the emulator writes a capture of each direction of the link there."""
    check_available(config)
    check_flows(config)
    timeout_s = timeout_s or config["duration_ns"] / 1e9 + 10
    # 0 means "every event" in the simulator; TCP_INFO is sampled every 1 ms then.
    interval = int(config.get("trace", {}).get("flow_interval_ns") or 1_000_000)
    with workdir() as work, bpf.registered_flows(config) as bpf_names:
        # The testbed closes (its sockets gone with its namespaces) before the BPF objects
        # are unregistered.
        with testbed(config, work, MSS, pcap) as session:
            t_base, runs = _start_flows(session, work, interval, bpf_names)
            deadline = time.monotonic() + START_LEAD_NS / 1e9 + timeout_s
            for i, r in enumerate(runs):
                side = "client" if r["web"] else "sender"
                try:
                    out, _ = session.wait(r["active"], deadline)
                except subprocess.TimeoutExpired:
                    raise RealRunError(f"flow {i}: not finished within {timeout_s:.0f} s") from None
                if r["active"].returncode != 0:
                    raise RealRunError(
                        f"flow {i}: the {side} failed (status {r['active'].returncode})"
                    )
                if r["web"]:
                    r["report"] = json.loads(out.strip().splitlines()[-1])
                    r["passive"].wait(timeout=max(0.1, deadline - time.monotonic()))
                else:
                    assert r["passive"].stdout is not None
                    r["report"] = json.loads(r["passive"].stdout.readline())
                    r["report"]["t0_ns"] = None
                r["trace_data"] = json.loads(r["trace"].read_text(encoding="utf-8"))
        frames = []
        for i, r in enumerate(runs):
            t0 = r["report"].get("t0_ns") or r["trace_data"]["t0_ns"]
            r["t0"] = t0
            frames.append(flows_frame(r["trace_data"], t0, i, r["flow"]["start_ns"] / 1e9))
        flows = pd.concat(frames, ignore_index=True)
        flows["phase"] = pd.Categorical(flows["phase"].astype(str), categories=PHASES)
        queues = queues_frame(session.emu_log, t_base)
    summary = kernel_summary(config, flows, runs, session.stats)
    for warning in summary["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    return FlowsResult(
        config=config, summary=summary, flows=flows, queues=queues, phase_names=PHASES
    )
