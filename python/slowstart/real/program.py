"""`slowstart real` on program pairs: any server and client through the emulated path.

A flow with a `[flow.program]` table is carried by two commands of the user's (ngtcp2's
`gtlsserver`/`gtlsclient`, `curl` against an HTTP server, `iperf3`) instead of a built-in stack,
in the namespaces and through the emulator of testbed.py: the end that sends the flow's data
(`sends`, the server by default) runs in `ss-snd`, the other in `ss-rcv`. Each flow's server
starts first, in a process group of its own; once something in its namespace listens on (TCP)
or is bound to (UDP) the flow's port, the client starts at the flow's `start` on the run's
common clock. The client's exit with status 0 ends the flow and its server is stopped; a client
still running at the scenario's `duration` is an error. With `ends = "both"` the server must
exit by itself too (an upload's receiver that stops at the end of the data: its client may exit
while its last bytes are still on the path). Arguments are the command's, with
`{name}` placeholders filled in (`PLACEHOLDERS`, owned by crates/slowstart-config/src/config.rs);
no shell runs them.

Every failure is one line naming the flow and the command, and the run is undone (process
groups killed, namespaces deleted, work folder removed): a program not found, a server that
never listens, a port in use, a program that exits non-zero (the last lines of its stderr),
one that outlives the duration.

What is measured: per flow the client's run time, the packets and transport payload the
emulated link delivered each way on the flow's port (retransmissions, QUIC and TLS overhead
included), the emulator's queue log and link rows; with qlog (`{qlog}`), the data sender's
`recovery:metrics_updated` events become the flow trace (cwnd, bytes in flight, smoothed RTT),
which `compare` overlays on the simulation of the same path and controller.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.real.program_ends import (
    PLACEHOLDER,
    End,
    ProgramError,
    fill,
    port_taken,
    self_signed,
    wait_listening,
)
from slowstart.real.summary import (
    empty_trace,
    in_schema,
    link_rows,
    queues_frame,
    trace_frame,
    tun_warnings,
)
from slowstart.real.testbed import (
    LINUX_CC,
    PARENT_ENV,
    RCV_ADDR,
    SND_ADDR,
    Session,
    check_available,
    flow_ports,
    testbed,
    workdir,
)
from slowstart.running.api import FlowsResult

np = lazy.module("numpy")
pd = lazy.module("pandas")


# Where Debian packages the programs a user tries first; `make programs` installs those the
# tests run (Makefile).
MAKE_PROGRAMS = ("ngtcp2-server", "ngtcp2-client", "curl")
DEBIAN_PACKAGE = {
    "gtlsserver": "ngtcp2-server",
    "gtlsclient": "ngtcp2-client",
    "iperf3": "iperf3",
    "curl": "curl",
}


def _uses(config: dict[str, Any], name: str) -> list[int]:
    """The flows whose commands use `{name}`."""
    return [
        i
        for i, f in enumerate(config["flows"])
        if f.get("program")
        and any(
            name in PLACEHOLDER.findall(a) for a in f["program"]["server"] + f["program"]["client"]
        )
    ]


def has_programs(config: dict[str, Any]) -> bool:
    return any(f.get("program") for f in config["flows"])


def _executable(argv0: str) -> str | None:
    if "/" in argv0:
        return argv0 if os.access(argv0, os.X_OK) and Path(argv0).is_file() else None
    return shutil.which(argv0)


def check_programs(config: dict[str, Any]) -> None:
    """ProgramError naming the first thing that keeps the program flows from running here:
    a flow without a program beside ones with, a `cc` Linux does not have, a
    `{file}` without a size, a program not found, two flows on one port."""
    flows = config["flows"]
    for i, flow in enumerate(flows):
        if not flow.get("program"):
            first = next(k for k, f in enumerate(flows) if f.get("program"))
            raise ProgramError(
                f"flow.{i}.program: missing; a real run carries every flow by a program pair "
                f"or none (flow {first} names one)"
            )
    for i, flow in enumerate(flows):
        # The namespaces' TCP runs it, `{cc}` names it to a program, and the simulation
        # beside the run (compare) runs it: one of Linux's, so that all three agree.
        cc = flow["cc"]["name"]
        if cc not in LINUX_CC:
            raise ProgramError(
                f"flow.{i}.cc: a program flow runs Linux's {', '.join(LINUX_CC)} (bbr1 is "
                f"Linux's bbr), got {cc!r}"
            )
    for i in _uses(config, "file"):
        if flows[i].get("size_bytes") is None:
            raise ProgramError(f'flow.{i}.size: {{file}} needs the flow\'s size, such as "10MB"')
    for i, flow in enumerate(flows):
        for end in ("server", "client"):
            argv0 = flow["program"][end][0]
            if _executable(argv0) is None:
                name = Path(argv0).name
                package = DEBIAN_PACKAGE.get(name)
                hint = f" (Debian package {package})" if package else ""
                if package in MAKE_PROGRAMS:
                    hint = f" (Debian package {package}: make programs)"
                raise ProgramError(f"flow.{i}.program.{end}: {argv0}: program not found{hint}")
    flow_ports(config)
    if (_uses(config, "key") or _uses(config, "cert")) and shutil.which("openssl") is None:
        raise ProgramError(
            "flow.0.program: {key} and {cert} are made with the openssl command, not found"
        )


def run_programs(config: dict[str, Any], pcap: str | None = None, keep: Path | None = None) -> Any:
    """Run a canonical config's program flows through the emulated path; with `pcap`, the
    emulator's captures go there; with `keep`, each flow's logs and qlog files are copied to
    `keep/flowN/`. Returns a Result (slowstart.running.api) in the simulator's schema."""
    check_available(config)
    check_programs(config)
    ports = flow_ports(config)
    duration_ns = config["duration_ns"]
    runs: list[dict[str, Any]] = []
    with workdir() as work:
        keys: dict[str, str] = {}
        if _uses(config, "key") or _uses(config, "cert"):
            key, cert = self_signed(work)
            keys = {"key": str(key), "cert": str(cert)}
        with testbed(config, work, 1448, pcap) as session:
            try:
                t_base = _start(session, config, work, ports, keys, runs)
                _wait(runs, t_base + duration_ns, duration_ns)
            finally:
                for r in runs:
                    for end in (r["client"], r["server"]):
                        end.kill()
        flows = _flows_frame(runs, t_base, session.emu_log)
        queues = queues_frame(session.emu_log, t_base)
        if keep is not None:
            for r in runs:
                dest = keep / f"flow{r['id']}"
                shutil.copytree(r["dir"], dest, dirs_exist_ok=True, ignore=_not_kept)
    summary = _summary(config, runs, session.stats, t_base)
    for warning in summary["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    return FlowsResult(
        config=config, summary=summary, flows=flows, queues=queues, phase_names=PHASES
    )


def _not_kept(folder: str, names: list[str]) -> list[str]:
    """`{file}` (the payload the run made) is not worth keeping; logs, qlog and what the
    programs wrote are."""
    return ["data"] if Path(folder).name.startswith("flow") and "data" in names else []


def _start(
    session: Session,
    config: dict[str, Any],
    work: Path,
    ports: list[int],
    keys: dict[str, str],
    runs: list[dict[str, Any]],
) -> int:
    """Start each flow's server and wait until it listens; then each client at its flow's
    start on the common clock. Returns the run's time 0 (monotonic ns)."""
    for i, flow in enumerate(config["flows"]):
        prog, port = flow["program"], ports[i]
        folder = work / f"flow{i}"
        for sub in ("qlog", "server", "client"):
            (folder / sub).mkdir(parents=True)
        size = flow.get("size_bytes")
        if size is not None:
            with open(folder / "data", "wb") as f:
                f.truncate(size)  # sparse: zeros, no time spent writing them
        server_sends = prog.get("sends", "server") == "server"
        server_ns, client_ns = (
            (session.ns_snd, session.ns_rcv) if server_sends else (session.ns_rcv, session.ns_snd)
        )
        server_addr, client_addr = (SND_ADDR, RCV_ADDR) if server_sends else (RCV_ADDR, SND_ADDR)
        common = {
            "port": str(port),
            "cc": LINUX_CC.get(flow["cc"]["name"], ""),
            "size": "" if size is None else str(size),
            "dir": str(folder),
            "file": str(folder / "data"),
            "qlog": str(folder / "qlog"),
            **keys,
        }
        server = End(
            i,
            "server",
            server_ns,
            fill(
                prog["server"],
                {**common, "addr": server_addr, "peer": client_addr, "out": str(folder / "server")},
            ),
            folder,
        )
        client = End(
            i,
            "client",
            client_ns,
            fill(
                prog["client"],
                {**common, "addr": client_addr, "peer": server_addr, "out": str(folder / "client")},
            ),
            folder,
        )
        runs.append(
            {
                "id": i,
                "flow": flow,
                "port": port,
                "dir": folder,
                "server": server,
                "client": client,
                "sender": "server" if server_sends else "client",
            }
        )
        if port_taken(session, server_ns, port):
            raise ProgramError(
                f"flow.{i}.program: port in use: {port} is already bound in {server_ns} "
                "(by an earlier flow's program)"
            )
        server.start(folder / "server")
        wait_listening(server, port)
    t_base = session.time_zero()
    for r in sorted(runs, key=lambda r: r["flow"]["start_ns"]):
        r["start_at"] = t_base + int(r["flow"]["start_ns"])
        r["client"].start(r["dir"] / "client", r["start_at"])
    return t_base


def _wait(runs: list[dict[str, Any]], end_ns: int, duration_ns: int) -> None:
    """Until every flow has ended: its client exited with status 0, and with `ends = "both"`
    its server too (else it is stopped then). ProgramError for a program that exits non-zero
    or one still running at `end_ns`."""
    while True:
        running: list[End] = []
        for r in runs:
            client, server = r["client"], r["server"]
            both = r["flow"]["program"].get("ends", "client") == "both"
            status = client.poll()
            if status is not None and status != 0:
                raise client.failed(status)
            served = server.poll()
            if served is not None and served != 0 and not server.stopped:
                raise server.failed(served)
            if status is None:
                running.append(client)
            elif both and served is None:
                running.append(server)
            elif not both and not server.stopped:
                server.kill()
        if not running:
            return
        if time.monotonic_ns() >= end_ns:
            raise ProgramError(
                f"{running[0].name}: still running at the scenario's duration "
                f"({duration_ns / 1e9:g} s); its process group was killed and the namespaces "
                "removed"
            )
        time.sleep(0.005)


PHASES = ["slow_start", "congestion_avoidance", "recovery", "application_limited"]


def read_qlog(folder: Path, vantage: str) -> list[dict[str, Any]]:
    """The `recovery:metrics_updated` events of the qlog files in `folder` written by the
    `vantage` end ("server" or "client"), in the file's time order: each with `t_ms` since
    the trace's reference time, `reference_time_ms` (the trace's, when it gives one) and the
    metrics. qlog draft-02 (ngtcp2: JSON text sequences, `.sqlog`) and JSON (`.qlog`) files."""
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*log")):
        records = _qlog_records(path)
        if not records:
            continue
        head = records[0]
        trace = head.get("trace") or (head.get("traces") or [{}])[0]
        vp = (trace.get("vantage_point") or {}).get("type")
        if vp != vantage:
            continue
        ref = (trace.get("common_fields") or {}).get("reference_time")
        events = records[1:] if "trace" in head else trace.get("events", [])
        for e in events:
            name = e.get("name") or f"{e.get('category')}:{e.get('event')}"
            if name.endswith("metrics_updated"):
                rows.append({"t_ms": float(e["time"]), "reference_time_ms": ref, **e["data"]})
            elif name.endswith("congestion_state_updated"):
                rows.append({"t_ms": float(e["time"]), "state": e["data"].get("new")})
    return rows


def _qlog_records(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(errors="replace")
    if text.startswith("\x1e") or "\n\x1e" in text:
        out = []
        for chunk in text.split("\x1e"):
            with contextlib.suppress(json.JSONDecodeError):
                if chunk.strip():
                    out.append(json.loads(chunk))
        return out
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return []


def first_packet_ns(emu_log: Path, direction: str, after_ns: int) -> tuple[int, int] | None:
    """When the first packet offered to the link's `direction` at or after `after_ns`
    (monotonic) entered it and when it was delivered, from the emulator's log; None if none
    was delivered."""
    q = pd.read_csv(emu_log)
    q = q[(q["dir"] == direction) & (q["t_ns"] >= after_ns)]
    first = q[q["event"] == "enqueue"].head(1)
    if first.empty:
        return None
    out = q[(q["event"] == "deliver") & (q["id"] == int(first["id"].iloc[0]))]
    return (int(first["t_ns"].iloc[0]), int(out["t_ns"].iloc[0])) if len(out) else None


def _flows_frame(runs: list[dict[str, Any]], t_base: int, emu_log: Path) -> Any:
    """The data senders' qlog metrics → the simulator's flow trace. A qlog's times count from
    its connection's start: for the client, when its first packet entered the emulated link;
    for the server, when that packet came out of it (the emulator's log), the first after the
    client's start (with several flows starting together, the earliest of theirs)."""
    frames = []
    for r in runs:
        rows = read_qlog(r["dir"] / "qlog", r["sender"])
        # The client's packets go the reverse way when the server sends the data.
        first = first_packet_ns(
            emu_log, "reverse" if r["sender"] == "server" else "forward", r["start_at"]
        )
        if not rows or first is None:
            continue
        origin = first[0] if r["sender"] == "client" else first[1]
        df = pd.DataFrame(rows).sort_values("t_ms", kind="stable")
        if "congestion_window" in df and "cwnd" not in df:
            df = df.rename(columns={"congestion_window": "cwnd"})
        for col in ("cwnd", "bytes_in_flight", "smoothed_rtt", "ssthresh", "state"):
            df[col] = df[col].ffill() if col in df else np.nan
        df = df[df["cwnd"].notna()]
        ssthresh = df["ssthresh"].astype(float)
        ssthresh[ssthresh >= 2**62] = np.nan
        by_window = np.where(
            ssthresh.isna() | (df["cwnd"] < ssthresh), "slow_start", "congestion_avoidance"
        )
        phase = np.where(df["state"].isin(PHASES), df["state"].astype(str), by_window)
        frames.append(
            trace_frame(
                "flows",
                [
                    (df["t_ms"] / 1e3 + (origin - t_base) / 1e9).to_numpy(),
                    np.full(len(df), r["id"], dtype=np.uint32),
                    df["cwnd"].astype(np.uint64).to_numpy(),
                    ssthresh.to_numpy(),
                    df["bytes_in_flight"].fillna(0).astype(np.uint64).to_numpy(),
                    (df["smoothed_rtt"].astype(float) / 1e3).to_numpy(),
                    np.full(len(df), np.nan),
                    pd.Categorical(phase, categories=PHASES),
                ],
                {},
            )
        )
    if not frames:
        return empty_trace("flows")
    return pd.concat(frames, ignore_index=True)


def _summary(
    config: dict[str, Any], runs: list[dict[str, Any]], stats: dict[str, Any], t_base: int
) -> dict[str, Any]:
    counts = {row["port"]: row for row in stats.get("flows") or []}
    rows, warnings = [], []
    for r in runs:
        flow, client = r["flow"], r["client"]
        late = (client.started_ns - r["start_at"]) / 1e9
        if late > 0.005:
            warnings.append(f"flow {r['id']}'s client started {late * 1e3:.1f} ms late")
        # The flow's end: its client's exit, or the later server's with `ends = "both"`.
        both = r["flow"]["program"].get("ends", "client") == "both"
        ended = max(client.ended_ns, r["server"].ended_ns) if both else client.ended_ns
        run_s = (ended - client.started_ns) / 1e9
        size = flow.get("size_bytes")
        c = counts.get(r["port"], {})
        fwd, rev = c.get("forward", {}), c.get("reverse", {})
        rows.append(
            in_schema(
                "flow",
                {
                    "id": r["id"],
                    "cc": flow["cc"]["name"],
                    "size_bytes": size,
                    "completion_s": run_s,
                    "goodput_bps": size * 8 / run_s if size and run_s else None,
                },
                {
                    "program": {end: " ".join(r[end].argv) for end in ("server", "client")},
                    "sender": r["sender"],
                    "port": r["port"],
                    "start_late_s": late,
                    "forward_packets": fwd.get("packets"),
                    "forward_payload_bytes": fwd.get("payload_bytes"),
                    "reverse_packets": rev.get("packets"),
                    "reverse_payload_bytes": rev.get("payload_bytes"),
                },
            )
        )
    warnings.extend(tun_warnings(stats))
    return {
        "scenario": config.get("name"),
        "mode": "real",
        "stack": "program",
        "seed": config.get("seed", 0),
        "flows": rows,
        "links": link_rows(config, stats),
        "apps": [],
        "tun_tx_dropped": stats.get("tun_tx_dropped", {}),
        "warnings": warnings,
    }


def shell(config: dict[str, Any], argv: list[str], pcap: str | None = None) -> tuple[int, Any]:
    """`slowstart shell`: `argv` (an interactive shell when empty) in the sender's namespace,
    the scenario's path emulated to the receiver's, until it exits. Returns its exit status
    and a Result holding the emulator's queue trace and link rows. The environment tells it
    where it is: SLOWSTART_ADDR, SLOWSTART_PEER (the receiver's address), SLOWSTART_PEER_NS
    (`ip netns exec $SLOWSTART_PEER_NS CMD` runs CMD at the far end)."""
    check_available(config)
    flow_ports(config)
    command = argv or [os.environ.get("SHELL") or "/bin/sh", "-i"]
    if _executable(command[0]) is None:
        raise ProgramError(f"shell: {command[0]}: program not found")
    with workdir() as work:
        with testbed(config, work, 1448, pcap) as session:
            t_base = session.time_zero()
            env = {
                **os.environ,
                PARENT_ENV: str(os.getpid()),
                "SLOWSTART_ADDR": SND_ADDR,
                "SLOWSTART_PEER": RCV_ADDR,
                "SLOWSTART_PEER_NS": session.ns_rcv,
            }
            print(
                f"slowstart shell: {session.ns_snd} ({SND_ADDR}); the emulated path leads to "
                f"{session.ns_rcv} ({RCV_ADDR}): ip netns exec {session.ns_rcv} CMD runs CMD "
                "there",
                file=sys.stderr,
            )
            proc = subprocess.Popen(["ip", "netns", "exec", session.ns_snd, *command], env=env)
            # The terminal's ^C is the shell's: this process waits it out, and SIGTERM still
            # ends the run (testbed.workdir).
            old = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                status = proc.wait()
            finally:
                signal.signal(signal.SIGINT, old)
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        queues = queues_frame(session.emu_log, t_base)
    summary = {
        "scenario": config.get("name"),
        "mode": "real",
        "stack": "shell",
        "seed": config.get("seed", 0),
        "flows": [],
        "links": link_rows(config, session.stats),
        "tun_tx_dropped": session.stats.get("tun_tx_dropped", {}),
        "warnings": tun_warnings(session.stats),
    }
    empty = empty_trace("flows")
    result = FlowsResult(
        config=config, summary=summary, flows=empty, queues=queues, phase_names=PHASES
    )
    return status, result
