"""The testbed of `slowstart real`: a scenario's path emulated on this machine.

Topology. Two network namespaces, `ss-snd-<pid>` (the sender) and `ss-rcv-<pid>` (the sink),
joined by nothing but two TUN devices. The emulator (`slowstart-emu`, crates/slowstart-emu)
stays in the root namespace holding both TUN descriptors and runs the simulator's own link
model (`Channel`) per direction against the monotonic clock: the bottleneck's forward
direction carries data, its reverse the ACKs and requests. The sender's access link is not
emulated (at 10 Gbps it adds nothing measurable). The devices disappear with the emulator
process; the namespaces are deleted, with their TCP sockets (`_kill_ns`), when the testbed
closes, at exit and on SIGTERM/SIGINT;
emulator and endpoints run at real-time priority (`REALTIME_PRIORITY`) and die with a
SIGKILLed parent (PR_SET_PDEATHSIG), and every run starts by removing the namespaces and work
folders of runs whose process is gone. Everything a run makes carries its process id
(`RunNames`), so runs, and test suites, can share a machine.

Flow i uses port 5001 + i, or its program's `port` (`flow_ports`; the emulator numbers flows
by it, for `drop = [{flow, seq}]`, and counts each flow's packets and payload each way). Each
flow's active end starts at its `start` on a common clock, START_LEAD_NS after the passive ends
listen. Kernel settings per namespace: MTU 1500, `tcp_no_metrics_save=1`, IPv6 off, routes with
flow 0's `initcwnd` on the sender and `initrwnd` on the receiver, `tcp_congestion_control`
flow 0's Linux algorithm (`LINUX_CC`; cubic for the library's others), as a new namespace
would otherwise inherit the root namespace's (bbr on this machine); the sysctl may be refused
(`route_cc`), so one algorithm for every flow goes on the routes too. Each TUN device's
tx_dropped (packets lost before the emulator saw them) is read before it goes and reported; it
must stay 0.

Cross traffic (`[[cross]]`) is the emulator's own: it sends each source's packets into the
direction of the bottleneck the source crosses from the same time 0 (`Session.time_zero`), so
only sources that cross it can run (`cross_directions`).

The endpoints are the stacks' own: kernel.py (Linux TCP) and udp.py (the simulator's
transport over UDP); summary.py reports what they measured in the simulator's schema.
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from slowstart.loading.defaults import defaults
from slowstart.paths import REPO
from slowstart.units import ScenarioError

PORT = 5001
SND_ADDR, RCV_ADDR = "10.200.0.1", "10.200.0.2"
# Simulated algorithm -> the Linux congestion control a real run sets (TCP_CONGESTION, and the
# namespaces' net.ipv4.tcp_congestion_control): `bbr1` models Linux's own `bbr` (tcp_bbr.c,
# BBR v1); the simulator's `bbr` follows the IETF draft.
LINUX_CC = {"reno": "reno", "cubic": "cubic", "bbr": "bbr", "bbr1": "bbr"}
# Endpoints start in parallel (a Python interpreter each); the flows' common time 0 is this far
# after the passive ends are listening, so every active end is ready before its start.
START_LEAD_NS = 500_000_000


class RealUnavailable(RuntimeError):
    """This machine cannot run a real transfer (not root, no TUN, no `ip`)."""


class RealRunError(ValueError):
    """A real run's program (an emulator, an endpoint, a server) did not start, failed or did
    not finish: one line naming it, exit status 2 like any input that cannot run."""


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


def binary_variable(crate: str) -> str:
    """The environment variable naming `crate`'s binary: SLOWSTART_EMU for slowstart-emu."""
    return "SLOWSTART_" + crate.removeprefix("slowstart-").upper()


def cargo_binary(crate: str) -> str:
    """Path of the binary of workspace crate `crate` (slowstart-emu, slowstart-udp,
    slowstart-quinn): $SLOWSTART_EMU (..._UDP, ..._QUINN) if set, else built (or found up to
    date) by cargo in this checkout, else an existing release build."""
    variable = binary_variable(crate)
    env = os.environ.get(variable)
    if env:
        return env
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    binary = target / "release" / crate
    built = None
    if shutil.which("cargo") and (REPO / "crates" / crate).is_dir():
        built = subprocess.run(
            ["cargo", "build", "--release", "--quiet", "-p", crate], cwd=REPO, check=False
        ).returncode
    if not binary.exists():
        why = f"cargo build failed (status {built})" if built else "not found"
        raise RealUnavailable(f"{crate}: {why}; set {variable} or install cargo")
    if built:
        print(
            f"warning: cargo build of {crate} failed (status {built}); using {binary}",
            file=sys.stderr,
        )
    return str(binary)


def emulator_binary() -> str:
    """Path of slowstart-emu ([`cargo_binary`])."""
    return cargo_binary("slowstart-emu")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def sysctl(ns: str, values: dict[str, str]) -> None:
    """Set kernel `values` in namespace `ns` (best effort: a key this kernel lacks is skipped)."""
    subprocess.run(
        ["ip", "netns", "exec", ns, "sysctl", "-q", "-w"] + [f"{k}={v}" for k, v in values.items()],
        check=False,
        capture_output=True,
    )


def endpoint_sysctls(tun: str, cc: str) -> dict[str, str]:
    """An endpoint namespace's settings, before its device comes up: no IPv6 (its router
    solicitations and MLD reports would cross the emulated link), no cached metrics between
    runs, large buffers, and Linux TCP's algorithm `cc` (a new namespace inherits bbr here)."""
    return {
        "net.ipv6.conf.all.disable_ipv6": "1",
        "net.ipv6.conf.default.disable_ipv6": "1",
        f"net.ipv6.conf.{tun}.disable_ipv6": "1",
        "net.ipv4.tcp_no_metrics_save": "1",
        "net.ipv4.tcp_rmem": "4096 131072 33554432",
        "net.ipv4.tcp_wmem": "4096 16384 33554432",
        "net.ipv4.tcp_congestion_control": cc,
    }


def route_cc(cc: str) -> list[str]:
    """A route's attributes that give every TCP connection over it Linux's algorithm `cc`,
    both the ones it opens and the ones it accepts (`ip route ... congctl`, RTAX_CC_ALGO).
    A namespace's `net.ipv4.tcp_congestion_control` takes only an algorithm the root
    namespace allows (`tcp_allowed_congestion_control`, "reno bbr" on this host; cubic is
    refused with EPERM and the namespace keeps the root's bbr); a route takes any that is
    loaded. It overrides a socket's own TCP_CONGESTION at connect, so only where every
    connection runs one algorithm (a swarm)."""
    return ["congctl", cc]


def tun_tx_dropped(ns: str, dev: str) -> int | None:
    """Packets TUN device `dev` in `ns` dropped on its way to the emulator (its queue full):
    losses the emulated link never saw, so they must stay 0. None if unreadable."""
    r = _ip("-n", ns, "-j", "-s", "link", "show", "dev", dev, check=False)
    try:
        return int(json.loads(r.stdout)[0]["stats64"]["tx"]["dropped"])
    except (ValueError, LookupError, TypeError):
        return None


def spawn_emulator(
    binary: str, config: Path, tun_a: str, tun_b: str, log: Path, pcap: str | Path | None
) -> subprocess.Popen[str]:
    """slowstart-emu (`binary`: `emulator_binary()`) on `config` between TUN devices `tun_a`
    and `tun_b`, its queue log in `log`, captures in folder `pcap`; see `emulator_ready`."""
    return subprocess.Popen(
        [binary, str(config), tun_a, tun_b, str(log), *([str(pcap)] if pcap else [])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_child_env(),
    )


def emulator_ready(p: subprocess.Popen[str]) -> bool:
    """Whether emulator `p` said it is ready (its devices open), or it ended first."""
    assert p.stdout is not None
    return p.stdout.readline().strip() == "ready"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# In each child's environment: the pid of the run that started it.
PARENT_ENV = "SLOWSTART_PARENT"


def _child_env() -> dict[str, str]:
    """Children die with this process (PR_SET_PDEATHSIG); they exit at once if their parent is
    not this pid any more, which covers a kill before they armed the signal."""
    return {**os.environ, PARENT_ENV: str(os.getpid())}


# The emulator and the endpoints are the network and its hosts: they run at the lowest
# real-time priority (SCHED_FIFO 1), above every ordinary process, so CPU-bound neighbours do
# not make the emulated link or an endpoint late. Measured 11-27 on this 2-core VM at a load of
# 15, three runs each way: real-20mbps Reno completion -0.2..-0.3% from the simulation with
# every run's slow-start rounds exact, against -1.9..-3.5% and a round split in three runs of
# nine at normal priority; the atou stretch over the UDP stack +0.4..+0.5% against +4.7..+9.8%.
# The kernel's real-time throttling (sched_rt_runtime_us, 95% by default) leaves the rest of
# the machine its share. They spin at most 2 ms at a time (_agents._sleep_until;
# slowstart-udp 60 us, clock.rs SPIN_NS).
REALTIME_PRIORITY = 1


def _keep_time(p: subprocess.Popen[str]) -> str | None:
    """Give process `p` REALTIME_PRIORITY; why not, if it cannot be had (no CAP_SYS_NICE)."""
    try:
        os.sched_setscheduler(p.pid, os.SCHED_FIFO, os.sched_param(REALTIME_PRIORITY))
    except ProcessLookupError:
        return None  # gone already: its run will say why
    except OSError as e:
        return e.strerror
    return None


class RunNames:
    """The names of what the real run of process `pid` makes: its two namespaces, its two TUN
    devices (at most 15 characters: IFNAMSIZ), the prefix of its work folder; its processes
    carry `SLOWSTART_PARENT=<pid>` in their environment."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.ns_snd, self.ns_rcv = f"ss-snd-{pid}", f"ss-rcv-{pid}"
        self.tun_snd, self.tun_rcv = f"sst{pid}s", f"sst{pid}r"
        self.workdir_prefix = f"slowstart-real-{pid}-"

    # A namespace or work folder of some run, and that run's pid: a path's two ends, or a real
    # swarm's hub and peers (swarm.py).
    NAMESPACE = re.compile(r"ss-(?:snd|rcv|hub|p\d+)-(\d+)$")
    WORKDIR = re.compile(r"slowstart-real-(\d+)-")


def _kill_ns(ns: str) -> None:
    """Delete namespace `ns` with what is in it: its processes, then its TCP sockets. A socket
    its process left (an orphan still sending its FIN, or data, to a peer whose link is gone)
    would otherwise retransmit for minutes (tcp_orphan_retries) and hold the namespace, and
    its congestion control with it: a BPF controller's struct_ops map (docs/bpf-real.md).
    `ss -K` aborts them (SOCK_DESTROY; where the kernel lacks it they stay, as before)."""
    pids = _ip("netns", "pids", ns, check=False).stdout.split()
    for p in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(p), signal.SIGKILL)
    if shutil.which("ss"):
        subprocess.run(
            ["ip", "netns", "exec", ns, "ss", "-K", "-t", "-a"],
            check=False,
            capture_output=True,
        )
    _ip("netns", "del", ns, check=False)


def cleanup_stale() -> list[str]:
    """Delete `ss-snd-<pid>`/`ss-rcv-<pid>` (and a swarm's `ss-hub-<pid>`, `ss-p<i>-<pid>`)
    namespaces (with any process left in them) and
    `slowstart-real-<pid>-*` work folders whose creating process is gone. Every real run
    starts with this, so a killed run's remains go with the next run."""
    removed = []
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        ns = line.split()[0] if line.split() else ""
        m = RunNames.NAMESPACE.match(ns)
        if m and not _alive(int(m.group(1))):
            _kill_ns(ns)
            removed.append(ns)
    for d in Path(tempfile.gettempdir()).glob("slowstart-real-*-*"):
        m = RunNames.WORKDIR.match(d.name)
        if m and d.is_dir() and not _alive(int(m.group(1))):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(str(d))
    return removed


def check_available(config: dict[str, Any]) -> None:
    """RealUnavailable if this machine cannot run it, ScenarioError if the config has no one
    bottleneck to emulate."""
    reason = unavailable_reason()
    if reason:
        raise RealUnavailable(reason)
    bottleneck(config)


def bottleneck(config: dict[str, Any]) -> dict[str, Any]:
    """The one emulated link; a real run takes `[path]` scenarios only, and cross sources
    that cross it (`cross_directions`)."""
    links = {link["name"]: link for link in config["links"]}
    if set(links) != {"access", "bottleneck"}:
        raise ScenarioError("real: only [path] scenarios (one bottleneck) can run for real")
    cross_directions(config)
    return links["bottleneck"]


# The emulated link is the [path]'s bottleneck, router -> receiver (the core's loader,
# crates/slowstart-config/src/scenario/links.rs `expand_path`): its forward direction leaves
# the sender's side, where the access link (not emulated) joins sender and router.
SENDER_SIDE, RECEIVER_SIDE = ("sender", "router"), ("receiver",)


def cross_directions(config: dict[str, Any]) -> list[str]:
    """Per `[[cross]]` source, the direction of the emulated link it crosses: "forward" from
    the sender's side to the receiver, "reverse" back. ValueError naming `cross.N.src` or
    `cross.N.dst` for a source that does not cross it."""
    ends = defaults("cross")
    directions = []
    for i, c in enumerate(config.get("cross") or []):
        src, dst = c.get("src", ends["src"]), c.get("dst", ends["dst"])
        if src in SENDER_SIDE and dst in RECEIVER_SIDE:
            directions.append("forward")
        elif src in RECEIVER_SIDE and dst in SENDER_SIDE:
            directions.append("reverse")
        else:
            field = "dst" if src in SENDER_SIDE + RECEIVER_SIDE else "src"
            raise ScenarioError(
                f"cross.{i}.{field}: a real run emulates only the bottleneck (router to "
                "receiver), so a source must cross it: from sender or router to receiver, or "
                f"from receiver to sender or router; got {src} to {dst}"
            )
    return directions


def flow_ports(config: dict[str, Any]) -> list[int]:
    """Each flow's port: its program's `port`, else PORT + its index. ValueError naming
    `flow.N.program.port` when two flows would share one."""
    ports: list[int] = []
    for i, flow in enumerate(config["flows"]):
        port = (flow.get("program") or {}).get("port") or PORT + i
        if port in ports:
            raise ScenarioError(
                f"flow.{i}.program.port: {port} is flow {ports.index(port)}'s port too; "
                "the emulator tells flows apart by their ports"
            )
        ports.append(port)
    return ports


class Session:
    """Namespaces, emulator and endpoints of one real run; `close()` undoes everything and
    returns the emulator's statistics."""

    def __init__(
        self, config: dict[str, Any], workdir: Path, mss: int, pcap: str | None = None
    ) -> None:
        self.pcap = pcap  # folder for the emulator's captures (`--pcap`), if any
        names = RunNames(os.getpid())
        self.pid = names.pid
        self.ns_snd, self.ns_rcv = names.ns_snd, names.ns_rcv
        self.tun_snd, self.tun_rcv = names.tun_snd, names.tun_rcv
        self.workdir = workdir
        self.procs: list[subprocess.Popen[str]] = []
        self.emu: subprocess.Popen[str] | None = None
        self.emu_log = workdir / "emu.csv"
        self.flows = config["flows"]
        self.stats: dict[str, Any] = {}
        self.warned_priority = False
        link = bottleneck(config)
        cross = config.get("cross") or []
        emu_cfg = {
            "forward": link["forward"],
            "reverse": link["reverse"],
            "seed": config.get("seed", 0),
            "mss": mss,
            # Flow i listens on its port, so the emulator numbers flows as the scenario does.
            "ports": flow_ports(config),
            "cross": [
                {"dir": d, "source": c}
                for d, c in zip(cross_directions(config), cross, strict=True)
            ],
            "duration_ns": config["duration_ns"],
        }
        (workdir / "emu.json").write_text(json.dumps(emu_cfg), encoding="utf-8")

    def open(self) -> None:
        self.emu = spawn_emulator(
            emulator_binary(),
            self.workdir / "emu.json",
            self.tun_snd,
            self.tun_rcv,
            self.emu_log,
            self.pcap,
        )
        self.procs.append(self.emu)
        self._keep_time(self.emu)
        if not emulator_ready(self.emu):
            raise RealRunError("slowstart-emu did not start")
        initcwnd, initrwnd = self.flows[0]["initcwnd"], self.flows[0]["initrwnd"]
        cc = LINUX_CC.get(self.flows[0]["cc"]["name"], "cubic")
        # One algorithm for every flow goes on the routes too, where a program's TCP (curl,
        # iperf3) takes it: the sysctl alone may be refused (route_cc). Flows of several
        # algorithms each set their own on the socket (TCP_CONGESTION), which a route would
        # override.
        same = {LINUX_CC.get(f["cc"]["name"], "cubic") for f in self.flows} == {cc}
        # A BPF controller (real/bpf.py) is set on its flows' sockets only: a route's would
        # override it, and a namespace's default keeps it referenced (docs/bpf-real.md).
        bpf = any((f["cc"].get("guest") or {}).get("kind") == "bpf" for f in self.flows)
        on_route = route_cc(cc) if same and not bpf else []
        for ns, tun, me, peer, route in (
            (self.ns_snd, self.tun_snd, SND_ADDR, RCV_ADDR, ["initcwnd", str(initcwnd)]),
            (self.ns_rcv, self.tun_rcv, RCV_ADDR, SND_ADDR, ["initrwnd", str(initrwnd)]),
        ):
            _ip("netns", "add", ns)
            _ip("link", "set", tun, "netns", ns)
            sysctls = endpoint_sysctls(tun, cc)
            if self.flows[0].get("ecn", False):
                # Both ends ask for ECN (RFC 3168 §6.1.1): web clients open the connections.
                sysctls["net.ipv4.tcp_ecn"] = "1"
            sysctl(ns, sysctls)
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "link", "set", tun, "mtu", "1500", "txqueuelen", "10000", "up")
            _ip("-n", ns, "addr", "add", me, "peer", peer, "dev", tun)
            _ip("-n", ns, "route", "replace", peer, "dev", tun, *route, *on_route)

    def time_zero(self) -> int:
        """The run's time 0 (CLOCK_MONOTONIC ns), START_LEAD_NS from now: the flows start
        from it, and the emulator's cross sources, which it is told here."""
        t0 = time.monotonic_ns() + START_LEAD_NS
        assert self.emu is not None and self.emu.stdin is not None
        self.emu.stdin.write(f"start {t0}\n")
        self.emu.stdin.flush()
        return t0

    def process(self, ns: str, argv: list[str], stderr: bool = True) -> subprocess.Popen[str]:
        """A program in namespace `ns` that dies with this process ($SLOWSTART_PARENT); its
        stdout (and, with `stderr`, its stderr) piped."""
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if stderr else None,
            text=True,
            env=_child_env(),
        )
        self.procs.append(p)
        self._keep_time(p)
        return p

    def _keep_time(self, p: subprocess.Popen[str]) -> None:
        why = _keep_time(p)
        if why and not self.warned_priority:
            self.warned_priority = True
            print(
                f"warning: no real-time priority for the emulator and endpoints ({why}): on a "
                "busy machine the emulated link and the endpoints may be late",
                file=sys.stderr,
            )

    def check_emulator(self) -> None:
        """RealRunError naming slowstart-emu if it has ended: the link is gone, so no flow can
        finish (its devices went with it), and waiting for one would only end at the run's
        timeout."""
        if self.emu is None or self.emu.poll() is None:
            return
        status = self.emu.returncode
        how = f"killed by {signal.Signals(-status).name}" if status < 0 else f"status {status}"
        raise RealRunError(f"slowstart-emu (pid {self.emu.pid}) ended mid-run ({how})")

    def wait(self, p: subprocess.Popen[str], deadline: float) -> tuple[str, str | None]:
        """`p`'s stdout and stderr once it ends, watching the emulator meanwhile
        (`check_emulator`); subprocess.TimeoutExpired at `deadline` (time.monotonic())."""
        while True:
            self.check_emulator()
            left = deadline - time.monotonic()
            try:
                return p.communicate(timeout=max(0.01, min(0.2, left)))
            except subprocess.TimeoutExpired:
                if left <= 0.2:
                    raise

    def tx_dropped(self) -> dict[str, int | None]:
        """Packets each TUN device dropped on its way to the emulator (its queue full): they
        would be losses the emulated link never saw, so they must stay 0."""
        return {
            "sender": tun_tx_dropped(self.ns_snd, self.tun_snd),
            "receiver": tun_tx_dropped(self.ns_rcv, self.tun_rcv),
        }

    def close(self) -> dict[str, Any]:
        """Stop every process, delete the namespaces, return the emulator's statistics. A
        signal meanwhile waits until it is done (`workdir`)."""
        _SIGNALS["closing"] += 1
        try:
            return self._close()
        finally:
            _SIGNALS["closing"] -= 1

    def _close(self) -> dict[str, Any]:
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


_ACTIVE: list[Session] = []
# SIGTERM and SIGINT during a real run end it by unwinding (SystemExit), so that every `finally`
# closes what it opened; a signal that comes while a testbed closes waits until it is closed.
_SIGNALS: dict[str, Any] = {"closing": 0, "pending": None}


def _close_all() -> None:
    while _ACTIVE:
        _ACTIVE.pop().close()


def _on_signal(signum: int, frame: object) -> None:
    if _SIGNALS["closing"]:
        _SIGNALS["pending"] = signum
        return
    raise SystemExit(128 + signum)


atexit.register(_close_all)


@contextlib.contextmanager
def workdir() -> Iterator[Path]:
    """A run's work folder, `slowstart-real-<pid>-*` (a killed run's is removed by the next).
    From before it is made until it is removed, SIGTERM and SIGINT end the run with status 128
    + the signal, once its testbed is closed and the folder removed."""
    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    _SIGNALS["pending"] = None
    for s in old:
        signal.signal(s, _on_signal)
    try:
        with tempfile.TemporaryDirectory(prefix=RunNames(os.getpid()).workdir_prefix) as tmp:
            yield Path(tmp)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        pending, _SIGNALS["pending"] = _SIGNALS["pending"], None
        if pending is not None:  # it ends the run, whatever else was going on
            raise SystemExit(128 + pending)


@contextlib.contextmanager
def testbed(
    config: dict[str, Any], work: Path, mss: int, pcap: str | None = None
) -> Iterator[Session]:
    """The open testbed of a `[path]` config in `work` (from `workdir`, which makes SIGTERM and
    SIGINT end the run): namespaces, TUN devices and the emulator, closed on leaving. The
    emulator's statistics are then in `session.stats`; its log stays in `work` until that
    goes. Remains of killed runs go first (`cleanup_stale`). With `pcap`, the emulator writes
    a capture of each direction of the link there."""
    removed = cleanup_stale()
    if removed:  # a killed run's remains: said, as they are someone's (never a live run's)
        print(f"note: removed what dead runs left: {', '.join(removed)}", file=sys.stderr)
    session = Session(config, work, mss, pcap)
    _ACTIVE.append(session)
    try:
        session.open()
        yield session
    finally:
        # Closed before it leaves _ACTIVE: if a signal cuts in first, the exit closes it.
        session.stats = session.close()
        _ACTIVE.remove(session)
