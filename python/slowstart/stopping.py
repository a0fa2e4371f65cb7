"""SIGTERM stops a command as Ctrl-C does, and either is recorded.

`timeout`, systemd and batch schedulers stop a program with SIGTERM, whose default action ends
the process at once: a long `run` left no output at all. `install()` (from `cli.main`) makes
SIGTERM raise KeyboardInterrupt like SIGINT, so every path that handles Ctrl-C (the engine's
partial result, a sweep's stored batches, a real run's testbed) handles it too; the command
then exits with 128 + the signal (143), as a shell reports a process SIGTERM ended. `timeout`
signals the whole process group: a sweep's worker processes ignore both signals and are ended
by the driver (`running.batches._stop`).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

# prctl(2): the signal a process gets when its parent dies.
PR_SET_PDEATHSIG = 1

# The signal that stopped the command, once one has.
_stopped_by: list[int] = []


def _on_stop(signum: int, frame: object) -> None:
    _stopped_by.append(signum)
    raise KeyboardInterrupt(word())


def install() -> None:
    """SIGTERM and Ctrl-C (SIGINT) raise KeyboardInterrupt from now on, recording the signal;
    each is left alone if someone handles it already (a caller embedding the CLI, or
    `nohup`-style ignoring)."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_stop)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_stop)


def stopped() -> bool:
    """Whether SIGTERM or Ctrl-C has stopped the command. A library that catches the
    KeyboardInterrupt raised inside its own call raises its own error instead (DuckDB:
    `RuntimeError: Query interrupted`); after the signal that error is the stop, not a bug."""
    return bool(_stopped_by)


def status() -> int:
    """The exit status of a stopped command: 143 after SIGTERM, else 130 (Ctrl-C)."""
    return 128 + (_stopped_by[0] if _stopped_by else signal.SIGINT)


def word() -> str:
    """How the command was stopped, for its one line: "terminated (SIGTERM)" or "interrupted"."""
    return "terminated (SIGTERM)" if _stopped_by[:1] == [signal.SIGTERM] else "interrupted"


def ignore_in_worker(driver: int | None = None) -> None:
    """A worker process of the driver (pid `driver`) leaves Ctrl-C and SIGTERM to it (both
    reach the whole process group from a terminal or `timeout`); the driver ends it
    (`running.batches._stop`). It dies with the driver: a SIGKILLed sweep left its idle pool
    workers running forever (they hold the task queue's write end, so never see it close)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if driver is not None and os.getppid() != driver:  # gone before the signal was armed
        os._exit(1)
