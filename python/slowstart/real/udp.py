"""`slowstart real --stack udp`: the simulator's own transport and controller over UDP.

The same namespaces, TUN devices and emulator as the kernel stack (testbed.py), but each flow's
ends are `slowstart-udp send` and `slowstart-udp recv` (crates/slowstart-udp): the very sender,
receiver and controller the simulation runs, driven by the monotonic clock, one packet per
datagram. Every algorithm of the library runs this way, not only Linux's, those that need ECN
too: each datagram's IP header carries its ECT or CE codepoint (crates/slowstart-udp/src/ecn.rs),
so the emulator's CE marks reach the receiver, as in the simulation. Packets are sized to
the MTU: 1500 bytes = 20 (IP) + 8 (UDP) + 48 (the transport's header) + 1424 of payload, and the
simulation it is compared with uses the same MSS and header bytes.

A bulk flow is `send` in `ss-snd` and `recv` in `ss-rcv`; a web flow is `server` in `ss-snd`
(the simulator's WebServer on the data sender) and `client` in `ss-rcv` (its WebClient on the
receiver and the request stream), the client active as in the kernel stack: its request opens
each connection (crates/slowstart-udp/src/web.rs). The client times the objects, the server
counts their stalls; the summary's `apps` joins the two as the simulation's does.

A flow whose controller is a Python class has its data sender (`send`, `server`) run as
`python -m slowstart.real.udp_endpoint` (udp_endpoint.py): the same endpoint with the same
arguments, in a Python process where the class is registered.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.loading import guests
from slowstart.real.summary import (
    cross_rows,
    cross_warnings,
    cwnd_at,
    frame,
    in_schema,
    link_rows,
    queues_frame,
    tun_warnings,
)
from slowstart.real.testbed import (
    PORT,
    RCV_ADDR,
    SND_ADDR,
    START_LEAD_NS,
    RealRunError,
    bottleneck,
    cargo_binary,
    check_available,
    testbed,
    workdir,
)
from slowstart.real.udp_endpoint import write_guests
from slowstart.running.api import FlowsResult, Result, shown_name
from slowstart.units import ScenarioError

np = lazy.module("numpy")
pd = lazy.module("pandas")


UDP_MSS = 1424  # MTU 1500 minus 20 (IP), 8 (UDP) and 48 (slowstart_transport::wire header)
UDP_HEADER_BYTES = 76
UDP_FLOW = {"mss": UDP_MSS, "header_bytes": UDP_HEADER_BYTES}
UNSET = 2**64 - 1
# An endpoint's exit status for bad input (crates/slowstart-udp/src/cli.rs).
EXIT_BAD_INPUT = 2


def udp_binary() -> str:
    """Path of slowstart-udp (testbed.cargo_binary)."""
    return cargo_binary("slowstart-udp")


def udp_like(config: dict[str, Any]) -> dict[str, Any]:
    """The config with every flow sized as the UDP stack sends it (MSS 1424, 76 header
    bytes), for the run and for a like-for-like simulation."""
    cfg = json.loads(json.dumps(config))
    for f in cfg["flows"]:
        f.update(UDP_FLOW)
    return cfg


def _kind(flow: dict[str, Any]) -> str:
    return str((flow.get("app") or {"kind": "bulk"})["kind"])


def _check_flows(config: dict[str, Any]) -> None:
    for i, flow in enumerate(config["flows"]):
        kind = _kind(flow)
        if kind not in ("bulk", "web"):
            raise ScenarioError(f"app.{i}.kind: the UDP stack runs bulk or web flows, got {kind!r}")
        if kind == "bulk" and flow.get("size_bytes") is None:
            raise ScenarioError(f'flow.{i}.size: a real bulk flow needs a size such as "10MB"')
        _check_importable(f"flow.{i}.cc", flow["cc"]["name"])


def _check_importable(field: str, name: str) -> None:
    """A class given as an object reaches a Python endpoint by reference (udp_endpoint.py):
    one defined in `__main__` or inside a function cannot be imported there."""
    payload = guests.PAYLOADS.get(name)
    if payload is None or not isinstance(payload.content, type):
        return
    cls = payload.content
    if cls.__module__ == "__main__" or "<locals>" in cls.__qualname__:
        where = "__main__" if cls.__module__ == "__main__" else "a function"
        raise ScenarioError(
            f"{field}: {cls.__qualname__} is defined in {where}, which the UDP endpoint cannot "
            "import; define it in a module, or name it as PATH.py:CLASS"
        )


def _python_specs(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The specs of the flows' Python controllers, by canonical name."""
    specs = guests.guest_specs(config)
    return {n: s for n, s in specs.items() if s["guest"]["kind"] == "python"}


def _flows_frame(path: Path, start_s: float) -> Any:
    """The sender's (or server's) trace, which crates/slowstart-udp writes under the core's flow
    trace columns, as the simulator's flow frame (`*_ns` as `*_s`, an unset ssthresh as NaN);
    `start_s` is its time 0 on the scenario's clock."""
    df = pd.read_csv(path, dtype={"ssthresh_bytes": np.uint64, "phase": str})
    columns: dict[str, Any] = {}
    for name in df.columns:
        if name.endswith("_ns"):
            columns[shown_name(name)] = df[name] / 1e9
        elif name == "ssthresh_bytes":
            columns[name] = df[name].astype(np.float64).where(df[name] != np.uint64(UNSET))
        elif name == "phase":
            columns[name] = df[name]
        else:
            columns[name] = df[name].astype(np.uint32 if name == "flow" else np.uint64)
    columns["t_s"] = columns["t_s"] + start_s
    return frame("flows", columns, {})


def run_real_udp(
    config: dict[str, Any], timeout_s: float | None = None, pcap: str | None = None
) -> Result:
    """Run a canonical config's bulk and web flows over the UDP stack through the emulated
    path (with `pcap`, the emulator's captures go there)."""
    check_available(config)
    _check_flows(config)
    config = udp_like(config)
    binary = udp_binary()
    timeout_s = timeout_s or config["duration_ns"] / 1e9 + 10
    runs: list[dict[str, Any]] = []
    with workdir() as work:
        with testbed(config, work, UDP_MSS, pcap) as session:
            t_base = _start_flows(session, work, config, binary, runs)
            deadline = time.monotonic() + START_LEAD_NS / 1e9 + timeout_s
            for i, r in enumerate(runs):
                web = r["web"]
                for end in ("tx", "rx"):
                    p = r[end]
                    try:
                        out, err = session.wait(p, deadline)
                    except subprocess.TimeoutExpired:
                        raise RealRunError(
                            f"flow {i}: not finished within {timeout_s:.0f} s"
                        ) from None
                    if p.returncode != 0:
                        side = ("server", "client") if web else ("sender", "receiver")
                        raise _failure(i, side[end == "rx"], p.returncode, err)
                    r[end + "_report"] = json.loads(out.strip().splitlines()[-1])
        frames = [
            _flows_frame(r["trace"], r["flow"]["start_ns"] / 1e9 + _server_lead_s(r))
            for i, r in enumerate(runs)
        ]
        flows = pd.concat(frames, ignore_index=True)
        phases = list(dict.fromkeys(flows["phase"]))
        flows["phase"] = pd.Categorical(flows["phase"], categories=phases)
        queues = queues_frame(session.emu_log, t_base)
    summary = _summary(config, flows, runs, session.stats)
    for warning in summary["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    return FlowsResult(
        config=config, summary=summary, flows=flows, queues=queues, phase_names=phases
    )


def _start_flows(
    session: Any, work: Path, config: dict[str, Any], binary: str, runs: list[dict[str, Any]]
) -> int:
    """Start every flow's passive end (bulk receiver, web server), then its active end (bulk
    sender, web client) at the flow's `start` on a common clock; fill `runs` with their
    processes. Returns time 0 (monotonic ns). The data sender (bulk sender, web server) of a
    flow with a Python controller is `python -m slowstart.real.udp_endpoint`, the others
    `binary`."""
    duration_ms = str(config["duration_ns"] // 1_000_000)
    link = bottleneck(config)
    python = _python_specs(config)
    if python:
        write_guests(work / "guests.pickle", python)
    # The data sender runs the controller: a Python one in a Python process around the same
    # endpoint (udp_endpoint.py), where it is registered.
    senders = [
        [sys.executable, "-m", "slowstart.real.udp_endpoint", str(work / "guests.pickle")]
        if f["cc"]["name"] in python
        else [binary]
        for f in config["flows"]
    ]
    for i, flow in enumerate(config["flows"]):
        spec = work / f"flow{i}.json"
        spec.write_text(json.dumps(flow), encoding="utf-8")
        port, web = PORT + i, _kind(flow) == "web"
        common = ["--flow", str(spec), "--id", str(i), "--duration-ms", duration_ms]
        r = {"flow": flow, "spec": spec, "port": port, "web": web, "trace": work / f"trace{i}.csv"}
        if web:
            # The server's stall threshold is the emulated path's BDP, as simulated.
            rtt = link["forward"]["delay_ns"] + link["reverse"]["delay_ns"]
            passive = session.process(
                session.ns_snd,
                [*senders[i], "server", "--bind", f"{SND_ADDR}:{port}"]
                + ["--peer", f"{RCV_ADDR}:{port}"]
                + [*common, "--seed", str(config.get("seed", 0)), "--trace", str(r["trace"])]
                + ["--path-bps", str(link["forward"]["rate_bps"]), "--path-rtt-ns", str(rtt)],
            )
        else:
            passive = session.process(
                session.ns_rcv, [binary, "recv", "--bind", f"{RCV_ADDR}:{port}", *common]
            )
        assert passive.stdout is not None
        if passive.stdout.readline().strip() != "listening":
            who = "server" if web else "receiver"
            passive.wait()
            assert passive.stderr is not None
            raise _failure(i, who, passive.returncode, passive.stderr.read(), "did not start")
        r["tx" if web else "rx"] = passive
        runs.append(r)
    t_base = session.time_zero()
    for i, r in enumerate(runs):
        r["start_at"] = t_base + int(r["flow"]["start_ns"])
        port = r["port"]
        common = ["--flow", str(r["spec"]), "--id", str(i), "--duration-ms", duration_ms]
        common += ["--start-at", str(r["start_at"])]
        if r["web"]:
            r["rx"] = session.process(
                session.ns_rcv,
                [binary, "client", "--bind", f"{RCV_ADDR}:{port}", "--peer", f"{SND_ADDR}:{port}"]
                + common,
            )
        else:
            r["tx"] = session.process(
                session.ns_snd,
                [
                    *senders[i],
                    "send",
                    "--bind",
                    f"{SND_ADDR}:{port}",
                    "--peer",
                    f"{RCV_ADDR}:{port}",
                ]
                + [*common, "--seed", str(config.get("seed", 0)), "--trace", str(r["trace"])],
            )
    return t_base


def _failure(flow: int, who: str, status: int, stderr: str, what: str = "failed") -> Exception:
    """An endpoint's exit as an exception: ValueError with its line for bad input (such as a
    user's controller that faulted: the line names it), else RealRunError naming the flow."""
    why = (stderr or "").strip().splitlines()
    if status == EXIT_BAD_INPUT and why:
        return ScenarioError(why[-1].removeprefix("error: "))
    return RealRunError(
        f"flow {flow}: the UDP {who} {what}: " + (why[-1] if why else f"status {status}")
    )


def _server_lead_s(r: dict[str, Any]) -> float:
    """A web server counts its times from its own start, before the client's: how much
    earlier, s (0 for a bulk sender, which starts at the flow's start)."""
    if not r["web"]:
        return 0.0
    return (r["tx_report"]["start_ns"] - r["rx_report"]["start_ns"]) / 1e9


def _web_rows(r: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A web flow's client and server reports as a bulk flow's would read (bytes, completion
    from the client's start) and its `apps` entry: the client's summary with the server's
    stall counts."""
    tx, rx = r["tx_report"], r["rx_report"]
    t0, lead = rx["start_ns"], _server_lead_s(r)
    done = rx.get("last_byte_ns")
    ss_exit = tx.get("slow_start_exit_s")
    measures = {
        "bytes": rx["bytes"],
        "completion_s": (done - t0) / 1e9 if done else None,
        "first_byte_s": (rx["first_byte_ns"] - t0) / 1e9 if rx.get("first_byte_ns") else None,
        "slow_start_exit_s": None if ss_exit is None else ss_exit + lead,
        "start_ns": t0,
    }
    stalls = tx.get("object_stalls") or []
    app = {"flow": None, "kind": "web", **rx["web"]}
    app["objects"] = [
        {**o, "stalls": stalls[k] if k < len(stalls) else None}
        for k, o in enumerate(rx["web"]["objects"])
    ]
    return measures, app


def _summary(
    config: dict[str, Any], flows: Any, runs: list[dict[str, Any]], stats: dict[str, Any]
) -> dict[str, Any]:
    rows, apps, warnings = [], [], []
    for i, r in enumerate(runs):
        flow, tx, rx = r["flow"], r["tx_report"], r["rx_report"]
        if r["web"]:
            m, app = _web_rows(r)
            apps.append({**app, "flow": i})
        else:
            done = rx.get("completed_ns")
            m = {
                "bytes": rx["bytes"],
                "completion_s": (done - tx["start_ns"]) / 1e9 if done else None,
                "first_byte_s": None,
                "slow_start_exit_s": tx.get("slow_start_exit_s"),
                "start_ns": tx["start_ns"],
            }
        late = (m["start_ns"] - r["start_at"]) / 1e9
        if late > 0.005:
            warnings.append(f"flow {i} started {late * 1e3:.1f} ms late")
        completion, ss_exit = m["completion_s"], m["slow_start_exit_s"]
        f = flows[flows["flow"] == i]
        start_s = flow["start_ns"] / 1e9
        rows.append(
            in_schema(
                "flow",
                {
                    "id": i,
                    "cc": flow["cc"]["name"],
                    "size_bytes": flow["size_bytes"],
                    "bytes_delivered": m["bytes"],
                    "completion_s": completion,
                    "goodput_bps": m["bytes"] * 8 / completion if completion else None,
                    "slow_start_exit_s": ss_exit,
                    "retransmits": tx["retransmits"],
                    "loss_events": tx["loss_events"],
                    "rto_count": tx["rto_count"],
                    "max_cwnd_bytes": tx["max_cwnd_bytes"],
                    # An ECN flow's (ecn, or a controller that needs it), as simulated.
                    "ecn_reductions": tx.get("ecn_reductions"),
                },
                {
                    "first_byte_s": m["first_byte_s"],
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
    warnings.extend(cross_warnings(stats))
    return {
        "scenario": config.get("name"),
        "mode": "real",
        "stack": "udp",
        "seed": config.get("seed", 0),
        "flows": rows,
        "links": link_rows(config, stats),
        "apps": apps,
        **cross_rows(stats),
        "tun_tx_dropped": stats.get("tun_tx_dropped", {}),
        "warnings": warnings,
    }
