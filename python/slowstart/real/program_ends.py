"""The two ends of a `[flow.program]` pair (real/program.py runs them): each program's process
in its namespace, started at its time and stopped with its process group, the placeholders in
its command line, the checks that a server listens and that its port is free, and the one-line
error a failed program gives."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from slowstart.real.testbed import (
    PARENT_ENV,
    Session,
)
from slowstart.units import ScenarioError

# A server has this long to listen on its port (or die saying why): a Python HTTP server
# starts in about 0.1 s on an idle 2-core machine; a generous margin for a busy one.
LISTEN_TIMEOUT_S = 20.0
# After the client, the server gets this long to exit on SIGTERM before SIGKILL.
STOP_GRACE_S = 2.0
# Lines of a failed program's stderr shown in the error.
STDERR_LINES = 3


class ProgramError(ScenarioError):
    """A program of a flow failed, or cannot run: one line, exit status 2."""


PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def child_setup(at_ns: int) -> Any:
    """What the child does before exec: die with the run (PR_SET_PDEATHSIG survives exec),
    then wait until `at_ns` (monotonic), so a client starts on time without a fork's delay."""

    def setup() -> None:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        while (left := at_ns - time.monotonic_ns()) > 0:
            time.sleep(left / 1e9)

    return setup


def self_signed(work: Path) -> tuple[Path, Path]:
    key, cert = work / "key.pem", work / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        + ["-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1"]
        + ["-subj", "/CN=slowstart"],
        check=True,
        capture_output=True,
    )
    return key, cert


def fill(argv: list[str], values: dict[str, str]) -> list[str]:
    return [PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), a) for a in argv]


class End:
    """One program of a flow: its command, namespace, process (a group of its own) and logs."""

    def __init__(self, flow: int, role: str, ns: str, argv: list[str], folder: Path) -> None:
        self.flow, self.role, self.ns, self.argv = flow, role, ns, argv
        self.out, self.err = folder / f"{role}.out", folder / f"{role}.err"
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_ns = self.ended_ns = 0
        self.stopped = False

    @property
    def name(self) -> str:
        return f"flow {self.flow}'s {self.role} ({Path(self.argv[0]).name})"

    def start(self, cwd: Path, at_ns: int = 0) -> None:
        """Start it in `cwd`, at `at_ns` (monotonic) if given; returns once it has."""
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                ["ip", "netns", "exec", self.ns, *self.argv],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                cwd=cwd,
                env={**os.environ, PARENT_ENV: str(os.getpid())},
                start_new_session=True,
                preexec_fn=child_setup(at_ns),
            )
        self.started_ns = time.monotonic_ns()

    def poll(self) -> int | None:
        assert self.proc is not None
        status = self.proc.poll()
        if status is not None and not self.ended_ns:
            self.ended_ns = time.monotonic_ns()
        return status

    def stderr_tail(self) -> str:
        lines = self.err.read_text(errors="replace").strip().splitlines()
        return " | ".join(line.strip() for line in lines[-STDERR_LINES:]) or "no stderr"

    def failed(self, status: int) -> ProgramError:
        err = self.stderr_tail()
        if "address already in use" in err.lower():  # EADDRINUSE's strerror
            line = next(x for x in reversed(err.split(" | ")) if "in use" in x.lower())
            return ProgramError(f"{self.name}: port in use: {line}")
        return ProgramError(f"{self.name} exited with status {status}: {err}")

    def kill(self) -> None:
        """SIGTERM to its process group, SIGKILL after STOP_GRACE_S."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.stopped = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def bound(pid: int, ns: str, port: int) -> bool | None:
    """Whether a socket in namespace `ns` listens on (TCP) or is bound to (UDP) `port`, read
    from /proc/PID/net of a process in it; None while `pid` is not in `ns` yet (`ip netns
    exec` is still setting it up) or gone."""
    try:
        if os.stat(f"/proc/{pid}/ns/net").st_ino != os.stat(f"/run/netns/{ns}").st_ino:
            return None
        for table, listening in (("tcp", "0A"), ("tcp6", "0A"), ("udp", None), ("udp6", None)):
            with contextlib.suppress(FileNotFoundError):
                for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
                    fields = line.split()
                    local, state = fields[1], fields[3]
                    if int(local.rsplit(":", 1)[1], 16) == port and state == (listening or state):
                        return True
    except (FileNotFoundError, ProcessLookupError):
        return None
    return False


def wait_listening(server: End, port: int) -> None:
    deadline = time.monotonic() + LISTEN_TIMEOUT_S
    assert server.proc is not None
    while time.monotonic() < deadline:
        status = server.poll()
        if status is not None:
            raise server.failed(status)
        if bound(server.proc.pid, server.ns, port):
            return
        time.sleep(0.01)
    raise ProgramError(
        f"{server.name}: not listening on port {port} after {LISTEN_TIMEOUT_S:.0f} s "
        "(does its command bind {addr} and {port}?)"
    )


def port_taken(session: Session, ns: str, port: int) -> bool:
    """Whether a process of this run already holds `port` in `ns`."""
    pids = subprocess.run(
        ["ip", "netns", "pids", ns], capture_output=True, text=True, check=False
    ).stdout.split()
    return any(bound(int(p), ns, port) for p in pids)
