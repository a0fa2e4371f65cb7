"""`slowstart real` and `slowstart compare`: Linux TCP (or the simulator's own transport over
UDP, `--stack udp`) through the emulated link.

The transfers need root, /dev/net/tun and iproute2 (network namespaces); elsewhere they are
skipped with the reason `slowstart.real.testbed.unavailable_reason()` gives.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import NETWORK, ROOT, built, cli
from slowstart.cli import check_real_cc, format_compare, format_compare_both
from slowstart.real import compare, stacks, testbed
from slowstart.real import kernel as real_kernel
from slowstart.real import summary as real_summary

pytestmark = NETWORK

REASON = testbed.unavailable_reason()
needs_root = pytest.mark.skipif(REASON is not None, reason=f"skipped: {REASON}")

SMALL = """
duration = "20s"
[path]
rate = "20Mbps"
rtt = "50ms"
buffer = "1bdp"
[[flow]]
cc = "reno"
size = "{size}"
"""


def processes(pid: int) -> list[str]:
    """The processes real run `pid` started that are still running (emulator, endpoints): they
    carry its pid in their environment (testbed.PARENT_ENV)."""
    mark = f"{testbed.PARENT_ENV}={pid}".encode()
    found = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and mark in (p / "environ").read_bytes().split(b"\0"):
                cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                found.append(f"process {p.name}: {cmd.strip()}")
        except OSError:  # gone meanwhile
            continue
    return found


def leftovers(pid: int) -> list[str]:
    """What real run `pid` (the process that ran it) made and left: its namespaces, TUN
    devices, work folders and processes (testbed.RunNames). Only its own: other runs, other
    test suites and users' `slowstart real` may share the machine."""
    names = testbed.RunNames(pid)
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    found = [n for n in (names.ns_snd, names.ns_rcv) if n in netns.split()]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    devices = {w.rstrip(":").split("@")[0] for w in links.split()}
    found += [n for n in (names.tun_snd, names.tun_rcv) if n in devices]
    found += [d.name for d in Path(tempfile.gettempdir()).glob(names.workdir_prefix + "*")]
    return found + processes(pid)


def test_refuses_clearly_when_unavailable(monkeypatch, capsys):
    from slowstart.cli import main

    monkeypatch.setattr(testbed, "unavailable_reason", lambda: "real runs need root (test)")
    for cmd in ("real", "compare"):
        assert main([cmd, str(ROOT / "scenarios" / "real-20mbps.toml")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == ["error: real runs need root (test)"]


def test_flows_it_cannot_run_are_named():
    from slowstart.loading.scenario import load

    base = {"duration": "5s", "path": {"rate": "10Mbps", "rtt": "50ms"}}
    ok = load({**base, "flow": [{"size": "1MB"}, {"app": {"kind": "web", "response": "17kB"}}]})
    real_kernel.check_flows(ok)
    for flows, message in (
        ([{"app": {"kind": "bittorrent"}}], "app.0.kind: real runs accept bulk or web"),
        ([{}], "flow.0.size: a real bulk flow needs a size"),
        ([{"size": "1MB"}, {"size": "1MB", "initcwnd": 20}], "flow.1.initcwnd: real flows share"),
    ):
        with pytest.raises(ValueError, match=message):
            real_kernel.check_flows(load({**base, "flow": flows}))


def test_kernel_stack_names_the_algorithms_it_runs():
    from argparse import Namespace

    assert check_real_cc(Namespace(stack="kernel", cc="cubic")) is None
    assert check_real_cc(Namespace(stack="udp", cc="lss:max_ssthresh=100")) is None
    assert check_real_cc(Namespace(stack="both", cc="lss")) is not None  # Linux runs it too
    bad = check_real_cc(Namespace(stack="kernel", cc="lss"))
    assert bad == (
        "--cc: the kernel stack runs reno, cubic, bbr, bbr1 or PATH.bpf.o, got 'lss' "
        "(--stack udp runs every algorithm)"
    )


def test_real_rows_use_the_simulators_names():
    """A real run's summary rows and traces carry the simulator's fields in its order (None
    where a real run measures nothing), its own after; a name the core lacks is refused."""
    import slowstart

    sim = slowstart.run("satellite", duration="1s")
    sim_flow, sim_link = sim.summary["flows"][0], sim.summary["links"][0]
    row = real_summary.in_schema("flow", {"id": 3, "retransmits": 7}, {"mss": 1448})
    assert [k for k in row if k in sim_flow] == list(sim_flow)
    assert list(row)[-2:] == ["ecn_reductions", "mss"]  # the core's last, one written if ECN
    assert (row["id"], row["retransmits"], row["loss_events"]) == (3, 7, None)
    # The emulator reports each direction as the simulator's link row; the names are ours.
    emulated = {"name": "forward", "forwarded": 4, "mean_queue_delay_s": 2e-9, "marks": 1}
    rows = real_summary.link_rows(sim.config, {"forward": emulated})
    assert [[k for k in r if k in sim_link] for r in rows] == [list(sim_link)] * 2
    assert [r["name"] for r in rows] == ["bottleneck", "bottleneck:reverse"]
    assert (rows[0]["mean_queue_delay_s"], rows[0]["marks"], rows[1]["forwarded"]) == (
        2e-9,
        1,
        None,
    )
    with pytest.raises(RuntimeError, match="not in the simulator's flow summary: cwnd"):
        real_summary.in_schema("flow", {"cwnd": 1}, {})
    assert real_summary.schema()["flows"] == list(sim.flows.columns)
    assert real_summary.schema()["queues"] == list(sim.queues.columns)


def test_udp_stack_takes_bulk_flows_with_a_size_and_web_flows():
    import slowstart
    from slowstart.loading.scenario import load
    from slowstart.real import udp as real_udp

    base = {"duration": "5s", "path": {"rate": "10Mbps", "rtt": "50ms"}}
    web = {"app": {"kind": "web", "response": "17kB"}}
    real_udp._check_flows(load({**base, "flow": [{"size": "1MB", "cc": "ledbat"}, web]}))
    # ECN crosses the UDP stack: an ECN flow and the controllers that need ECN run.
    ecn = [{"size": "1MB", "ecn": True}, {"size": "1MB", "cc": "dctcp"}, {**web, "cc": "prague"}]
    real_udp._check_flows(load({**base, "flow": ecn}))
    for flows, message in (
        ([{"app": {"kind": "bittorrent"}}], "app.0.kind: the UDP stack runs bulk or web"),
        ([{}], "flow.0.size: a real bulk flow needs a size"),
    ):
        with pytest.raises(ValueError, match=message):
            real_udp._check_flows(load({**base, "flow": flows}))

    class Local(slowstart.Controller):
        def cwnd(self):
            return 10 * self.mss

    # A class given as an object reaches the UDP endpoint by reference (udp_endpoint.py).
    with pytest.raises(ValueError, match=r"^flow\.0\.cc: .*Local is defined in a function"):
        real_udp._check_flows(load({**base, "flow": [{"size": "1MB", "cc": Local}]}))
    sized = real_udp.udp_like(load({**base, "flow": [{"size": "1MB"}]}))
    # 1500-byte datagrams: 20 (IP) + 8 (UDP) + 48 (header) + 1424.
    assert sized["flows"][0]["mss"] + sized["flows"][0]["header_bytes"] == 1500


@pytest.fixture(scope="module")
def emu_built():
    yield from built("slowstart-emu")


@needs_root
def test_real_transfer_delivers_and_cleans_up(tmp_path, emu_built):
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="2MB"))
    out = tmp_path / "out"
    proc = cli("real", str(scenario), "--cc", "reno", "--json", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    f = s["flows"][0]
    assert f["bytes_delivered"] == 2_000_000
    # 2 MB at 20 Mbps is 0.8 s of serialisation, plus slow start's round trips.
    assert 0.8 < f["completion_s"] < 3.0
    # Every drop is repaired; now and then the kernel adds a spurious one, a tail loss probe
    # or an early timeout (RFC 8985 §7; seen once: 169 retransmits for 168 drops).
    drops = s["links"][0]["drops"]
    assert drops <= f["retransmits"] <= drops + 2
    # Every loss is the emulated link's: the TUN devices dropped nothing on the way to it.
    assert s["tun_tx_dropped"] == {"sender": 0, "receiver": 0}
    for name in ("summary.json", "flows.parquet", "queues.parquet", "cwnd.png"):
        assert (out / name).exists()
    import pandas as pd

    flows = pd.read_parquet(out / "flows.parquet")
    assert list(flows.columns)[:8] == real_summary.schema()["flows"]
    # The first flight is initcwnd full segments.
    assert flows["cwnd_bytes"].iloc[0] == 10 * real_summary.MSS
    assert leftovers(proc.pid) == []


@needs_root
def test_compare_writes_table_and_json(tmp_path, emu_built):
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="1MB"))
    proc = cli(
        "compare", str(scenario), "--cc", "reno", "--runs", "2", "--json", "--out", str(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    assert len(c["real"]) == 2
    assert set(c["diff"]) == set(compare.METRICS)
    # Reno through the emulated link finishes within 10% of the simulation.
    assert abs(c["diff"]["completion_s"]) < 0.10
    assert (tmp_path / "compare.png").exists()
    table = cli("compare", str(scenario), "--cc", "reno", "--runs", "1", "--out", str(tmp_path))
    assert table.returncode == 0, table.stderr
    assert "completion_s" in table.stdout and "diff" in table.stdout
    assert leftovers(proc.pid) == leftovers(table.pid) == []


@needs_root
@pytest.mark.parametrize("cc", ["reno", "cubic"])
def test_real_20mbps_acceptance(emu_built, cc):
    """Issue 5: scenarios/real-20mbps.toml (20 Mbps, 100 ms, 1 BDP, 10 MB), the median of 3 real
    runs within 10% of the simulated completion time; for Reno the slow-start rounds (cwnd per
    round trip until the first loss) agree."""
    from slowstart.loading.scenario import load
    from slowstart.paths import scenario_path

    c = compare.compare(load(scenario_path("real-20mbps"), cc=cc), runs=3)
    c.pop("_results")
    assert abs(c["diff"]["completion_s"]) < 0.10, c["metrics"]
    rounds = c["slow_start_rounds"]
    if cc == "reno":
        assert rounds["sim"][:5] == [10, 20, 40, 80, 160], rounds
        # Every run shares the first four rounds; a real run's fifth round now and then ends
        # a little early (seen once: 150), so the full list must match in most runs.
        assert all(r[:4] == rounds["sim"][:4] for r in rounds["real"]), rounds
        assert sum(r == rounds["sim"] for r in rounds["real"]) >= 2, rounds
    assert all(t == 0 for r in c["real"] for t in r["tun_tx_dropped"].values())
    assert leftovers(os.getpid()) == []


@needs_root
@pytest.mark.parametrize("window", [10, 20])
def test_web_page_first_to_last_byte_agrees(tmp_path, emu_built, window):
    """The initcwnd seed's page (scenarios/real-web.toml: 17 kB x 3 over 10 Mbps / 50 ms) with
    initcwnd = initrwnd = 10 and 20: the median of 3 real runs and the simulated first-to-last
    byte within 10% (one run alone once took 42% longer for a 13 ms page)."""
    sets = ["--set", f"flow.0.initcwnd={window}", "--set", f"flow.0.initrwnd={window}"]
    proc = cli(
        "compare",
        "real-web",
        "--cc",
        "cubic",
        "--runs",
        "3",
        "--json",
        "--out",
        str(tmp_path),
        *sets,
    )
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    for run in c["real"]:
        assert run["tun_tx_dropped"] == {"sender": 0, "receiver": 0}
        assert [o["bytes"] for o in run["apps"][0]["objects"]] == [17_000] * 3
    for k in range(3):
        assert abs(c["diff"][f"object{k}.first_to_last_s"]) < 0.10, c["diff"]
    # The routes took effect: with 20 segments the first page comes in one flight (12
    # segments, about 13 ms at 10 Mbps); with 10 the last two wait one round trip.
    first = sorted(r["apps"][0]["objects"][0]["first_to_last_s"] for r in c["real"])[1]
    assert first < 0.025 if window == 20 else first > 0.050
    assert leftovers(proc.pid) == []


TWO = """
duration = "20s"
[path]
rate = "20Mbps"
rtt = "50ms"
buffer = "1bdp"
drop = [{flow = 1, seq = 5}]
[[flow]]
cc = "reno"
size = "300kB"
[[flow]]
cc = "reno"
size = "200kB"
start = "0.1s"
"""


@needs_root
def test_two_flows_run_for_real(tmp_path, emu_built):
    """One sender/sink pair per [[flow]]; the emulator numbers flows as the scenario does (the
    scheduled drop hits flow 1 only), and flows.parquet has a series per flow."""
    scenario = tmp_path / "two.toml"
    scenario.write_text(TWO)
    out = tmp_path / "out"
    proc = cli("real", str(scenario), "--cc", "reno", "--json", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    assert [f["bytes_delivered"] for f in s["flows"]] == [300_000, 200_000]
    assert s["links"][0]["drops"] == 1
    assert s["flows"][0]["retransmits"] == 0 and s["flows"][1]["retransmits"] >= 1
    assert s["tun_tx_dropped"] == {"sender": 0, "receiver": 0}
    import pandas as pd

    flows = pd.read_parquet(out / "flows.parquet")
    assert sorted(flows["flow"].unique()) == [0, 1]
    # Flow 1 starts 0.1 s in: its series begins then, on the scenario's clock.
    assert 0.1 <= flows[flows["flow"] == 1]["t_s"].min() < 0.2
    assert flows.groupby("flow")["delivered_bytes"].max().tolist() == [300_000, 200_000]
    assert leftovers(proc.pid) == []


@needs_root
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killed_run_leaves_nothing(tmp_path, emu_built, sig):
    scenario = tmp_path / "big.toml"
    scenario.write_text(SMALL.format(size="200MB"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "slowstart", "real", str(scenario)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )

    # Mid-transfer (200 MB take 80 s): once its sender runs. The deadlines are for a loaded
    # 2-core machine, where starting the testbed's interpreters can take seconds each.
    def sending() -> bool:
        return any("real/_agents.py send " in x for x in processes(proc.pid))

    assert until(sending, 60), "the run never started sending"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    # Emulator, sender and sink die with their parent (PR_SET_PDEATHSIG), the TUN devices
    # with the emulator.
    assert until(lambda: not processes(proc.pid), 30), processes(proc.pid)
    if sig == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM, err  # its handler, not the default
    else:
        # The named namespaces and the work folder stay until the next run, which removes
        # them before it starts.
        left = leftovers(proc.pid)
        assert left and all(x.startswith(("ss-", "slowstart-real-")) for x in left), left
        small = tmp_path / "small.toml"
        small.write_text(SMALL.format(size="100kB"))
        nxt = cli("real", str(small), "--cc", "reno", "--json")
        assert nxt.returncode == 0, nxt.stderr
        assert leftovers(nxt.pid) == []
        # It says what it removed: the dead run's, by name.
        assert len(nxt.notes) == 1 and all(x in nxt.notes[0] for x in left), (nxt.notes, left)
    assert leftovers(proc.pid) == []


@pytest.fixture(scope="module")
def stacks_built(emu_built):
    yield from built("slowstart-udp", "slowstart-quinn")


# A stack's data sender, as `ps` shows it: the run is mid-transfer once it runs.
SENDERS = {
    "kernel": "real/_agents.py send ",
    "udp": "slowstart-udp send ",
    "quinn": "slowstart-quinn client ",
}


@pytest.mark.faults
@needs_root
@pytest.mark.parametrize("stack", list(SENDERS))
def test_the_emulator_killed_mid_run_is_one_line_and_nothing_is_left(tmp_path, stacks_built, stack):
    """SIGKILL slowstart-emu mid-transfer: the link and its devices are gone, so the run ends
    at once (not at its timeout, 90 s here) in one line naming the emulator, and its
    namespaces, TUN devices (their qdiscs with them), work folder and processes are gone. On
    each stack: every one waits for its endpoints through the testbed's watch."""
    scenario = tmp_path / "big.toml"
    scenario.write_text(SMALL.format(size="200MB").replace('"20s"', '"80s"'))
    proc = subprocess.Popen(
        [sys.executable, "-m", "slowstart", "real", str(scenario), "--stack", stack],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )

    def sending() -> bool:
        return any(SENDERS[stack] in x for x in processes(proc.pid))

    assert until(sending, 60), "the run never started sending"
    emu = [x for x in processes(proc.pid) if "slowstart-emu" in x]
    assert len(emu) == 1, emu
    emu_pid = int(emu[0].split()[1].rstrip(":"))
    os.kill(emu_pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=60)  # its timeout would be 90 s
    lines = err.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, err
    assert lines[0] == f"error: slowstart-emu (pid {emu_pid}) ended mid-run (killed by SIGKILL)"
    assert until(lambda: leftovers(proc.pid) == [], 30), leftovers(proc.pid)
    qdiscs = subprocess.run(["tc", "qdisc", "show"], capture_output=True, text=True).stdout
    assert f"sst{proc.pid}" not in qdiscs


@pytest.mark.faults
@needs_root
def test_two_real_runs_at_once_stay_apart_and_both_finish(tmp_path, emu_built):
    """Each names what it makes after its own pid, and neither removes the other's (the other
    is alive): both deliver every byte, and neither leaves anything."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="2MB"))
    cmd = [sys.executable, "-m", "slowstart", "real", str(scenario), "--json"]
    runs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
    time.sleep(0.5)  # the second starts while the first sets up or sends
    runs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for p in runs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert "note: removed" not in err, err
        assert json.loads(out)["flows"][0]["bytes_delivered"] == 2_000_000
    for p in runs:
        assert leftovers(p.pid) == []


@pytest.mark.faults
@needs_root
def test_runs_sigkilled_at_any_moment_leave_what_the_next_run_removes(tmp_path, emu_built):
    """SIGKILL `slowstart real` 0.2 to 3 s after it starts: while it loads, sets the testbed
    up, transfers or tears down. After each, the next run works and, with it, nothing of the
    killed run is left (its processes die with it; its namespaces and folder go with the next
    run, which names them)."""
    small = tmp_path / "small.toml"
    small.write_text(SMALL.format(size="1MB"))
    cmd = [sys.executable, "-m", "slowstart", "real", str(small), "--json"]
    for delay in (0.2, 0.5, 0.8, 1.1, 1.4, 1.7, 2.0, 2.5, 3.0):
        killed = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        killed.kill()
        killed.wait()
        assert until(lambda k=killed: not processes(k.pid), 30), processes(killed.pid)
        left = leftovers(killed.pid)
        nxt = cli("real", str(small), "--json")
        assert nxt.returncode == 0, (delay, nxt.stderr)
        assert leftovers(killed.pid) == [] and leftovers(nxt.pid) == [], delay
        assert all(x in "".join(nxt.notes) for x in left), (delay, left, nxt.notes)


def until(condition: Callable[[], bool], timeout_s: float) -> bool:
    """Whether `condition()` holds within `timeout_s` seconds (asked every 0.1 s)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


AQM = """
duration = "20s"
[path]
rate = "20Mbps"
rtt = "50ms"
buffer = "10bdp"
{queue}
ecn = {ecn}
[[flow]]
cc = "cubic"
size = "6MB"
ecn = {ecn}
"""


def standing_queue_s(out: Path, rate_bps: float) -> float:
    """The bottleneck's time-weighted mean queue, in seconds of its rate, over the second half
    of flow 0's transfer, from the emulator's own log (`--out`'s queues.parquet): the standing
    queue a discipline keeps once slow start's burst has passed."""
    import pandas as pd

    end = json.loads((out / "summary.json").read_text())["flows"][0]["completion_s"]
    q = pd.read_parquet(out / "queues.parquet")
    q = q[q["link"] == "bottleneck"]
    edges = [min(max(t, end / 2), end) for t in [*q["t_s"], end]]
    spans = [b - a for a, b in zip(edges, edges[1:], strict=False)]
    held = sum(b * w for b, w in zip(q["queue_bytes"], spans, strict=True))
    return held / sum(spans) * 8 / rate_bps


@needs_root
def test_real_runs_through_codel_with_and_without_ecn(tmp_path, emu_built):
    """The emulator's link is the simulator's: CoDel (RFC 8289) holds Linux CUBIC's standing
    queue near its 5 ms target where a 10-BDP drop-tail buffer lets it grow; with ECN on both
    ends (net.ipv4.tcp_ecn = 1) it marks CE instead of dropping (RFC 3168), so nothing is
    retransmitted. Measured 11-24 on a quiet machine: CoDel + ECN 2 marks, 0 drops, 3.0 ms mean
    wait; CoDel 2 drops, 2 retransmits, 3.2 ms; drop-tail 0 drops, 75 ms, 227 packets at most.

    The standing queue is judged over the transfer's second half, not the whole run's mean
    wait: that mean is mostly slow start's burst, whose size depends on the round in which
    CoDel first signals, and host timing moves that round. Beside two processes writing to disk
    with fsync (as the other pytest worker's stores and Parquet files do; a CPU-bound process
    does not) the first signal came one or two rounds late in 5 of 10 CoDel runs (6-21 signals
    against 2) and the whole-run mean reached 22-25 ms in 3, failing `< 15 ms` (issue #43);
    beside the suite's store, sweep and reproduce tests, late in 1 of 8. The standing queue
    stayed 2.0-3.3 ms, drop-tail's 155 ms (12-06)."""

    def run(name: str, queue: str, ecn: bool) -> tuple[dict, dict, float]:
        scenario = tmp_path / f"{name}.toml"
        scenario.write_text(AQM.format(queue=queue, ecn=str(ecn).lower()))
        out = tmp_path / name
        proc = cli("real", str(scenario), "--json", "--out", str(out))
        assert proc.returncode == 0, proc.stderr
        s = json.loads(proc.stdout)
        assert s["flows"][0]["bytes_delivered"] == 6_000_000
        assert leftovers(proc.pid) == []
        return s["links"][0], s["flows"][0], standing_queue_s(out, 20e6)

    marked, marked_flow, marked_q = run("codel-ecn", 'queue = "codel"', True)
    dropped, dropped_flow, dropped_q = run("codel", 'queue = "codel"', False)
    deep, _, deep_q = run("droptail", "", False)
    assert marked["queue"] == dropped["queue"] == "codel" and deep["queue"] is None
    # ECN: congestion is signalled by marks alone.
    assert marked["marks"] > 0 and marked["drops"] == 0 and marked_flow["retransmits"] == 0
    # Without ECN, CoDel drops and Linux repairs each drop.
    assert dropped["marks"] is None and dropped["drops"] > 0
    assert dropped["drops"] <= dropped_flow["retransmits"] <= dropped["drops"] + 2
    # CoDel keeps the standing queue near its target; the deep drop-tail buffer does not. Not
    # the peak, nor the whole run's mean: CoDel lets a burst stand for one interval before it
    # acts (RFC 8289 §2, "good queue"), and slow start's burst is as large as host timing lets
    # it grow before the first signal (docstring).
    assert deep["mean_queue_delay_s"] > 0.030 and deep_q > 0.060
    for aqm_q in (marked_q, dropped_q):
        assert aqm_q < 0.010, (marked_q, dropped_q, deep_q)


def test_real_flows_agree_on_ecn():
    config = {
        "flows": [{"initcwnd": 10, "initrwnd": 10, "ecn": True}, {"initcwnd": 10, "initrwnd": 10}]
    }
    for f in config["flows"]:
        f.update({"cc": {"name": "cubic"}, "size_bytes": 1000})
    with pytest.raises(ValueError, match=r"flow\.1\.ecn: .*net\.ipv4\.tcp_ecn"):
        real_kernel.check_flows(config)


@pytest.fixture(scope="module")
def udp_built(emu_built):
    yield from built("slowstart-udp")


@needs_root
def test_udp_stack_runs_every_algorithm_on_real_20mbps(udp_built):
    """Issue 11: every algorithm of `slowstart list` (and cubic's slow_start variants) moves
    3 MB over the UDP stack through real-20mbps's emulated 20 Mbps / 100 ms path (12 BDPs: slow
    start, its overshoot and the recovery after it), every byte checked against the known
    pattern by the receiver (about a minute: ledbat, the slowest, 6 s). Those that need ECN
    (dctcp, prague) run with it, here on a drop-tail path that never marks, so their losses
    are repaired as any other's (their marks: test_udp_stack_carries_ecn_marks_end_to_end)."""
    from slowstart import _core
    from slowstart.loading.scenario import load
    from slowstart.paths import scenario_path
    from slowstart.real.udp import run_real_udp

    names = [a["name"] for a in json.loads(_core.algorithms())]
    for cc in [*names, "cubic:slow_start=hystart++", "cubic:slow_start=search"]:
        config = load(scenario_path("real-20mbps"), cc=cc, set=["flow.0.size=3MB"])
        s = run_real_udp(config).summary
        f = s["flows"][0]
        assert s["stack"] == "udp"
        assert f["bytes_delivered"] == 3_000_000, cc
        assert f["completion_s"] is not None, cc
        assert f["dropped_datagrams"]["receiver"]["bad_data"] == 0, cc
        assert s["tun_tx_dropped"] == {"sender": 0, "receiver": 0}, cc
    assert leftovers(os.getpid()) == []


BPF_DCTCP = ROOT / "examples" / "bpf" / "build" / "dctcp.bpf.o"


@needs_root
@pytest.mark.parametrize(
    ("scenario", "cc", "size"),
    [
        ("real-dctcp", "dctcp", 6_000_000),
        ("prague-l4s", "prague", 4_000_000),
        pytest.param(
            "real-dctcp",
            str(BPF_DCTCP),
            6_000_000,
            marks=pytest.mark.skipif(
                not BPF_DCTCP.exists(), reason="examples/bpf not built (make bpf)"
            ),
        ),
    ],
)
def test_udp_stack_carries_ecn_marks_end_to_end(udp_built, scenario, cc, size):
    """Issue 42: over the UDP stack a controller that needs ECN gets it. Each data datagram
    leaves its socket ECT (DCTCP ECT(0), Prague ECT(1): an IP_TOS control message), the
    emulator's queue marks CE in its IP header (real-dctcp: RED as DCTCP's step at 30 packets;
    prague-l4s: DualPI2, whose L queue takes ECT(1) and marks it after 5 ms), the receiver's
    socket reads the mark (IP_RECVTOS) and echoes it, and the sender reduces: the emulator's
    own counters show marks and no drop, the sender ECN reductions and no retransmission.
    The BPF DCTCP (examples/bpf) is told of ECN as the built-in is. Measured 12-06, against
    the simulation sized as the UDP stack sends: DCTCP 189 marks, 3 reductions, 2.72 s
    (simulated 195, 3, 2.72 s); the BPF DCTCP the same (simulated 194, 3, 2.72 s); Prague 365
    marks, 34 reductions, 3.68 s (simulated 348, 32, 3.53 s); about 7 s a run."""
    proc = cli("real", scenario, "--stack", "udp", "--cc", cc, "--json")
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    f, forward, reverse = s["flows"][0], s["links"][0], s["links"][1]
    assert f["cc"].startswith(Path(cc).name) and f["bytes_delivered"] == size, f
    assert s["stack"] == "udp"
    # Congestion was signalled by marks alone, and the sender answered them.
    assert forward["marks"] > 0 and forward["drops"] == 0, forward
    assert 0 < f["ecn_reductions"] <= forward["marks"], f
    assert f["retransmits"] == f["loss_events"] == 0, f
    assert reverse["drops"] == 0 and s["tun_tx_dropped"] == {"sender": 0, "receiver": 0}
    assert leftovers(proc.pid) == []


@needs_root
def test_udp_stack_runs_ones_own_webassembly_controller(udp_built):
    """A user's WebAssembly controller (the built-in Reno as a guest) runs in the UDP endpoints
    over real sockets, registered there from its file."""
    from slowstart.loading.scenario import load
    from slowstart.paths import scenario_path
    from slowstart.real.udp import run_real_udp

    wasm = ROOT / "target" / "wasm32-unknown-unknown" / "release" / "builtin_guest.wasm"
    config = load(scenario_path("real-20mbps"), cc=f"{wasm}:algorithm=reno")
    s = run_real_udp(config).summary
    f = s["flows"][0]
    assert f["cc"].startswith("builtin_guest.wasm@")
    assert f["bytes_delivered"] == 10_000_000 and f["completion_s"] is not None
    assert f["dropped_datagrams"]["receiver"]["bad_data"] == 0
    assert leftovers(os.getpid()) == []


@needs_root
def test_udp_stack_runs_ones_own_python_controller_as_the_builtin(tmp_path, udp_reno):
    """Issue 23: examples/python/reno.py (the built-in Reno restated in Python) runs in the UDP
    sender (`python -m slowstart.real.udp_endpoint`) over the emulated real-20mbps path, and
    `compare --stack udp` judges it as test_udp_compare_matches_the_simulation_for_reno judges
    the built-in: completion within 5% of the simulation (the fastest of 3), the slow-start rounds
    10 to 160 segments in the sender's trace in at least 2 runs of 3. Against the built-in's 3
    runs over the same path (the medians): it leaves slow start as the built-in does, at the
    first loss, set by the emulated buffer, with the same window (measured 11-27 at a load of
    15: 0.917-0.919 s and 951-953 kB either way; 2% here, about 13 segments), and has as many
    loss episodes. Medians, not one run of each: on a loaded machine a run now and then has
    one more episode (seen: 3 against 2) or takes 5.3% longer with 1420 retransmits against
    338-343."""
    reno = f"{ROOT}/examples/python/reno.py:Reno"
    proc = cli(
        "compare", "real-20mbps", "--stack", "udp", "--cc", reno, "--runs", "3", "--json",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    full = json.loads((tmp_path / "compare.json").read_text())
    assert abs(fastest_against_sim(full)) < 0.05, c["diff"]
    assert abs(c["diff"]["slow_start_exit_s"]) < 0.05, c["diff"]
    rounds = full["slow_start_rounds"]
    assert rounds["sim"] == [10, 20, 40, 80, 160]
    assert [r[:5] for r in rounds["real"]].count([10, 20, 40, 80, 160]) >= 2, rounds
    for run in c["real"]:
        f = run["flows"][0]
        assert f["cc"].startswith("reno.py:Reno@")
        assert f["bytes_delivered"] == 10_000_000
        assert f["dropped_datagrams"]["receiver"]["bad_data"] == 0
        # The Python process was up before the flow's start (real_udp warns past 5 ms).
        assert f["start_late_s"] < 0.005, f
        assert run["tun_tx_dropped"] == {"sender": 0, "receiver": 0}
    assert leftovers(proc.pid) == []

    def median(c: dict, key: str) -> float:
        return statistics.median(run["flows"][0][key] for run in c["real"])

    builtin = udp_reno[1]
    assert median(builtin, "loss_events") == median(c, "loss_events"), (builtin, c)
    for key in ("slow_start_exit_s", "cwnd_at_exit_bytes"):
        assert abs(median(c, key) / median(builtin, key) - 1) < 0.02, (key, builtin, c)


RAISING = """
import slowstart


class Raising(slowstart.Controller):
    \"\"\"Ten segments a round trip, until the 100th ACK.\"\"\"

    acks = 0

    def on_ack(self, ev):
        self.acks += 1
        if self.acks == 100:
            self.acks /= 0

    def on_congestion_event(self, ev):
        pass

    def on_rto(self, now, bytes_in_flight):
        pass

    def cwnd(self):
        return 10 * self.mss
"""


@needs_root
def test_a_python_controller_that_raises_over_udp_is_one_line(tmp_path, udp_built):
    """A Python controller that raises in the UDP sender ends the real run as in the
    simulator: one line naming the controller, the method, the time since the flow's start and
    the exception's last frame, status 2, and nothing left behind (namespaces, devices, the
    endpoints, the emulator)."""
    path = tmp_path / "raising.py"
    path.write_text(RAISING)
    raising_line = RAISING.splitlines().index("            self.acks /= 0") + 1
    proc = cli("real", "real-20mbps", "--stack", "udp", "--cc", f"{path}:Raising")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    line = proc.stderr.strip()
    assert line.startswith("error: cc raising.py:Raising@"), line
    # The time counts from the flow's start (the sender's clock is the host's: a line with it
    # would say hours). Ten segments a round trip of 100 ms, an ACK for every second: the 100th
    # ACK comes in the 20th round trip after the handshake's (measured 2.14 s); 1 s (an ACK per
    # segment) to 5 s, for a loaded machine.
    at = float(line.split(": on_ack at ")[1].split(" s:")[0])
    assert 1.0 < at < 5.0, line
    said = f"raised ZeroDivisionError: division by zero (raising.py:{raising_line} in on_ack)"
    assert line.endswith(said), line
    assert leftovers(proc.pid) == []


@needs_root
def test_an_endpoint_that_will_not_start_is_one_line_and_exit_2(tmp_path, emu_built, monkeypatch):
    """An endpoint program that will not start (`false` in place of slowstart-udp; the
    receiver starts first) is one line naming the flow and the side, status 2 like any run
    that cannot happen, not an internal error; nothing is left behind."""
    monkeypatch.setenv(testbed.binary_variable("slowstart-udp"), shutil.which("false"))
    proc = cli("real", "real-20mbps", "--stack", "udp")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr == "error: flow 0: the UDP receiver did not start: status 1\n"
    assert leftovers(proc.pid) == []


def fastest_against_sim(full: dict, key: str = "completion_s") -> float:
    """The simulation's `key` against the fastest of the real runs, relative, from what a
    `compare --out` wrote to compare.json. A busy machine only adds time to a real run (a
    sender or emulator scheduled late), so the fastest run is the one the load touched least
    (seen: a median of 3 runs 6.7% longer than the simulation, with 4.7 times its
    retransmits, while a second suite ran beside it)."""
    metrics = full["metrics"]
    return metrics["sim"][key] / metrics["real_range"][key][0] - 1


@pytest.fixture(scope="module")
def udp_reno(udp_built, tmp_path_factory):
    """`compare real-20mbps --stack udp --cc reno --runs 3`, once for the tests that judge the
    built-in Reno over the UDP stack and hold a user's Reno to it: (the process, its JSON,
    its folder)."""
    out = tmp_path_factory.mktemp("udp-reno")
    proc = cli(
        "compare", "real-20mbps", "--stack", "udp", "--cc", "reno", "--runs", "3", "--json",
        "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads(proc.stdout), out


@needs_root
def test_udp_compare_matches_the_simulation_for_reno(udp_reno):
    """real-20mbps (10 MB, 20 Mbps, 50 ms): the UDP stack runs the simulator's own Reno, so
    completion agrees (the fastest of 3 runs, fastest_against_sim) and the slow-start rounds
    are 10, 20, 40, 80, 160 segments. Measured within 0.2% (README); 5% here, since on this
    shared 2-core VM with other jobs at a load of 8 one run alone once took 39% longer."""
    proc, c, out = udp_reno
    full = json.loads((out / "compare.json").read_text())
    assert abs(fastest_against_sim(full)) < 0.05, c["diff"]
    assert abs(c["diff"]["slow_start_exit_s"]) < 0.05, c["diff"]
    assert full["stack"] == "udp"
    assert full["slow_start_rounds"]["sim"] == [10, 20, 40, 80, 160]
    # On a loaded machine a late ACK can leave a gap in the last round, where ACKs no longer
    # come in trains, and show one more value after these (seen once: 652); most runs agree.
    real_rounds = [r[:5] for r in full["slow_start_rounds"]["real"]]
    assert real_rounds.count([10, 20, 40, 80, 160]) >= 2, real_rounds
    assert leftovers(proc.pid) == []


@needs_root
def test_udp_web_page_agrees_with_the_simulation(tmp_path, udp_built):
    """real-web (17 kB x 3, 10 Mbps, 50 ms) over the UDP stack: `compare --stack udp` puts
    each object's times beside the simulation's (sized as the UDP stack sends); measured
    within 0.7% (README), 10% here for a loaded machine. Without keep-alive each object opens
    a connection of its own: two round trips to the first byte every time, as simulated, and
    the server's stall counts are the simulation's."""
    compared = cli("compare", "real-web", "--stack", "udp", "--runs", "1", "--json")
    assert compared.returncode == 0, compared.stderr
    c = json.loads(compared.stdout)
    run = c["real"][0]
    assert run["tun_tx_dropped"] == {"sender": 0, "receiver": 0}
    assert [o["bytes"] for o in run["apps"][0]["objects"]] == [17_000] * 3
    for k in range(3):
        for m in ("ttfb_s", "first_to_last_s", "total_s"):
            assert abs(c["diff"][f"object{k}.{m}"]) < 0.10, c["diff"]
    sets = ["--set", "flow.0.app.keep_alive=false", "--set", "flow.0.app.objects=3"]
    proc = cli("real", "real-web", "--stack", "udp", "--json", *sets)
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    from slowstart.loading.scenario import load
    from slowstart.paths import scenario_path
    from slowstart.real.udp import udp_like
    from slowstart.running.api import run_config

    sim = run_config(udp_like(load(scenario_path("real-web"), set=sets[1::2]))).summary
    real_objects, sim_objects = s["apps"][0]["objects"], sim["apps"][0]["objects"]
    assert len(real_objects) == 3
    for got, want in zip(real_objects, sim_objects, strict=True):
        assert abs(got["ttfb_s"] - want["ttfb_s"]) / want["ttfb_s"] < 0.10, (got, want)
        assert got["stalls"] == want["stalls"], (got, want)
    f = s["flows"][0]
    assert f["bytes_delivered"] == 51_000
    assert f["dropped_datagrams"]["receiver"]["bad_data"] == 0
    assert leftovers(compared.pid) == leftovers(proc.pid) == []


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=1500), st.sampled_from([2, 3, 4, 9]), st.integers(0, 255))
def test_hostile_udp_mangles_whatever_it_sees(datagram, kind, blocks):
    """tests/hostile_udp.py sees its own forgeries come back across the link (truncated to
    nothing, random bytes that claim to be data with 229 SACK blocks, ...) and mangles them
    again: never an exception (one such ended the helper in a loaded run)."""
    import random
    from collections import Counter

    from hostile_udp import mangle

    if len(datagram) > 5:
        datagram = datagram[:3] + bytes([kind]) + datagram[4:5] + bytes([blocks]) + datagram[6:]
    history = [datagram] * 200
    for seed in range(200):  # every branch of mangle is taken by some of them
        for extra in mangle(random.Random(seed), datagram, history, Counter()):
            assert len(extra) <= 1500 - 28


HOSTILE = """
duration = "60s"
[path]
rate = "20Mbps"
rtt = "50ms"
buffer = "1bdp"
[[flow]]
cc = "reno"
size = "2MB"
start = "3s"
[[flow]]
cc = "cubic"
start = "3s"
app = { kind = "web", request = "400B", response = "30kB", objects = 6, keep_alive = false }
"""


@needs_root
def test_udp_endpoints_survive_hostile_datagrams_through_the_namespaces(tmp_path, udp_built):
    """A bulk and a web flow over the UDP stack through the emulator while tests/hostile_udp.py
    adds truncated, oversized, duplicated, reordered, replayed and forged datagrams from each
    endpoint's peer address, both ways: every byte delivered is checked against the pattern,
    both transfers complete, what was forged is dropped and counted, no endpoint fails."""
    scenario = tmp_path / "hostile.toml"
    scenario.write_text(HOSTILE)
    run = subprocess.Popen(
        [sys.executable, "-m", "slowstart", "real", str(scenario), "--stack", "udp", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # The helper starts at once and waits for the run's namespaces itself; the flows start 3 s
    # after them (a transfer takes about 1.5 s), so a helper slow to start on a loaded machine
    # still sees them: it once attached after both had ended and sent nothing.
    counts = tmp_path / "hostile.json"
    helper = Path(__file__).with_name("hostile_udp.py")
    ports = f"{testbed.PORT},{testbed.PORT + 1}"
    hostile = subprocess.Popen(
        [sys.executable, str(helper), str(run.pid), ports, str(counts), "7"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert hostile.stdout is not None
    # Once it is armed, a SIGTERM makes it write its counts, however early.
    assert hostile.stdout.readline().strip() == "armed"
    try:
        out, err = run.communicate(timeout=90)
    finally:
        hostile.send_signal(signal.SIGTERM)
        hostile.communicate(timeout=10)
    assert run.returncode == 0, err
    assert hostile.returncode == 0 and counts.exists(), "tests/hostile_udp.py failed"
    sent = json.loads(counts.read_text())
    for kind in ("truncated", "oversized", "duplicated", "reordered", "replayed"):
        assert sent.get(kind, 0) > 0, sent
    for kind in ("random bytes", "wrong version", "payload not the pattern", "ACK of data never"):
        assert sum(n for k, n in sent.items() if kind in k) > 0, sent
    s = json.loads(out)
    bulk, web = s["flows"]
    assert bulk["bytes_delivered"] == 2_000_000
    assert [o["bytes"] for o in s["apps"][0]["objects"]] == [30_000] * 6
    dropped = [f["dropped_datagrams"] for f in s["flows"]]
    total = {
        side: {k: sum(d[side][k] for d in dropped) for k in dropped[0][side]}
        for side in ("sender", "receiver")
    }
    assert total["receiver"]["unparsed"] > 0 and total["receiver"]["bad_data"] > 0, total
    assert total["sender"]["unparsed"] > 0 and total["sender"]["bad_ack"] > 0, total
    assert leftovers(run.pid) == []


@needs_root
def test_reproduce_atou_over_the_udp_stack(tmp_path, udp_built):
    """`reproduce atou` with one UDP run per variant: both reach the 1000-segment window and
    the real stretch is within 15% of the simulated one (measured: README, Reproductions); the
    run leaves nothing behind."""
    from slowstart.reproductions.atou import run_atou
    from slowstart.reproductions.reproduce import EXPERIMENTS

    rows, _ = run_atou(EXPERIMENTS["atou"], tmp_path, runs=1)
    by = {r.label.split(" (median")[0]: r for r in rows}
    sim, udp = by["stretch, simulated"].ours, by["stretch, UDP stack"].ours
    assert sim is not None and udp is not None, rows
    assert abs(udp - sim) / sim < 0.15, (sim, udp)
    assert leftovers(os.getpid()) == []


def test_compare_both_is_one_table():
    def side(sim: float, real_: float) -> dict:
        return {
            "metrics": {"sim": {"completion_s": sim}, "real_median": {"completion_s": real_}},
            "diff": {"completion_s": (sim - real_) / real_},
            "real": [{}, {}, {}],
            "slow_start_rounds": {"sim": [10, 20], "real": [[10, 20]] * 3},
        }

    text = format_compare_both({"kernel": side(4.6, 4.7), "udp": side(4.7, 4.8)})
    head, row = text.splitlines()[:2]
    assert head.split() == ["metric", "sim", "(MSS", "1448)", "Linux", "(3)", "diff"] + [
        "sim",
        "(MSS",
        "1424)",
        "UDP",
        "(3)",
        "diff",
    ]
    assert row == (
        "completion_s  4.600 s         4.700 s    -2.1%  4.700 s         4.800 s  -2.1%"
    ), row
    assert "slow-start rounds (cwnd, segments), UDP: sim [10, 20]; real [10, 20]" in text


@needs_root
def test_compare_both_stacks(tmp_path, udp_built):
    """`compare --stack both`: Linux and the UDP stack, each beside its own simulation, 1 MB
    on a 20 Mbps, 50 ms path; both deliver, both plots written, nothing left behind."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="1MB"))
    out = tmp_path / "out"
    proc = cli(
        "compare",
        str(scenario),
        "--stack",
        "both",
        "--cc",
        "reno",
        "--runs",
        "1",
        "--json",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    for stack in ("kernel", "udp"):
        assert c[stack]["real"][0]["flows"][0]["bytes_delivered"] == 1_000_000, stack
        assert abs(c[stack]["diff"]["completion_s"]) < 0.15, (stack, c[stack]["diff"])
        assert (out / f"compare-{stack}.png").exists()
    assert json.loads((out / "compare.json").read_text())["stack"] == "both"
    assert leftovers(proc.pid) == []


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        ("completion_s", 0.20741, "207.4 ms"),
        ("object0.ttfb_s", 0.0128, "12.80 ms"),
        ("completion_s", 4.6131, "4.613 s"),
        ("cwnd_at_exit_bytes", 965_800, "965.8 kB"),
        ("flow1.cwnd_at_exit_bytes", 12_345_678, "12.35 MB"),
        ("goodput_bps", 655_600.0, "655.6 kbps"),
        ("goodput_bps", 19_300_000.0, "19.30 Mbps"),
        ("retransmits", 327.0, "327"),
        ("loss_events", 1.5, "1.500"),
        ("retransmits", None, "-"),
        ("retransmits", 0, "0"),
    ],
)
def test_compared_values_in_plain_units(key, value, shown):
    assert compare.plain(key, value) == shown


def test_the_compare_table_has_no_exponents():
    metrics = {"goodput_bps": 965_800.0, "cwnd_at_exit_bytes": 1_234_567, "completion_s": 12.5}
    c = {
        "metrics": {
            "sim": metrics,
            "real_median": metrics,
            "real_range": {k: [v, v] for k, v in metrics.items()},
        },
        "diff": dict.fromkeys(metrics, 0.0),
        "real": [{}],
    }
    text = format_compare(c)
    assert "e+" not in text and "965.8 kbps" in text and "1.235 MB..1.235 MB" in text


def test_loss_events_of_a_real_run_count_entries_into_recovery():
    import pandas as pd

    states = ["open", "recovery", "recovery", "open", "loss", "open", "disorder", "recovery"]
    assert real_summary.recoveries(pd.Series(states)) == 2
    assert real_summary.recoveries(pd.Series(["open"] * 5)) == 0


def test_compare_simulates_a_web_page_as_long_as_the_real_run_lasted():
    """A simulated page ends with its last byte; the real run lasts until its last ACKs are
    back: the simulation goes on to the longest real run's end, the page unchanged."""
    import pandas as pd

    from slowstart.loading.scenario import load
    from slowstart.paths import scenario_path

    config = stacks.kernel_like(load(scenario_path("real-web"), cc="cubic"))
    alone = compare.simulate_beside(config, [])
    end = alone.summary["sim_time_s"]

    class Real:  # a real run, as far as its length goes
        def __init__(self, last_s: float) -> None:
            self.flows = pd.DataFrame({"t_s": [0.0, last_s]})

    longer = compare.simulate_beside(config, [Real(end / 2), Real(end + 0.25)])
    assert longer.summary["sim_time_s"] == pytest.approx(end + 0.25, abs=1e-9)
    assert longer.summary["apps"] == alone.summary["apps"]
    # Its trace goes on: the last flight's ACKs come back and nothing is left in flight.
    assert alone.flows["inflight_bytes"].iloc[-1] > 0
    assert longer.flows["inflight_bytes"].iloc[-1] == 0
    assert longer.flows["t_s"].max() > alone.flows["t_s"].max()
    shorter = compare.simulate_beside(config, [Real(end / 2)])
    assert shorter.summary == {**alone.summary, "wall_s": shorter.summary["wall_s"]}


@needs_root
@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_a_real_run_writes_the_captures_of_its_emulated_link(tmp_path, emu_built):
    from test_exports import RETRANSMISSION, tshark_count

    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="2MB"))
    pcap = tmp_path / "pcap"
    proc = cli("real", str(scenario), "--cc", "reno", "--json", "--pcap", str(pcap))
    assert proc.returncode == 0, proc.stderr
    flow = json.loads(proc.stdout)["flows"][0]
    # The simulated run's names for the bottleneck's two directions.
    sent, acks = pcap / "bottleneck.pcap", pcap / "bottleneck_reverse.pcap"
    assert sorted(p.name for p in pcap.iterdir()) == [sent.name, acks.name]
    # Linux's handshake, with the options it negotiates.
    syn = "tcp.flags.syn == 1 && tcp.flags.ack == 0"
    assert tshark_count(sent, f"{syn} && tcp.options.mss_val && tcp.options.sack_perm") == 1
    assert tshark_count(acks, "tcp.flags.syn == 1 && tcp.flags.ack == 1") == 1
    # The 1 BDP buffer overflows in slow start: tshark finds every retransmission TCP_INFO
    # counted, as it does in a simulated capture.
    assert flow["retransmits"] > 0
    assert tshark_count(sent, RETRANSMISSION) == flow["retransmits"]
    assert tshark_count(acks, "tcp.analysis.duplicate_ack") > 0
    assert leftovers(proc.pid) == []


def test_cross_sources_must_cross_the_emulated_link():
    """Issue 13: the emulator plays `[[cross]]` sources on the one link it emulates, the
    bottleneck (router to receiver): sources into the receiver go forward, sources out of it
    reverse; one between sender and router would cross only the access link, which a real run
    does not emulate, and is refused naming its field."""
    from slowstart.loading.scenario import load

    def config(*ends: dict[str, str]) -> dict:
        cross = [{"rate": "1Mbps", **e} for e in ends]
        path = {"rate": "10Mbps", "rtt": "50ms"}
        return load({"duration": "5s", "path": path, "flow": [{"size": "1MB"}], "cross": cross})

    ok = config({}, {"src": "router"}, {"src": "receiver", "dst": "sender"})
    ok["cross"].append({**ok["cross"][2], "dst": "router"})
    assert testbed.cross_directions(ok) == ["forward", "forward", "reverse", "reverse"]
    assert testbed.bottleneck(ok)["forward"]["rate_bps"] == 10_000_000
    for ends in ({"dst": "router"}, {"src": "router", "dst": "sender"}):
        with pytest.raises(ValueError) as e:
            testbed.bottleneck(config({}, ends))
        assert str(e.value) == (
            "cross.1.dst: a real run emulates only the bottleneck (router to receiver), so a "
            "source must cross it: from sender or router to receiver, or from receiver to "
            f"sender or router; got {ends.get('src', 'sender')} to {ends['dst']}"
        )
    # A node the path does not have (the core refuses it first) is named as the source.
    with pytest.raises(ValueError, match=r"^cross\.0\.src: .*; got moon to receiver$"):
        testbed.cross_directions({"cross": [{"src": "moon"}]})


CROSS = {
    "duration": "20s",
    "path": {"rate": "20Mbps", "rtt": "50ms", "buffer": "1bdp"},
    "flow": [{"cc": "reno", "size": "4MB"}],
    "cross": [{"rate": "10Mbps"}],
}


@needs_root
@pytest.mark.parametrize("stack", ["kernel", "udp"])
def test_cross_traffic_takes_its_share_of_a_real_bottleneck(udp_built, stack):
    """Issue 13: a 10 Mbps CBR source (half of a 20 Mbps, 50 ms, 1-BDP path) beside a 4 MB Reno
    transfer, over Linux TCP and over the UDP stack, against the transfer alone and the
    simulation. Measured (11-24), Linux: alone 17.2 Mbps; beside the source 9.37 Mbps in 14
    runs of 20 (simulated 9.63) and 8.4-8.5 Mbps in 6, where a loss among the transfer's last
    segments at the queue's second overflow (3.4 s) cost a recovery or a timeout; the source
    9.92-9.93 Mbps through (simulated 9.60). UDP stack, 3 runs: 9.12-9.64 Mbps (simulated 9.22),
    the source 9.59-9.94 Mbps (simulated 9.93). Which of flow and source a full drop-tail queue
    drops depends on the phase of the flow's ACK clock against the source's fixed times (Floyd
    and Jacobson, "On traffic phase effects in packet-switched gateways", 1992), which
    microseconds of processing shift: the source lost 0-3 packets of about 2 900 beside Linux
    (simulated 95), 126, 0 and 0 of 3 600 beside the UDP stack (simulated 0). So its drops are
    held to 5% of its packets in both, its rate to 5% of the simulated one, and flow and source
    together to 85-100% of the line (93.5% in Linux's slow runs, 98% otherwise; the
    simulations 98%)."""
    from slowstart.cli import format_real
    from slowstart.loading.scenario import load
    from slowstart.real.udp import run_real_udp

    config = load(CROSS, cc="reno")
    run = run_real_udp if stack == "udp" else real_kernel.run_real
    alone = run({k: v for k, v in config.items() if k != "cross"}).summary["flows"][0]
    c = compare.compare(config, runs=1, stack=stack)
    c.pop("_results")
    real, sim = c["real"][0], c["sim"]
    flow, cross, sim_cross = real["flows"][0], real["cross"][0], sim["cross"][0]
    # The flow keeps about the half the source leaves it.
    assert 0.4 < flow["goodput_bps"] / alone["goodput_bps"] < 0.65, (flow, alone)

    def line_bps(summary: dict) -> float:
        """What the flow and the source took of the line, in bits on the wire per second."""
        goodput = summary["flows"][0]["goodput_bps"]
        return goodput * 1500 / flow["mss"] + summary["cross"][0]["delivered_bps"]

    # Both take the one line: their wire rates add up to nearly all of it, never more.
    assert 0.85 * 20e6 < line_bps(real) < 20e6, real
    assert 0.85 * 20e6 < line_bps(sim) < 20e6, sim
    assert abs(cross["delivered_bps"] / sim_cross["delivered_bps"] - 1) < 0.05, (cross, sim_cross)
    for row in (cross, sim_cross):
        assert row["packets_dropped"] <= 0.05 * row["packets_sent"], row
    # The same fields in the simulator's order, then the emulator's lateness (its own log of how
    # long after its send time each packet reached the link). A late packet is rare: the mean
    # stays under 100 us, where 1 ms in 50 would be 20 us. The worst one waits for the
    # emulator's loop, which the two endpoints share two cores with at the same real-time
    # priority (one was 1.07 ms late in a suite run beside builds); it still reaches the link
    # within a tenth of the 50 ms RTT, in the round it was sent in.
    assert list(cross)[: len(sim_cross)] == list(sim_cross)
    assert list(cross)[len(sim_cross) :] == ["send_late_mean_us", "send_late_max_us"]
    assert cross["send_late_mean_us"] < 100, cross
    assert cross["send_late_max_us"] < 5000, cross
    # Sent at the exact rate over the time the source ran (its delivered bytes over its
    # rate), within one packet.
    ran_s = cross["bytes_delivered"] * 8 / cross["delivered_bps"]
    assert abs(cross["packets_sent"] - ran_s * 10e6 / 12_000) <= 1, cross
    # Sent = delivered + dropped + what the link held when the emulator stopped, the flow done:
    # 25 ms of propagation at 10 Mbps (20.8 packets), one in transmission, one just sent.
    held = cross["packets_sent"] - cross["packets_delivered"] - cross["packets_dropped"]
    assert 0 <= held <= 23, cross
    assert real["links"][0]["drops"] >= cross["packets_dropped"]
    assert "cross  kind  path" in format_real(real) and "sender->receiver" in format_real(real)
    assert "cross0.delivered_bps" in c["diff"]
    assert real["tun_tx_dropped"] == {"sender": 0, "receiver": 0}
    assert leftovers(os.getpid()) == []
