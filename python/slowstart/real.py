"""`slowstart real`: a scenario's path emulated on this machine, Linux TCP through it.

Topology. Two network namespaces, `ss-snd-<pid>` (the sender) and `ss-rcv-<pid>` (the sink),
joined by nothing but two TUN devices. The emulator (`slowstart-emu`, crates/slowstart-emu)
stays in the root namespace holding both TUN descriptors and runs the simulator's own link
model (`Channel`) per direction against the monotonic clock: the bottleneck's forward
direction carries data, its reverse the ACKs. The sender's access link is not emulated (at
10 Gbps it adds nothing measurable). The devices disappear with the emulator process; the
namespaces are deleted in `finally`, at exit and on SIGTERM/SIGINT, and stale `ss-*`
namespaces whose creator is gone are removed at the start of every run.

Kernel settings per run: MTU 1500 (MSS 1448 with timestamps), `tcp_no_metrics_save=1`,
routes with the flow's `initcwnd` on the sender and `initrwnd` on the receiver, congestion
control set per socket (`TCP_CONGESTION`). The sender samples TCP_INFO every `flow_interval`
(1 ms by default) into the simulator's trace schema.
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
from pathlib import Path
from typing import Any

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
    if shutil.which("cargo") and (REPO / "crates" / "slowstart-emu").is_dir():
        subprocess.run(
            ["cargo", "build", "--release", "--quiet", "-p", "slowstart-emu"],
            cwd=REPO,
            check=True,
        )
    if not binary.exists():
        raise RealUnavailable("slowstart-emu not found; set SLOWSTART_EMU or install cargo")
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


def _kill_ns(ns: str) -> None:
    pids = _ip("netns", "pids", ns, check=False).stdout.split()
    for p in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(p), signal.SIGKILL)
    _ip("netns", "del", ns, check=False)


def cleanup_stale() -> list[str]:
    """Delete `ss-snd-<pid>`/`ss-rcv-<pid>` namespaces whose creating process is gone."""
    removed = []
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        m = re.match(r"(ss-(?:snd|rcv)-(\d+))\b", line)
        if m and not _alive(int(m.group(2))):
            _kill_ns(m.group(1))
            removed.append(m.group(1))
    return removed


def _bottleneck(config: dict[str, Any]) -> dict[str, Any]:
    links = {link["name"]: link for link in config["links"]}
    if set(links) != {"access", "bottleneck"}:
        raise ValueError("real: only [path] scenarios (one bottleneck) can run for real")
    return links["bottleneck"]


class _Session:
    """Namespaces, emulator and agents of one real run; `close()` undoes everything."""

    def __init__(self, config: dict[str, Any], workdir: Path) -> None:
        self.pid = os.getpid()
        self.ns_snd, self.ns_rcv = f"ss-snd-{self.pid}", f"ss-rcv-{self.pid}"
        self.tun_snd, self.tun_rcv = f"sst{self.pid}s", f"sst{self.pid}r"
        self.workdir = workdir
        self.procs: list[subprocess.Popen[str]] = []
        self.emu: subprocess.Popen[str] | None = None
        self.emu_log = workdir / "emu.csv"
        link = _bottleneck(config)
        emu_cfg = {
            "forward": link["forward"],
            "reverse": link["reverse"],
            "seed": config.get("seed", 0),
            "mss": MSS,
        }
        (workdir / "emu.json").write_text(json.dumps(emu_cfg), encoding="utf-8")
        self.flow = config["flows"][0]

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
        )
        self.procs.append(self.emu)
        assert self.emu.stdout is not None
        if self.emu.stdout.readline().strip() != "ready":
            raise RuntimeError("slowstart-emu did not start")
        initcwnd = int(self.flow["initcwnd"])
        initrwnd = int(self.flow["initrwnd"])
        for ns, tun, me, peer, route in (
            (self.ns_snd, self.tun_snd, SND_ADDR, RCV_ADDR, ["initcwnd", str(initcwnd)]),
            (self.ns_rcv, self.tun_rcv, RCV_ADDR, SND_ADDR, ["initrwnd", str(initrwnd)]),
        ):
            _ip("netns", "add", ns)
            _ip("link", "set", tun, "netns", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "link", "set", tun, "mtu", "1500", "txqueuelen", "10000", "up")
            _ip("-n", ns, "addr", "add", me, "peer", peer, "dev", tun)
            _ip("-n", ns, "route", "replace", peer, "dev", tun, *route)
            for key, value in (
                ("net.ipv4.tcp_no_metrics_save", "1"),
                ("net.ipv4.tcp_rmem", "4096 131072 33554432"),
                ("net.ipv4.tcp_wmem", "4096 16384 33554432"),
            ):
                subprocess.run(
                    ["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"{key}={value}"],
                    check=False,
                    capture_output=True,
                )

    def agent(self, ns: str, *args: str) -> subprocess.Popen[str]:
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, str(_AGENTS), *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.procs.append(p)
        return p

    def close(self) -> dict[str, Any]:
        stats: dict[str, Any] = {}
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
                    stats = json.loads(out.strip().splitlines()[-1])
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


def _flows_frame(trace: dict[str, Any], t0: int) -> pd.DataFrame:
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
    return pd.DataFrame(
        {
            "t_s": (df["t_ns"] - t0) / 1e9,
            "flow": np.zeros(len(df), dtype=np.uint32),
            "cwnd_bytes": cwnd.astype(np.uint64),
            "ssthresh_bytes": ssthresh * mss,
            "inflight_bytes": inflight.astype(np.uint64),
            "srtt_s": df["rtt"] / 1e6,
            "delivered_bytes": df["bytes_acked"].clip(lower=1).astype(np.uint64) - 1,
            "phase": pd.Categorical(phase),
            "ca_state": df["ca_state"].map(_CA_STATES),
            "min_rtt_s": df["min_rtt"] / 1e6,
            "delivery_rate_bps": df["delivery_rate"] * 8.0,
            "total_retrans": df["total_retrans"],
        }
    )


def _queues_frame(log: Path, t0: int) -> pd.DataFrame:
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


def run_real(config: dict[str, Any], timeout_s: float | None = None) -> Result:
    """Run a canonical config's first flow for real (Linux TCP through the emulated path)."""
    reason = unavailable_reason()
    if reason:
        raise RealUnavailable(reason)
    flow = config["flows"][0]
    if len(config["flows"]) != 1:
        raise ValueError("real: one [[flow]] only for now")
    if flow.get("app", {}).get("kind", "bulk") != "bulk" or flow.get("size_bytes") is None:
        raise ValueError("real: a bulk flow with a size is needed")
    cc = flow["cc"]["name"]
    if cc not in ("reno", "cubic", "bbr"):
        raise ValueError(f"real: cc must be reno, cubic or bbr, got {cc!r}")
    cleanup_stale()
    size = int(flow["size_bytes"])
    timeout_s = timeout_s or config["duration_ns"] / 1e9 + 10
    # 0 means "every event" in the simulator; TCP_INFO is sampled every 1 ms then.
    interval = int(config.get("trace", {}).get("flow_interval_ns") or 1_000_000)
    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    with tempfile.TemporaryDirectory(prefix="slowstart-real-") as tmp:
        work = Path(tmp)
        session = _Session(config, work)
        _ACTIVE.append(session)
        for s in old:
            signal.signal(s, _on_signal)
        try:
            session.open()
            sink = session.agent(session.ns_rcv, "sink", str(PORT))
            assert sink.stdout is not None
            if sink.stdout.readline().strip() != "listening":
                raise RuntimeError("sink did not start")
            trace_path = work / "trace.json"
            sender = session.agent(
                session.ns_snd,
                "send",
                RCV_ADDR,
                str(PORT),
                str(size),
                cc,
                str(interval),
                str(trace_path),
            )
            sender.wait(timeout=timeout_s)
            if sender.returncode != 0:
                raise RuntimeError(f"sender failed with status {sender.returncode}")
            sink_report = json.loads(sink.stdout.readline())
            trace = json.loads(trace_path.read_text(encoding="utf-8"))
        finally:
            _ACTIVE.remove(session)
            stats = session.close()
            for s, h in old.items():
                signal.signal(s, h)
        t0 = trace["t0_ns"]
        flows = _flows_frame(trace, t0)
        queues = _queues_frame(session.emu_log, t0)
    return Result(
        config=config,
        summary=_summary(config, flows, sink_report, stats, t0),
        flows=flows,
        queues=queues,
        phase_names=sorted(set(flows["phase"].astype(str))),
    )


def _summary(
    config: dict[str, Any],
    flows: pd.DataFrame,
    sink: dict[str, Any],
    stats: dict[str, Any],
    t0: int,
) -> dict[str, Any]:
    flow = config["flows"][0]
    link = _bottleneck(config)
    completion = (sink["last_ns"] - t0) / 1e9 if sink["last_ns"] else None
    not_ss = flows[flows["phase"] != "slow_start"]
    ss_exit = float(not_ss["t_s"].iloc[0]) if len(not_ss) else None
    retrans = int(flows["total_retrans"].iloc[-1]) if len(flows) else 0
    fwd, rev = stats.get("forward", {}), stats.get("reverse", {})

    def link_row(name: str, rate: int, s: dict[str, Any]) -> dict[str, Any]:
        fwd_n = s.get("forwarded", 0)
        return {
            "name": name,
            "rate_bps": rate,
            "forwarded": fwd_n,
            "drops": s.get("drops", 0),
            "max_queue_bytes": s.get("max_queue_bytes", 0),
            "max_queue_packets": s.get("max_queue_packets", 0),
            "mean_queue_delay_s": s.get("total_wait_ns", 0) / 1e9 / fwd_n if fwd_n else 0.0,
        }

    return {
        "scenario": config.get("name"),
        "mode": "real",
        "seed": config.get("seed", 0),
        "flows": [
            {
                "id": 0,
                "cc": flow["cc"]["name"],
                "size_bytes": flow["size_bytes"],
                "bytes_delivered": sink["bytes"],
                "completion_s": completion,
                "first_byte_s": (sink["first_ns"] - t0) / 1e9 if sink["first_ns"] else None,
                "goodput_bps": sink["bytes"] * 8 / completion if completion else None,
                "slow_start_exit_s": ss_exit,
                "retransmits": retrans,
                "max_cwnd_bytes": int(flows["cwnd_bytes"].max()) if len(flows) else 0,
                "cwnd_at_exit_bytes": _cwnd_at(flows, ss_exit),
                "drops": fwd.get("drops", 0),
                "mss": MSS,
                "initcwnd": flow["initcwnd"],
                "initrwnd": flow["initrwnd"],
            }
        ],
        "links": [
            link_row("bottleneck", link["forward"]["rate_bps"], fwd),
            link_row("bottleneck:reverse", link["reverse"]["rate_bps"], rev),
        ],
        "apps": [],
    }


def _cwnd_at(flows: pd.DataFrame, t: float | None) -> int | None:
    """cwnd just before `t` (the largest slow-start cwnd when exit is the first loss)."""
    if t is None or not len(flows):
        return None
    before = flows[flows["t_s"] < t]
    return int(before["cwnd_bytes"].max()) if len(before) else None


def kernel_like(config: dict[str, Any]) -> dict[str, Any]:
    """The config with every flow's segment as Linux sends it over MTU 1500 (MSS 1448 and
    52 bytes of headers with timestamps), for a like-for-like simulation."""
    cfg = json.loads(json.dumps(config))
    for f in cfg["flows"]:
        f["mss"] = MSS
        f["header_bytes"] = HEADER_BYTES
    return cfg


# --- compare ------------------------------------------------------------------------------

METRICS = ("completion_s", "slow_start_exit_s", "cwnd_at_exit_bytes", "retransmits", "goodput_bps")


def _metrics(summary: dict[str, Any], flows: pd.DataFrame) -> dict[str, Any]:
    f = summary["flows"][0]
    m = {k: f.get(k) for k in METRICS}
    if m["cwnd_at_exit_bytes"] is None:
        m["cwnd_at_exit_bytes"] = _cwnd_at(flows[flows["flow"] == 0], f.get("slow_start_exit_s"))
    return m


def _rel(sim: float | None, real: float | None) -> float | None:
    if sim is None or real is None:
        return None
    if real == 0:
        return 0.0 if sim == 0 else None
    return (sim - real) / real


def compare(config: dict[str, Any], runs: int = 3) -> dict[str, Any]:
    """Simulate the config as Linux sends (MSS 1448) and run it `runs` times for real."""
    from slowstart.api import run_config

    sim = run_config(kernel_like(config))
    reals = [run_real(config) for _ in range(runs)]
    sim_m = _metrics(sim.summary, sim.flows)
    real_m = [_metrics(r.summary, r.flows) for r in reals]
    median: dict[str, Any] = {}
    spread: dict[str, Any] = {}
    for k in METRICS:
        vals = [m[k] for m in real_m if m[k] is not None]
        median[k] = float(np.median(vals)) if vals else None
        spread[k] = [min(vals), max(vals)] if vals else None
    return {
        "sim": sim.summary,
        "real": [r.summary for r in reals],
        "metrics": {"sim": sim_m, "real": real_m, "real_median": median, "real_range": spread},
        "diff": {k: _rel(sim_m[k], median[k]) for k in METRICS},
        "_results": (sim, reals),
    }


def overlay_plot(sim: Result, reals: list[Result], title: str | None = None) -> Any:
    """cwnd and bytes in flight against time: the simulation and every real run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    s = sim.flows[sim.flows["flow"] == 0]
    for ax, col, label in (
        (axes[0], "cwnd_bytes", "cwnd"),
        (axes[1], "inflight_bytes", "in flight"),
    ):
        for i, r in enumerate(reals):
            ax.plot(
                r.flows["t_s"],
                r.flows[col] / 1e3,
                color="tab:orange",
                alpha=0.5,
                lw=1,
                label="real (Linux)" if i == 0 else None,
            )
        ax.plot(s["t_s"], s[col] / 1e3, color="tab:blue", lw=1.2, label="simulated")
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
    for k in METRICS:
        sim_v, med, rng, d = m["sim"][k], m["real_median"][k], m["real_range"][k], c["diff"][k]

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
    return table(["metric", "sim", f"real median ({len(c['real'])})", "real range", "diff"], rows)


# --- CLI ----------------------------------------------------------------------------------


def _load(args: Any) -> dict[str, Any]:
    from slowstart.paths import scenario_path
    from slowstart.scenario import load

    return load(scenario_path(args.file), cc=args.cc, set=args.set or [], seed=args.seed)


def cmd_real(args: Any) -> int:
    from slowstart.cli import _error, format_summary

    reason = unavailable_reason()
    if reason:
        return _error(reason, 2)
    config = _load(args)
    result = run_real(config)
    if args.out:
        for path in result.save(args.out):
            print(f"wrote {path}", file=sys.stderr)
    print(json.dumps(result.summary) if args.json else format_summary(result.summary))
    return 0


def cmd_compare(args: Any) -> int:
    from slowstart.cli import _error

    reason = unavailable_reason()
    if reason:
        return _error(reason, 2)
    if args.runs < 1:
        return _error("--runs: expected a positive integer", 2)
    config = _load(args)
    c = compare(config, runs=args.runs)
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


def add_parsers(sub: Any) -> None:
    """`slowstart real` and `slowstart compare`, added to the CLI's subparsers."""
    for name, helptext, handler in (
        ("real", "run a scenario for real: Linux TCP through an emulated link (root)", cmd_real),
        ("compare", "simulate and run for real, side by side (root)", cmd_compare),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("file", help="scenario .toml (or the name of one in scenarios/)")
        p.add_argument(
            "--cc",
            default="cubic",
            choices=["reno", "cubic", "bbr"],
            help="Linux congestion control (default %(default)s)",
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
