"""Ctrl-C: a run stops at the engine's next look (every 100 ms of wall time), exits 130 and,
with --out, writes what it has."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path

from conftest import foreground

# Generous for a loaded 2-core machine: the stop itself takes 100 ms, writing flows.parquet
# and cwnd.png up to 5 s at a load of 15 (measured 11-27); the whole run would take minutes.
EXIT_WITHIN_S = 60


def read_until(fd: int, pattern: bytes, deadline: float) -> bytes:
    """What the terminal `fd` shows until `pattern` appears (or EOF, or the deadline)."""
    seen = b""
    while pattern not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the program closed the terminal (exited)
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_sigint_stops_a_long_run_and_writes_what_it_has(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "slowstart.cli", "run", "lfn-early-loss", "--duration", "3000s"]
    # stderr on a terminal, as a user's: the progress bar shows once the engine has run 1 s,
    # so the Ctrl-C lands in the engine, whatever the machine's load. The child starts with
    # SIGINT at its default, as a terminal's foreground job does: a shell without job control
    # starts background jobs (`make test &`) with SIGINT ignored, and they inherit it.
    terminal, child_end = pty.openpty()
    try:
        proc = foreground([*cmd, "--out", str(out)], stderr=child_end)
    finally:
        os.close(child_end)
    try:
        shown = read_until(terminal, b"simulating", time.monotonic() + 120)
        assert b"simulating" in shown and proc.poll() is None, shown
        proc.send_signal(signal.SIGINT)
        shown += read_until(terminal, b"\0", time.monotonic() + EXIT_WITHIN_S)
        proc.wait(timeout=1)
    finally:
        os.close(terminal)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode(errors="replace"))
    assert proc.returncode == 130, text
    assert re.search(r"error: interrupted at \d+\.\d+ s of simulated time", text), text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert 0 < summary["sim_time_s"] < 3000
    assert (out / "flows.parquet").stat().st_size > 0


def test_progress_callback_sees_simulated_time() -> None:
    from slowstart.loading.scenario import load
    from slowstart.running.api import run_config

    seen: list[tuple[float, float]] = []
    config = load("scenarios/lfn-early-loss.toml", duration="300s")
    run_config(config, lambda now, end: seen.append((now, end)))
    # About one call per 100 ms of wall time; the run takes over a second on any machine here.
    assert seen, "called at least once"
    assert all(end == 300.0 for _, end in seen)
    assert all(0 < now <= 300.0 for now, _ in seen)
    assert [n for n, _ in seen] == sorted(n for n, _ in seen)


# Sends itself SIGINT when `slowstart.cli` starts to load: Ctrl-C at the command's first moment.
CTRL_C_WHILE_LOADING = """
import importlib.abc, os, signal, sys

class CtrlC(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "slowstart.cli":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlC())
import slowstart.launch
"""


def test_ctrl_c_while_the_command_loads_is_one_line_and_status_130() -> None:
    proc = foreground([sys.executable, "-c", CTRL_C_WHILE_LOADING], stderr=-1, text=True)
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (130, "error: interrupted\n")
