"""`slowstart real`: a scenario's path emulated on this machine, Linux TCP through it.

Topology. Two network namespaces, `ss-snd-<pid>` (the sender) and `ss-rcv-<pid>` (the sink),
joined by nothing but two TUN devices. The emulator (`slowstart-emu`, crates/slowstart-emu)
stays in the root namespace holding both TUN descriptors and runs the simulator's own link
model (`Channel`) per direction against the monotonic clock: the bottleneck's forward
direction carries data, its reverse the ACKs and requests. The sender's access link is not
emulated (at 10 Gbps it adds nothing measurable). The devices disappear with the emulator
process; the namespaces are deleted in `finally`, at exit and on SIGTERM/SIGINT; emulator and
agents die with a SIGKILLed parent (PR_SET_PDEATHSIG), and every run starts by removing the
namespaces and work folders of runs whose process is gone.

Flows. Flow i uses port 5001 + i (the emulator numbers flows by it, for `drop = [{flow, seq}]`).
A bulk flow is a sender in `ss-snd` writing `size` bytes at once to a sink in `ss-rcv`; a web
flow is a server in `ss-snd` and a client in `ss-rcv` that connects, sends a request of
`request` bytes, reads the response, and asks for the next object at once (keep-alive) or on a
new connection, as crates/slowstart-sim/src/app/web.rs; first and last byte are timed at the
client. Each flow's active end starts at its `start` on a common clock.

Kernel settings per run: MTU 1500 (MSS 1448 with timestamps), `tcp_no_metrics_save=1`, IPv6
off, routes with the flows' `initcwnd` on the sender and `initrwnd` on the receiver, congestion
control set per socket (`TCP_CONGESTION`). The data sender samples TCP_INFO (and BBR's gains
from TCP_CC_INFO) every `flow_interval` (1 ms by default) into the simulator's trace schema.
Each TUN device's tx_dropped (packets lost before the emulator saw them) is read before it
goes and reported; it must stay 0.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy and pandas load when a run makes a frame: `slowstart list` needs neither
    import numpy as np
    import pandas as pd

    from slowstart.api import Result

MSS = 1448  # MTU 1500 minus 20 (IP), 20 (TCP) and 12 (timestamp option)
HEADER_BYTES = 52
PORT = 5001
SND_ADDR, RCV_ADDR = "10.200.0.1", "10.200.0.2"
_AGENTS = Path(__file__).with_name("_real_agents.py")
_CA_STATES = {0: "open", 1: "disorder", 2: "cwr", 3: "recovery", 4: "loss"}
REPO = Path(__file__).resolve().parents[2]


class RealUnavailable(RuntimeError):
    """This machine cannot run a real transfer (not root, no TUN, no `ip`)."""


def unavailable_reason() -> str | None:
    """Why a real run cannot happen here, or None when it can."""
    if sys.platform != "linux":
        return "real runs need Linux network namespaces"
    if os.geteuid() != 0:
        return "real runs need root (network namespaces and TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return "real runs need /dev/net/tun"
    if shutil.which("ip") is None:
        return "real runs need the `ip` command (iproute2)"
    return None


def emulator_binary() -> str:
    """Path of slowstart-emu: $SLOWSTART_EMU, else built (or found up to date) by cargo in this
    checkout, else an existing release build."""
    env = os.environ.get("SLOWSTART_EMU")
    if env:
        return env
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    binary = target / "release" / "slowstart-emu"
    built = None
    if shutil.which("cargo") and (REPO / "crates" / "slowstart-emu").is_dir():
        built = subprocess.run(
            ["cargo", "build", "--release", "--quiet", "-p", "slowstart-emu"],
            cwd=REPO,
            check=False,
        ).returncode
    if not binary.exists():
        why = f"cargo build failed (status {built})" if built else "not found"
        raise RealUnavailable(f"slowstart-emu: {why}; set SLOWSTART_EMU or install cargo")
    if built:
        print(
            f"warning: cargo build of slowstart-emu failed (status {built}); using {binary}",
            file=sys.stderr,
        )
    return str(binary)


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _child_env() -> dict[str, str]:
    """Children die with this process (PR_SET_PDEATHSIG); they exit at once if their parent is
    not this pid any more, which covers a kill before they armed the signal."""
    return {**os.environ, "SLOWSTART_PARENT": str(os.getpid())}


def _kill_ns(ns: str) -> None:
    pids = _ip("netns", "pids", ns, check=False).stdout.split()
    for p in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(p), signal.SIGKILL)
    _ip("netns", "del", ns, check=False)


def cleanup_stale() -> list[str]:
    """Delete `ss-snd-<pid>`/`ss-rcv-<pid>` namespaces (with any process left in them) and
    `slowstart-real-<pid>-*` work folders whose creating process is gone. Every real run
    starts with this, so a killed run's remains go with the next run."""
    removed = []
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        m = re.match(r"(ss-(?:snd|rcv)-(\d+))\b", line)
        if m and not _alive(int(m.group(2))):
            _kill_ns(m.group(1))
            removed.append(m.group(1))
    for d in Path(tempfile.gettempdir()).glob("slowstart-real-*-*"):
        m = re.match(r"slowstart-real-(\d+)-", d.name)
        if m and d.is_dir() and not _alive(int(m.group(1))):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(str(d))
    return removed


def _bottleneck(config: dict[str, Any]) -> dict[str, Any]:
    links = {link["name"]: link for link in config["links"]}
    if set(links) != {"access", "bottleneck"}:
        raise ValueError("real: only [path] scenarios (one bottleneck) can run for real")
    return links["bottleneck"]


def _web(flow: dict[str, Any]) -> dict[str, Any] | None:
    app = flow.get("app") or {"kind": "bulk"}
    return app if app["kind"] == "web" else None


# Simulated algorithm -> the Linux congestion control a real run sets (TCP_CONGESTION): `bbr1`
# models Linux's own `bbr` (tcp_bbr.c, BBR v1); the simulator's `bbr` follows the IETF draft.
LINUX_CC = {"reno": "reno", "cubic": "cubic", "bbr": "bbr", "bbr1": "bbr"}


def _linux_cc(flow: dict[str, Any]) -> str:
    return LINUX_CC[flow["cc"]["name"]]


def _check_flows(config: dict[str, Any]) -> None:
    for i, flow in enumerate(config["flows"]):
        kind = (flow.get("app") or {"kind": "bulk"})["kind"]
        if kind not in ("bulk", "web"):
            raise ValueError(f"app.{i}.kind: real runs accept bulk or web, got {kind!r}")
        if kind == "bulk" and flow.get("size_bytes") is None:
            raise ValueError(f'flow.{i}.size: a real bulk flow needs a size such as "10MB"')
        cc = flow["cc"]["name"]
        if cc not in LINUX_CC:
            raise ValueError(f"flow.{i}.cc: real runs accept {', '.join(LINUX_CC)}, got {cc!r}")
        # The server's route carries initcwnd and the client's initrwnd, one route each way,
        # so every flow over the path shares them.
        for key in ("initcwnd", "initrwnd"):
            if flow[key] != config["flows"][0][key]:
                raise ValueError(
                    f"flow.{i}.{key}: real flows share one route, so it must equal flow.0's "
                    f"{config['flows'][0][key]}, got {flow[key]}"
                )


class _Session:
    """Namespaces, emulator and agents of one real run; `close()` undoes everything."""

    def __init__(self, config: dict[str, Any], workdir: Path, mss: int = MSS) -> None:
        self.pid = os.getpid()
        self.ns_snd, self.ns_rcv = f"ss-snd-{self.pid}", f"ss-rcv-{self.pid}"
        self.tun_snd, self.tun_rcv = f"sst{self.pid}s", f"sst{self.pid}r"
        self.workdir = workdir
        self.procs: list[subprocess.Popen[str]] = []
        self.emu: subprocess.Popen[str] | None = None
        self.emu_log = workdir / "emu.csv"
        self.flows = config["flows"]
        link = _bottleneck(config)
        emu_cfg = {
            "forward": link["forward"],
            "reverse": link["reverse"],
            "seed": config.get("seed", 0),
            "mss": mss,
            # Flow i listens on PORT + i, so the emulator numbers flows as the scenario does.
            "ports": [PORT + i for i in range(len(self.flows))],
        }
        (workdir / "emu.json").write_text(json.dumps(emu_cfg), encoding="utf-8")

    def open(self) -> None:
        self.emu = subprocess.Popen(
            [
                emulator_binary(),
                str(self.workdir / "emu.json"),
                self.tun_snd,
                self.tun_rcv,
                str(self.emu_log),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=_child_env(),
        )
        self.procs.append(self.emu)
        assert self.emu.stdout is not None
        if self.emu.stdout.readline().strip() != "ready":
            raise RuntimeError("slowstart-emu did not start")
        initcwnd, initrwnd = self.flows[0]["initcwnd"], self.flows[0]["initrwnd"]
        for ns, tun, me, peer, route in (
            (self.ns_snd, self.tun_snd, SND_ADDR, RCV_ADDR, ["initcwnd", str(initcwnd)]),
            (self.ns_rcv, self.tun_rcv, RCV_ADDR, SND_ADDR, ["initrwnd", str(initrwnd)]),
        ):
            _ip("netns", "add", ns)
            _ip("link", "set", tun, "netns", ns)
            # Before the device comes up: no IPv6 (its router solicitations and MLD reports
            # would cross the emulated link), no cached metrics between runs, large buffers.
            sysctls = {
                "net.ipv6.conf.all.disable_ipv6": "1",
                "net.ipv6.conf.default.disable_ipv6": "1",
                f"net.ipv6.conf.{tun}.disable_ipv6": "1",
                "net.ipv4.tcp_no_metrics_save": "1",
                "net.ipv4.tcp_rmem": "4096 131072 33554432",
                "net.ipv4.tcp_wmem": "4096 16384 33554432",
            }
            subprocess.run(
                ["ip", "netns", "exec", ns, "sysctl", "-q", "-w"]
                + [f"{k}={v}" for k, v in sysctls.items()],
                check=False,
                capture_output=True,
            )
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "link", "set", tun, "mtu", "1500", "txqueuelen", "10000", "up")
            _ip("-n", ns, "addr", "add", me, "peer", peer, "dev", tun)
            _ip("-n", ns, "route", "replace", peer, "dev", tun, *route)

    def agent(self, ns: str, *args: str) -> subprocess.Popen[str]:
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, str(_AGENTS), *args],
            stdout=subprocess.PIPE,
            text=True,
            env=_child_env(),
        )
        self.procs.append(p)
        return p

    def process(self, ns: str, argv: list[str]) -> subprocess.Popen[str]:
        """A program in namespace `ns` that dies with this process ($SLOWSTART_PARENT)."""
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_child_env(),
        )
        self.procs.append(p)
        return p

    def tx_dropped(self) -> dict[str, int | None]:
        """Packets each TUN device dropped on its way to the emulator (its queue full): they
        would be losses the emulated link never saw, so they must stay 0."""
        out: dict[str, int | None] = {}
        for side, ns, dev in (
            ("sender", self.ns_snd, self.tun_snd),
            ("receiver", self.ns_rcv, self.tun_rcv),
        ):
            r = _ip("-n", ns, "-j", "-s", "link", "show", "dev", dev, check=False)
            try:
                out[side] = int(json.loads(r.stdout)[0]["stats64"]["tx"]["dropped"])
            except (ValueError, LookupError, TypeError):
                out[side] = None
        return out

    def close(self) -> dict[str, Any]:
        stats: dict[str, Any] = {}
        if self.emu is not None and self.emu.poll() is None:
            stats["tun_tx_dropped"] = self.tx_dropped()
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                out, _ = p.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
            if p is self.emu and out:
                with contextlib.suppress(json.JSONDecodeError):
                    stats.update(json.loads(out.strip().splitlines()[-1]))
        self.procs.clear()
        for ns in (self.ns_snd, self.ns_rcv):
            _kill_ns(ns)
        return stats


_ACTIVE: list[_Session] = []


def _close_all() -> None:
    while _ACTIVE:
        _ACTIVE.pop().close()


def _on_signal(signum: int, frame: object) -> None:
    _close_all()
    raise SystemExit(128 + signum)


atexit.register(_close_all)


def _flows_frame(trace: dict[str, Any], t0: int, flow_id: int, start_s: float) -> pd.DataFrame:
    """TCP_INFO samples → the simulator's flow schema; `t0` (the flow's actual start) is put
    at the flow's scenario `start_s`."""
    import numpy as np
    import pandas as pd

    df = pd.DataFrame(trace["rows"], columns=trace["keys"])
    mss = df["snd_mss"].replace(0, MSS)
    ssthresh = df["snd_ssthresh"].astype(float)
    ssthresh[ssthresh >= 0x7FFFFFFF] = np.inf
    cwnd = df["snd_cwnd"].astype(np.uint64) * mss
    inflight = (df["unacked"] - df["sacked"] - df["lost"] + df["retrans"]).clip(lower=0) * mss
    in_ss = (df["ca_state"] == 0) & (df["snd_cwnd"] < df["snd_ssthresh"])
    phase = np.where(
        df["ca_state"] >= 3,
        "recovery",
        np.where(in_ss, "slow_start", "congestion_avoidance"),
    )
    if "bbr_cwnd_gain" in df and (df["bbr_cwnd_gain"] > 0).any():
        phase = _bbr_modes(df["bbr_pacing_gain"], df["bbr_cwnd_gain"])
    return pd.DataFrame(
        {
            "t_s": (df["t_ns"] - t0) / 1e9 + start_s,
            "flow": np.full(len(df), flow_id, dtype=np.uint32),
            "cwnd_bytes": cwnd.astype(np.uint64),
            "ssthresh_bytes": ssthresh * mss,
            "inflight_bytes": inflight.astype(np.uint64),
            "srtt_s": df["rtt"] / 1e6,
            "delivered_bytes": df["bytes_acked"].clip(lower=1).astype(np.uint64) - 1,
            "phase": pd.Categorical(phase, categories=PHASES),
            "ca_state": df["ca_state"].map(_CA_STATES),
            "min_rtt_s": df["min_rtt"] / 1e6,
            "delivery_rate_bps": df["delivery_rate"] * 8.0,
            "total_retrans": df["total_retrans"],
        }
    )


PHASES = ["slow_start", "congestion_avoidance", "recovery", "startup", "drain", "probe_bw"]
PHASES += ["probe_rtt"]
# Linux tcp_bbr.c (BBR v1) gains in units of 256: STARTUP paces and sizes cwnd at
# bbr_high_gain = 256 * 2885 / 1000 + 1, DRAIN paces at 256 * 1000 / 2885 with the same
# cwnd gain, PROBE_BW keeps cwnd_gain 2 (512), PROBE_RTT runs both at 1 (256).
BBR_HIGH_GAIN = 256 * 2885 // 1000 + 1


def _bbr_modes(pacing: pd.Series, cwnd: pd.Series) -> np.ndarray:
    """BBR's mode from its gains (TCP_CC_INFO), named as the simulator's BBR phases. Before
    the first ACK the gains read 1 and 1; BBR is in STARTUP then (bbr_init)."""
    import numpy as np

    modes = np.select(
        [
            pacing == BBR_HIGH_GAIN,
            (pacing < 256) & (cwnd == BBR_HIGH_GAIN),
            (pacing == 256) & (cwnd == 256),
        ],
        ["startup", "drain", "probe_rtt"],
        "probe_bw",
    )
    started = np.flatnonzero(modes == "startup")
    modes[: started[0] if len(started) else 0] = "startup"
    return modes


def _queues_frame(log: Path, t0: int) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    q = pd.read_csv(log)
    q = q[q["event"] != "deliver"] if len(q) else q
    return pd.DataFrame(
        {
            "t_s": (q["t_ns"] - t0) / 1e9,
            "link": pd.Categorical(
                q["dir"].map({"forward": "bottleneck", "reverse": "bottleneck:reverse"})
            ),
            "queue_bytes": q["queue_bytes"].astype(np.uint64),
            "queue_packets": q["queue_packets"].astype(np.uint64),
        }
    ).reset_index(drop=True)


# Agents start in parallel (a Python interpreter each); the flows' common time 0 is this far
# after the passive ends are listening, so every active end is ready before its start.
START_LEAD_NS = 500_000_000


def _start_flows(session: _Session, work: Path, interval: int) -> tuple[int, list[dict[str, Any]]]:
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
            passive = session.agent(
                session.ns_snd, "server", port, _linux_cc(flow), *args, str(interval), str(trace)
            )
        else:
            args = []
            passive = session.agent(session.ns_rcv, "sink", port)
        assert passive.stdout is not None
        if passive.stdout.readline().strip() != "listening":
            raise RuntimeError(f"flow {i}: the {'server' if web else 'sink'} did not start")
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
    t_base = time.monotonic_ns() + START_LEAD_NS
    for r in runs:
        r["start_at"] = t_base + int(r["flow"]["start_ns"])
        if r["web"]:
            r["active"] = session.agent(
                session.ns_rcv, "client", SND_ADDR, r["port"], *r["args"], str(r["start_at"])
            )
        else:
            r["active"] = session.agent(
                session.ns_snd,
                "send",
                RCV_ADDR,
                r["port"],
                str(r["flow"]["size_bytes"]),
                _linux_cc(r["flow"]),
                str(interval),
                str(r["trace"]),
                str(r["start_at"]),
            )
    return t_base, runs


def run_real(config: dict[str, Any], timeout_s: float | None = None) -> Result:
    """Run a canonical config's flows for real (Linux TCP through the emulated path)."""
    import pandas as pd

    from slowstart.api import Result

    reason = unavailable_reason()
    if reason:
        raise RealUnavailable(reason)
    _bottleneck(config)
    _check_flows(config)
    cleanup_stale()
    timeout_s = timeout_s or config["duration_ns"] / 1e9 + 10
    # 0 means "every event" in the simulator; TCP_INFO is sampled every 1 ms then.
    interval = int(config.get("trace", {}).get("flow_interval_ns") or 1_000_000)
    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    with tempfile.TemporaryDirectory(prefix=f"slowstart-real-{os.getpid()}-") as tmp:
        work = Path(tmp)
        session = _Session(config, work)
        _ACTIVE.append(session)
        for s in old:
            signal.signal(s, _on_signal)
        try:
            session.open()
            t_base, runs = _start_flows(session, work, interval)
            deadline = time.monotonic() + START_LEAD_NS / 1e9 + timeout_s
            for i, r in enumerate(runs):
                side = "client" if r["web"] else "sender"
                try:
                    out, _ = r["active"].communicate(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    raise RuntimeError(f"flow {i}: not finished within {timeout_s:.0f} s") from None
                if r["active"].returncode != 0:
                    raise RuntimeError(
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
        finally:
            _ACTIVE.remove(session)
            stats = session.close()
            for s, h in old.items():
                signal.signal(s, h)
        frames = []
        for i, r in enumerate(runs):
            t0 = r["report"].get("t0_ns") or r["trace_data"]["t0_ns"]
            r["t0"] = t0
            frames.append(_flows_frame(r["trace_data"], t0, i, r["flow"]["start_ns"] / 1e9))
        flows = pd.concat(frames, ignore_index=True)
        flows["phase"] = pd.Categorical(flows["phase"].astype(str), categories=PHASES)
        queues = _queues_frame(session.emu_log, t_base)
    summary = _summary(config, flows, runs, stats, t_base)
    for warning in summary["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)
    return Result(config=config, summary=summary, flows=flows, queues=queues, phase_names=PHASES)


def _summary(
    config: dict[str, Any],
    flows: pd.DataFrame,
    runs: list[dict[str, Any]],
    stats: dict[str, Any],
    t_base: int,
) -> dict[str, Any]:
    rows, apps, warnings = [], [], []
    for i, r in enumerate(runs):
        flow, rep, t0 = r["flow"], r["report"], r["t0"]
        f = flows[flows["flow"] == i]
        late = (t0 - r["start_at"]) / 1e9
        if late > 0.005:
            warnings.append(f"flow {i} started {late * 1e3:.1f} ms late")
        if r["web"]:
            objs = rep["objects"]
            delivered = sum(o["bytes"] for o in objs)
            last = objs[-1]["last_ns"] if objs else None
            first = objs[0]["first_ns"] if objs else None
            apps.append(
                {
                    "flow": i,
                    "kind": "web",
                    "request_bytes": r["web"]["request_bytes"],
                    "objects_requested": len(objs),
                    "objects_completed": len(objs),
                    "objects": [
                        {
                            "bytes": o["bytes"],
                            "ttfb_s": (o["first_ns"] - o["wanted_ns"]) / 1e9,
                            "first_to_last_s": (o["last_ns"] - o["first_ns"]) / 1e9,
                            "total_s": (o["last_ns"] - o["wanted_ns"]) / 1e9,
                        }
                        for o in objs
                    ],
                }
            )
        else:
            delivered, last, first = rep["bytes"], rep["last_ns"], rep["first_ns"]
        completion = (last - t0) / 1e9 if last else None
        active = completion or None
        not_ss = f[~f["phase"].isin(["slow_start", "startup"])]
        ss_exit = float(not_ss["t_s"].iloc[0]) - flow["start_ns"] / 1e9 if len(not_ss) else None
        rows.append(
            {
                "id": i,
                "cc": flow["cc"]["name"],
                "size_bytes": flow["size_bytes"],
                "bytes_delivered": delivered,
                "completion_s": completion,
                "first_byte_s": (first - t0) / 1e9 if first else None,
                "goodput_bps": delivered * 8 / active if active else None,
                "slow_start_exit_s": ss_exit,
                "retransmits": int(f["total_retrans"].iloc[-1]) if len(f) else 0,
                "max_cwnd_bytes": int(f["cwnd_bytes"].max()) if len(f) else 0,
                "cwnd_at_exit_bytes": _cwnd_at(
                    f, None if ss_exit is None else ss_exit + flow["start_ns"] / 1e9
                ),
                "mss": MSS,
                "initcwnd": flow["initcwnd"],
                "initrwnd": flow["initrwnd"],
                "start_late_s": late,
            }
        )
    warnings.extend(tun_warnings(stats))

    return {
        "scenario": config.get("name"),
        "mode": "real",
        "seed": config.get("seed", 0),
        "flows": rows,
        "links": _link_rows(config, stats),
        "apps": apps,
        "tun_tx_dropped": stats.get("tun_tx_dropped", {}),
        "warnings": warnings,
    }


def tun_warnings(stats: dict[str, Any]) -> list[str]:
    """One line per TUN device that dropped packets before the emulator saw them."""
    return [
        f"the {side}'s TUN device dropped {n} packets before the emulator saw them "
        "(losses outside the emulated link)"
        for side, n in stats.get("tun_tx_dropped", {}).items()
        if n
    ]


def _link_rows(config: dict[str, Any], stats: dict[str, Any]) -> list[dict[str, Any]]:
    """The bottleneck's two directions as the simulator's link summaries, from the
    emulator's statistics."""
    link = _bottleneck(config)

    def row(name: str, rate: int, s: dict[str, Any]) -> dict[str, Any]:
        n = s.get("forwarded", 0)
        return {
            "name": name,
            "rate_bps": rate,
            "forwarded": n,
            "drops": s.get("drops", 0),
            "max_queue_bytes": s.get("max_queue_bytes", 0),
            "max_queue_packets": s.get("max_queue_packets", 0),
            "mean_queue_delay_s": s.get("total_wait_ns", 0) / 1e9 / n if n else 0.0,
        }

    return [
        row("bottleneck", link["forward"]["rate_bps"], stats.get("forward", {})),
        row("bottleneck:reverse", link["reverse"]["rate_bps"], stats.get("reverse", {})),
    ]


def _cwnd_at(flows: pd.DataFrame, t: float | None) -> int | None:
    """cwnd just before `t` (the largest slow-start cwnd when exit is the first loss)."""
    if t is None or not len(flows):
        return None
    before = flows[flows["t_s"] < t]
    return int(before["cwnd_bytes"].max()) if len(before) else None


def kernel_like(config: dict[str, Any]) -> dict[str, Any]:
    """The config with every flow as the kernel runs it, for a like-for-like simulation:
    segments as Linux sends them over MTU 1500 (MSS 1448, 52 bytes of headers with
    timestamps), byte counting, since Linux 3.9 removed `net.ipv4.tcp_abc` and
    tcp_slow_start() grows cwnd by the segments each ACK covers, and the receiver's quick-ACK
    start (tcp_incr_quickack)."""
    cfg = json.loads(json.dumps(config))
    for f in cfg["flows"]:
        f.update(KERNEL_FLOW)
    return cfg


KERNEL_FLOW = {"mss": MSS, "header_bytes": HEADER_BYTES, "abc": True, "quickack": True}


# --- compare ------------------------------------------------------------------------------

METRICS = ("completion_s", "slow_start_exit_s", "cwnd_at_exit_bytes", "retransmits", "goodput_bps")


OBJECT_METRICS = ("ttfb_s", "first_to_last_s", "total_s")


def _metrics(
    summary: dict[str, Any], flows: pd.DataFrame, config: dict[str, Any]
) -> dict[str, Any]:
    """The compared metrics: METRICS per flow (`flowN.` before the names of flows after the
    first) and, for a web flow, OBJECT_METRICS per object (`objectK.`)."""
    m: dict[str, Any] = {}
    apps = {a["flow"]: a for a in summary.get("apps") or [] if a["kind"] == "web"}
    for f in summary["flows"]:
        i = f["id"]
        pre = f"flow{i}." if i else ""
        for k in METRICS:
            m[pre + k] = f.get(k)
        if m[pre + "cwnd_at_exit_bytes"] is None and f.get("slow_start_exit_s") is not None:
            at = f["slow_start_exit_s"] + config["flows"][i]["start_ns"] / 1e9
            m[pre + "cwnd_at_exit_bytes"] = _cwnd_at(flows[flows["flow"] == i], at)
        for n, o in enumerate(apps.get(i, {}).get("objects", [])):
            for k in OBJECT_METRICS:
                m[f"{pre}object{n}.{k}"] = o[k]
    return m


def slow_start_rounds(
    flows: pd.DataFrame, summary: dict[str, Any], flow: int = 0, mss: int = MSS
) -> list[int]:
    """cwnd per round trip in slow start, in segments, until slow start ends (the first loss
    for Reno): the values cwnd holds for at least a fifth of the base RTT, in order. While
    cwnd is below the BDP each round's ACKs come as a train followed by a quiet gap, so every
    round shows as one such value; where ACKs no longer leave gaps, rounds merge."""
    f = flows[flows["flow"] == flow]
    s = next(x for x in summary["flows"] if x["id"] == flow)
    if s.get("slow_start_exit_s") is not None:
        f = f[f["t_s"] < s["slow_start_exit_s"] + f["t_s"].min()]
    srtt = f["srtt_s"][f["srtt_s"] > 0]
    if f.empty or srtt.empty:
        return []
    hold = float(srtt.min()) / 5
    rounds: list[int] = []
    value, since = None, 0.0
    for t, cwnd in zip(f["t_s"], f["cwnd_bytes"], strict=True):
        seg = round(cwnd / mss)
        if seg != value:
            if value is not None and t - since >= hold and (not rounds or rounds[-1] != value):
                rounds.append(value)
            value, since = seg, t
    return rounds


def _rel(sim: float | None, real: float | None) -> float | None:
    if sim is None or real is None:
        return None
    if real == 0:
        return 0.0 if sim == 0 else None
    return (sim - real) / real


def compare(config: dict[str, Any], runs: int = 3, stack: str = "kernel") -> dict[str, Any]:
    """Simulate the config as the stack sends it and run it `runs` times for real: Linux TCP
    (`kernel`, MSS 1448) or the simulator's own transport over UDP (`udp`, MSS 1424)."""
    import numpy as np

    from slowstart.api import run_config

    if stack == "udp":
        from slowstart.real_udp import UDP_FLOW, UDP_MSS, run_real_udp, udp_like

        sim = run_config(udp_like(config))
        reals = [run_real_udp(config) for _ in range(runs)]
        settings, mss = UDP_FLOW, UDP_MSS
    else:
        sim = run_config(kernel_like(config))
        reals = [run_real(config) for _ in range(runs)]
        settings, mss = KERNEL_FLOW, MSS
    sim_m = _metrics(sim.summary, sim.flows, config)
    real_m = [_metrics(r.summary, r.flows, config) for r in reals]
    keys = list(dict.fromkeys([*sim_m, *(k for m in real_m for k in m)]))
    median: dict[str, Any] = {}
    spread: dict[str, Any] = {}
    for k in keys:
        vals = [m[k] for m in real_m if m.get(k) is not None]
        median[k] = float(np.median(vals)) if vals else None
        spread[k] = [min(vals), max(vals)] if vals else None
    rounds = {
        "sim": slow_start_rounds(sim.flows, sim.summary, mss=mss),
        "real": [slow_start_rounds(r.flows, r.summary, mss=mss) for r in reals],
    }
    return {
        "stack": stack,
        "sim": sim.summary,
        "sim_flow_settings": settings,
        "slow_start_rounds": rounds,
        "real": [r.summary for r in reals],
        "metrics": {"sim": sim_m, "real": real_m, "real_median": median, "real_range": spread},
        "diff": {k: _rel(sim_m.get(k), median[k]) for k in keys},
        "_results": (sim, reals),
    }


def compare_both(config: dict[str, Any], runs: int = 3) -> dict[str, Any]:
    """`compare --stack both`: the kernel and the UDP comparisons of one config. Each stack
    has its own simulation, sized as that stack sends (MSS 1448 and 1424)."""
    return {
        "stack": "both",
        "kernel": compare(config, runs=runs, stack="kernel"),
        "udp": compare(config, runs=runs, stack="udp"),
    }


def format_compare_both(c: dict[str, Any]) -> str:
    """One table: per metric, the simulation beside Linux and beside the UDP stack."""
    from slowstart.cli import table

    k, u = c["kernel"], c["udp"]

    def f(v: Any) -> str:
        return "-" if v is None else f"{v:.4g}"

    def d(v: Any) -> str:
        return "-" if v is None else f"{v:+.1%}"

    rows = []
    for key in dict.fromkeys([*k["diff"], *u["diff"]]):
        rows.append(
            [key]
            + [f(k["metrics"]["sim"].get(key)), f(k["metrics"]["real_median"].get(key))]
            + [d(k["diff"].get(key))]
            + [f(u["metrics"]["sim"].get(key)), f(u["metrics"]["real_median"].get(key))]
            + [d(u["diff"].get(key))]
        )
    headers = ["metric", "sim (MSS 1448)", f"Linux ({len(k['real'])})", "diff"]
    headers += ["sim (MSS 1424)", f"UDP ({len(u['real'])})", "diff"]
    out = table(headers, rows)
    lines = []
    for name, c1 in (("Linux", k), ("UDP", u)):
        rounds = c1.get("slow_start_rounds")
        if rounds:
            real = "; ".join(str(r) for r in rounds["real"])
            lines.append(
                f"slow-start rounds (cwnd, segments), {name}: sim {rounds['sim']}; real {real}"
            )
    return "\n".join([out, *lines])


def overlay_plot(sim: Result, reals: list[Result], title: str | None = None) -> Any:
    """cwnd and bytes in flight against time: the simulation and every real run, one line
    style per flow."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 6))
    axes = fig.subplots(2, 1, sharex=True)
    styles = ["-", "--", ":", "-."]
    ids = sorted(int(i) for i in sim.flows["flow"].unique())
    for ax, col, label in (
        (axes[0], "cwnd_bytes", "cwnd"),
        (axes[1], "inflight_bytes", "in flight"),
    ):
        for n, i in enumerate(ids):
            name = f" flow {i}" if len(ids) > 1 else ""
            ls = styles[n % len(styles)]
            for k, r in enumerate(reals):
                f = r.flows[r.flows["flow"] == i]
                ax.plot(
                    f["t_s"],
                    f[col] / 1e3,
                    color="tab:orange",
                    ls=ls,
                    alpha=0.5,
                    lw=1,
                    drawstyle="steps-post",
                    label=f"real (Linux){name}" if k == 0 else None,
                )
            s = sim.flows[sim.flows["flow"] == i]
            ax.plot(
                s["t_s"],
                s[col] / 1e3,
                color="tab:blue",
                ls=ls,
                lw=1.2,
                label=f"simulated{name}",
                drawstyle="steps-post",
            )
        ax.set_ylabel(f"{label} (kB)")
        ax.legend(loc="upper right")
    axes[1].set_xlabel("time (s)")
    axes[0].set_title(title or "simulated vs real")
    fig.tight_layout()
    return fig


def format_compare(c: dict[str, Any]) -> str:
    from slowstart.cli import table

    m = c["metrics"]
    rows = []
    for k in c["diff"]:
        sim_v, med, rng, d = m["sim"].get(k), m["real_median"][k], m["real_range"][k], c["diff"][k]

        def f(v: Any) -> str:
            return "-" if v is None else f"{v:.4g}"

        rows.append(
            [
                k,
                f(sim_v),
                f(med),
                f"{f(rng[0])}..{f(rng[1])}" if rng else "-",
                "-" if d is None else f"{d:+.1%}",
            ]
        )
    out = table(["metric", "sim", f"real median ({len(c['real'])})", "real range", "diff"], rows)
    rounds = c.get("slow_start_rounds")
    if rounds:
        real = "; ".join(str(r) for r in rounds["real"])
        out += f"\nslow-start rounds (cwnd, segments): sim {rounds['sim']}; real {real}"
    return out


# --- CLI ----------------------------------------------------------------------------------


def format_real(s: dict[str, Any]) -> str:
    """A real run's summary as tables: flows, links, web objects, TUN drops."""
    from slowstart.cli import fmt_bytes, fmt_rate, fmt_s, table

    tun = s.get("tun_tx_dropped") or {}
    stack = "the simulator's transport over UDP" if s.get("stack") == "udp" else "Linux TCP"
    head = (
        f"{s['scenario']}: real ({stack} through the emulated link), seed {s['seed']}; "
        "TUN tx_dropped " + ", ".join(f"{k} {v}" for k, v in tun.items())
    )
    flows = table(
        ["flow", "cc", "delivered", "completion_s", "goodput", "ss_exit_s", "retx", "max_cwnd"],
        [
            [str(f["id"]), f["cc"], fmt_bytes(f["bytes_delivered"]), fmt_s(f["completion_s"])]
            + [fmt_rate(f["goodput_bps"]), fmt_s(f["slow_start_exit_s"]), str(f["retransmits"])]
            + [fmt_bytes(f["max_cwnd_bytes"])]
            for f in s["flows"]
        ],
    )
    links = table(
        ["link", "drops", "max_queue", "mean_queue_delay_ms"],
        [
            [x["name"], str(x["drops"]), fmt_bytes(x["max_queue_bytes"])]
            + [f"{x['mean_queue_delay_s'] * 1e3:.3f}"]
            for x in s["links"]
        ],
    )
    parts = [head, flows, links]
    objects = [
        [str(a["flow"]), str(k), fmt_bytes(o["bytes"]), fmt_s(o["ttfb_s"])]
        + [fmt_s(o["first_to_last_s"]), fmt_s(o["total_s"])]
        for a in s.get("apps") or []
        for k, o in enumerate(a["objects"])
    ]
    if objects:
        headers = ["flow", "object", "bytes", "ttfb_s", "first_to_last_s", "total_s"]
        parts.append(table(headers, objects))
    return "\n\n".join(parts)


def _load(args: Any) -> dict[str, Any]:
    from slowstart.paths import scenario_path
    from slowstart.scenario import load

    return load(scenario_path(args.file), cc=args.cc, set=args.set or [], seed=args.seed)


def _check_cc(args: Any) -> str | None:
    """The kernel stack runs Linux's algorithms only; the UDP stack any of the library's."""
    if args.stack in ("kernel", "both") and args.cc.split(":")[0] not in LINUX_CC:
        return (
            f"--cc: the kernel stack runs {', '.join(LINUX_CC)}, got {args.cc!r} "
            "(--stack udp runs every algorithm)"
        )
    return None


def cmd_real(args: Any) -> int:
    from slowstart.cli import _error

    reason = unavailable_reason()
    if reason:
        return _error(reason, 2)
    bad = _check_cc(args)
    if bad:
        return _error(bad, 2)
    config = _load(args)
    try:
        if args.stack == "udp":
            from slowstart.real_udp import run_real_udp

            result = run_real_udp(config)
        else:
            result = run_real(config)
    except RealUnavailable as e:
        return _error(e, 2)
    if args.out:
        for path in result.save(args.out):
            print(f"wrote {path}", file=sys.stderr)
    print(json.dumps(result.summary) if args.json else format_real(result.summary))
    return 0


def cmd_compare(args: Any) -> int:
    from slowstart.cli import _error

    reason = unavailable_reason()
    if reason:
        return _error(reason, 2)
    if args.runs < 1:
        return _error("--runs: expected a positive integer", 2)
    bad = _check_cc(args)
    if bad:
        return _error(bad, 2)
    config = _load(args)
    if args.stack == "both":
        return _compare_both(args, config)
    try:
        c = compare(config, runs=args.runs, stack=args.stack)
    except RealUnavailable as e:
        return _error(e, 2)
    sim, reals = c.pop("_results")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig = overlay_plot(
        sim, reals, title=f"{config.get('name')}: {config['flows'][0]['cc']['name']}"
    )
    fig.savefig(out / "compare.png", dpi=120)
    (out / "compare.json").write_text(json.dumps(c, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out / 'compare.png'}", file=sys.stderr)
    if args.json:
        print(json.dumps({"sim": c["sim"], "real": c["real"], "diff": c["diff"]}))
    else:
        print(format_compare(c))
    return 0


def _compare_both(args: Any, config: dict[str, Any]) -> int:
    """`compare --stack both`: compare-kernel.png, compare-udp.png, compare.json, one table."""
    from slowstart.cli import _error

    try:
        c = compare_both(config, runs=args.runs)
    except RealUnavailable as e:
        return _error(e, 2)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    title = f"{config.get('name')}: {config['flows'][0]['cc']['name']}"
    for stack, who in (("kernel", "Linux"), ("udp", "UDP stack")):
        sim, reals = c[stack].pop("_results")
        fig = overlay_plot(sim, reals, title=f"{title}, {who}")
        fig.savefig(out / f"compare-{stack}.png", dpi=120)
        print(f"wrote {out / f'compare-{stack}.png'}", file=sys.stderr)
    (out / "compare.json").write_text(json.dumps(c, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(
            json.dumps(
                {
                    stack: {
                        "sim": c[stack]["sim"],
                        "real": c[stack]["real"],
                        "diff": c[stack]["diff"],
                    }
                    for stack in ("kernel", "udp")
                }
            )
        )
    else:
        print(format_compare_both(c))
    return 0


def add_parsers(sub: Any) -> None:
    """`slowstart real` and `slowstart compare`, added to the CLI's subparsers."""
    for name, helptext, handler in (
        (
            "real",
            "run a scenario for real: Linux TCP (or the simulator's transport over UDP) "
            "through an emulated link (root)",
            cmd_real,
        ),
        ("compare", "simulate and run for real, side by side (root)", cmd_compare),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("file", help="scenario .toml (or the name of one in scenarios/)")
        p.add_argument(
            "--cc",
            default="cubic",
            help=f"congestion control: {', '.join(LINUX_CC)} on the kernel stack (bbr1 "
            "simulates Linux's bbr, bbr the IETF draft), any algorithm on the UDP stack "
            "(default %(default)s)",
        )
        p.add_argument(
            "--stack",
            default="kernel",
            choices=["kernel", "udp", "both"] if name == "compare" else ["kernel", "udp"],
            help="kernel: Linux TCP; udp: the simulator's own transport and controller over "
            "UDP sockets"
            + ("; both: the two, each beside its own simulation" if name == "compare" else "")
            + " (default %(default)s)",
        )
        p.add_argument(
            "--set",
            action="append",
            metavar="KEY=VALUE",
            help="override a scenario value, e.g. flow.0.initcwnd=20 (repeatable)",
        )
        p.add_argument("--seed", type=int, help="random seed (loss, jitter)")
        p.add_argument("--json", action="store_true", help="print JSON instead of the table")
        if name == "real":
            p.add_argument("--out", help="write summary.json, flows/queues.parquet, cwnd.png here")
        else:
            p.add_argument("--runs", type=int, default=3, help="real runs (default %(default)s)")
            p.add_argument("--out", default="out/compare", help="folder (default %(default)s)")
        p.set_defaults(handler=handler)
