"""Ctrl-C: a run stops at the engine's next look (every 100 ms of wall time), exits 130 and,
with --out, writes what it has."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


# A library that catches the KeyboardInterrupt raised inside its own call and raises its own
# error (DuckDB: "RuntimeError: Query interrupted"), as a command's handler would meet it.
LIBRARY_ERROR_AFTER_SIGNAL = """
import argparse, os, signal, sys
from slowstart import cli

def handler(args):
    try:
        os.kill(os.getpid(), signal.SIG%s)
        for _ in range(10**8):
            pass
    except KeyboardInterrupt:
        raise RuntimeError("Query interrupted") from None
    return 0

class Parser:
    def parse_args(self, argv):
        return argparse.Namespace(debug=False, handler=handler)

cli.build_parser = Parser
sys.exit(cli.main([]))
"""


@pytest.mark.parametrize(
    ("sig", "status", "line"), [("INT", 130, "interrupted"), ("TERM", 143, "terminated (SIGTERM)")]
)
def test_a_library_error_raised_in_place_of_the_stop_is_the_stop(sig, status, line) -> None:
    """Not `internal: RuntimeError: ...` and exit 1: the signal came first."""
    code = LIBRARY_ERROR_AFTER_SIGNAL % sig
    proc = foreground([sys.executable, "-c", code], stderr=-1, text=True)
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (status, f"error: {line}\n")


# --- SIGTERM (issue #43): what `timeout`, systemd and batch schedulers send ---------------------


def on_terminal(cmd: list[str], **kwargs: object) -> tuple[subprocess.Popen, int]:
    """`cmd` with stderr on a pseudo-terminal (its progress bar shows there) in a session of its
    own, as `timeout` runs it; returns the process and the terminal's end to read."""
    terminal, child_end = pty.openpty()
    try:
        proc = subprocess.Popen(cmd, stderr=child_end, start_new_session=True, **kwargs)
    finally:
        os.close(child_end)
    return proc, terminal


def shown_text(raw: bytes) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw.decode(errors="replace")).replace("\r", "\n")


def test_sigterm_stops_a_long_run_and_writes_what_it_has(tmp_path: Path) -> None:
    """`timeout 60 slowstart run ... --out` left nothing at all: SIGTERM ended the process."""
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "slowstart", "run", "lfn-early-loss", "--duration", "3000s"]
    proc, terminal = on_terminal([*cmd, "--out", str(out)], stdout=subprocess.DEVNULL)
    try:
        shown = read_until(terminal, b"simulating", time.monotonic() + 120)
        assert b"simulating" in shown and proc.poll() is None, shown
        os.killpg(proc.pid, signal.SIGTERM)  # as `timeout` signals: the whole group
        shown += read_until(terminal, b"\0", time.monotonic() + EXIT_WITHIN_S)
        proc.wait(timeout=1)
    finally:
        os.close(terminal)
    text = shown_text(shown)
    assert proc.returncode == 128 + signal.SIGTERM, text
    assert re.search(r"error: terminated \(SIGTERM\) at \d+\.\d+ s of simulated time", text), text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True and 0 < summary["sim_time_s"] < 3000
    assert (out / "flows.parquet").stat().st_size > 0


def group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def test_sigterm_stops_a_sweep_and_every_run_it_counted_is_stored(tmp_path: Path) -> None:
    """SIGTERM to the sweep's process group mid-sweep (as `timeout` sends it): exit 143, one
    line saying how many runs were done; each of them is in the store, no worker is left, and
    the same command then runs only the rest."""
    store = tmp_path / "s.duckdb"
    # 12 runs of about a second each here (lfn-early-loss, 100 s simulated).
    cmd = [sys.executable, "-m", "slowstart", "sweep", "lfn-early-loss", "--duration", "100s"]
    cmd += ["--vary", "flow.0.initcwnd=1,2,3,4,5,6", "--seeds", "1-2"]
    cmd += ["--store", str(store), "--jobs", "2"]
    proc, terminal = on_terminal(cmd, stdout=subprocess.DEVNULL)
    try:
        # The bar counts stored runs ("N/12 runs"); stop once a few are.
        deadline = time.monotonic() + 180
        shown = b""
        while time.monotonic() < deadline and proc.poll() is None:
            shown += read_until(terminal, b" runs", time.monotonic() + 1)
            counts = re.findall(r"(\d+)/12 runs", shown_text(shown))
            if counts and 2 <= int(counts[-1]) < 10:
                break
        assert proc.poll() is None, shown_text(shown)
        os.killpg(proc.pid, signal.SIGTERM)
        shown += read_until(terminal, b"\0", time.monotonic() + EXIT_WITHIN_S)
        proc.wait(timeout=1)
    finally:
        os.close(terminal)
    text = shown_text(shown)
    assert proc.returncode == 128 + signal.SIGTERM, text
    m = re.search(r"error: terminated \(SIGTERM\) after (\d+) of 12 runs, stored in ", text)
    assert m, text
    assert until_gone(proc.pid), "a worker outlived the sweep"
    import duckdb

    with duckdb.connect(str(store), read_only=True) as con:
        stored = con.execute("SELECT count(*), count(DISTINCT key) FROM runs").fetchone()
    # Every run it counted is stored, none twice; a batch the signal caught between storing
    # and counting is stored too (so never fewer).
    done, (runs, keys) = int(m.group(1)), stored
    assert 0 < done <= runs == keys < 12, (done, stored)
    again = subprocess.run([*cmd, "--quiet"], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"sweep: {12 - runs} runs made, {runs} read from" in again.stderr


def until_gone(pgid: int, timeout_s: float = 30) -> bool:
    deadline = time.monotonic() + timeout_s
    while not group_gone(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_sigterm_stops_reproduce_in_one_line(tmp_path: Path) -> None:
    """`reproduce` stopped by SIGTERM once its first experiment has started: exit 143 and one
    line, as Ctrl-C gives 130."""
    cmd = [sys.executable, "-m", "slowstart", "reproduce", "satellite", "--out", str(tmp_path)]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()  # "satellite: <variant>" as a variant starts
    assert first.startswith(b"satellite: "), first
    os.killpg(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=EXIT_WITHIN_S)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert lines[-1].startswith("error: terminated (SIGTERM)"), err
    assert "Traceback" not in err.decode()
