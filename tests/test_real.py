"""`slowstart real` and `slowstart compare`: Linux TCP through the emulated link.

The transfers need root, /dev/net/tun and iproute2 (network namespaces); elsewhere they are
skipped with the reason `slowstart.real.unavailable_reason()` gives.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, cli
from slowstart import real

REASON = real.unavailable_reason()
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


def leftovers(pid: int | None = None) -> list[str]:
    """ss-* namespaces, sst* links and slowstart-emu processes still present."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    found = [line.split()[0] for line in out.splitlines() if line.startswith("ss-")]
    if pid is not None:
        found = [n for n in found if n.endswith(f"-{pid}")]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    found += [w for w in links.split() if w.startswith("sst")]
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                exe = os.readlink(p / "exe")
            except OSError:
                continue
            if exe.endswith("/slowstart-emu"):
                found.append(f"process {p.name}")
    return found


def test_refuses_clearly_when_unavailable(monkeypatch, capsys):
    from slowstart.cli import main

    monkeypatch.setattr(real, "unavailable_reason", lambda: "real runs need root (test)")
    for cmd in ("real", "compare"):
        assert main([cmd, str(ROOT / "scenarios" / "real-20mbps.toml")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == ["error: real runs need root (test)"]


@pytest.fixture(scope="module")
def emu_built():
    if REASON is None:
        real.emulator_binary()  # build once, outside the timed runs


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
    assert f["retransmits"] == s["links"][0]["drops"]
    for name in ("summary.json", "flows.parquet", "queues.parquet", "cwnd.png"):
        assert (out / name).exists()
    import pandas as pd

    flows = pd.read_parquet(out / "flows.parquet")
    assert {"t_s", "cwnd_bytes", "inflight_bytes", "srtt_s", "phase"} <= set(flows.columns)
    # The first flight is initcwnd full segments.
    assert flows["cwnd_bytes"].iloc[0] == 10 * real.MSS
    assert leftovers() == []


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
    assert set(c["diff"]) == set(real.METRICS)
    # Reno through the emulated link finishes within 10% of the simulation.
    assert abs(c["diff"]["completion_s"]) < 0.10
    assert (tmp_path / "compare.png").exists()
    table = cli("compare", str(scenario), "--cc", "reno", "--runs", "1", "--out", str(tmp_path))
    assert table.returncode == 0, table.stderr
    assert "completion_s" in table.stdout and "diff" in table.stdout
    assert leftovers() == []


@needs_root
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_killed_run_leaves_nothing(tmp_path, emu_built, sig):
    scenario = tmp_path / "big.toml"
    scenario.write_text(SMALL.format(size="200MB"))
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-m", "slowstart", "real", str(scenario)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not leftovers(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # mid-transfer
    assert leftovers(proc.pid), "the run never started"
    proc.send_signal(sig)
    proc.communicate(timeout=15)
    time.sleep(0.5)
    if sig == signal.SIGKILL:
        # Emulator, sender and sink die with their parent (PR_SET_PDEATHSIG); the named
        # namespaces are removed by the next run's start.
        assert not [x for x in leftovers(proc.pid) if not x.startswith("ss-")]
        real.cleanup_stale()
    assert leftovers() == []
