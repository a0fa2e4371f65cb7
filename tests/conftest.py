"""Shared fixtures: the repository root, a small scenario dict, a fixed algorithm registry, and
the guard that stops whatever processes a test left running."""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from slowstart.real import testbed

# Hypothesis draws its examples from fixed seeds in `make test` (profile "suite", the default),
# fresh ones under `make test-explore` (the Makefile sets HYPOTHESIS_PROFILE).
settings.register_profile("suite", derandomize=True)
settings.register_profile("explore")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

ROOT = Path(__file__).resolve().parent.parent
# The real-network modules' mark (`pytestmark = NETWORK`): `make test` runs pytest on two
# workers (pytest-xdist, --dist loadgroup) and all of these on one of them, one at a time, as
# they ran before; the other worker runs the simulations beside them, so each real run shares
# the machine with one CPU-bound process, the load these tests are written to pass under.
NETWORK = pytest.mark.xdist_group("network")
# How long a child a test left running gets to exit on SIGTERM (a `slowstart real` run removes
# its namespaces then) before SIGKILL.
STOP_GRACE_S = 10
OUTCOME = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    report = yield
    if report.when == "call":
        item.stash[OUTCOME] = report.passed
    return report


def built(*crates: str) -> Iterator[None]:
    """A module fixture's body: each workspace binary (slowstart-emu, -udp, -quinn) built once,
    outside the timed runs, and named to every run by its variable (SLOWSTART_EMU, ...), so
    none waits for cargo or its lock again. Nothing is built where real runs cannot happen."""
    with pytest.MonkeyPatch.context() as mp:
        if testbed.unavailable_reason() is None:
            for crate in crates:
                mp.setenv(testbed.binary_variable(crate), testbed.cargo_binary(crate))
        yield


def foreground(cmd: list[str], **kwargs: object) -> subprocess.Popen:
    """Start `cmd` with SIGINT at its default, as a terminal starts its foreground job, for a
    test that sends it Ctrl-C. A shell without job control starts background jobs (`make test
    &`, `nohup ... &` in a script) with SIGINT ignored, their children inherit that, and Python
    then keeps ignoring it: the program would never see the test's SIGINT."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(cmd, **kwargs)
    finally:
        signal.signal(signal.SIGINT, old)


def stop(p: subprocess.Popen) -> None:
    """SIGTERM, SIGKILL after STOP_GRACE_S; then reap it and close its pipes."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    for pipe in (p.stdin, p.stdout, p.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):  # stdin's unflushed text to a dead process
                pipe.close()


@pytest.fixture(autouse=True)
def _children(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No child outlives its test. Every process the test starts (subprocess.Popen, also
    through subprocess.run and the package's own code) is stopped and reaped when the test ends,
    its pipes closed, so a test that failed or timed out leaves no process, no load and no
    ResourceWarning for a later test to trip on. A test that passed with a child still running
    fails here, naming it."""
    started: list[subprocess.Popen] = []
    init = subprocess.Popen.__init__

    def tracked(self: subprocess.Popen, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)
        started.append(self)

    monkeypatch.setattr(subprocess.Popen, "__init__", tracked)
    yield
    monkeypatch.setattr(subprocess.Popen, "__init__", init)
    running = [p for p in started if p.poll() is None]
    for p in started:
        stop(p)
    if running and request.node.stash.get(OUTCOME, False):
        names = "; ".join(f"{p.pid}: {p.args!r}" for p in running)
        pytest.fail(f"the test left processes running (now stopped): {names}")


# What the site is built from: a site/ newer than all of these is the site they make (the
# Playground's engine, crates/slowstart-web, is built by `make web` and copied in).
SITE_SOURCES = [
    ROOT / "mkdocs.yml",
    *ROOT.glob("docs/**/*"),
    *ROOT.glob("python/slowstart/*"),
    ROOT / "python" / "slowstart" / "reports" / "playground.py",
    ROOT / "target" / "wasm32-unknown-unknown" / "web" / "slowstart_web.wasm",
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site: `make docs`'s site/ when it is newer than its sources (as in `make
    test`, which builds it first), else a fresh strict build."""
    built = ROOT / "site" / "index.html"
    newest = max(p.stat().st_mtime for p in SITE_SOURCES if p.is_file())
    if built.exists() and built.stat().st_mtime > newest:
        return built.parent
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "mkdocs"), "build", "--strict", "--quiet", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


# Debian's chromium, for the tests that open a page in a real browser (`make browser`).
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
needs_browser = pytest.mark.skipif(
    BROWSER is None,
    reason="no chromium on this machine (`make browser` installs Debian's, as `make test` does)",
)


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium on a page, its console on stderr; enough virtual time to load it."""
    assert BROWSER is not None
    return subprocess.run(
        [BROWSER, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
        + ["--enable-logging=stderr", "--v=0", "--virtual-time-budget=20000", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture(autouse=True, scope="session")
def _store(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Commands that store their runs (sweep, reproduce) store them in a temporary folder, not
    in the repository's out/: a test sees only the runs it made."""
    import os

    os.environ["SLOWSTART_STORE"] = str(tmp_path_factory.mktemp("store") / "results.duckdb")


SMALL = {
    "name": "small",
    "duration": "2s",
    "path": {"rate": "100Mbps", "rtt": "40ms"},
    "flow": [{"cc": "reno", "size": "1MB"}],
}


@pytest.fixture
def small() -> dict:
    return copy.deepcopy(SMALL)


class Ran(subprocess.CompletedProcess[str]):
    """A finished command and the pid it ran as (what a real run makes is named by it)."""

    pid: int
    # A real run's note of the dead runs' remains it removed (testbed.testbed), kept apart
    # from stderr: any killed run on the machine, another suite's too, can leave them.
    notes: list[str]


REMOVED_NOTE = "note: removed what dead runs left: "


def cli(*args: str, cwd: Path = ROOT, timeout: float = 300) -> Ran:
    """`slowstart ARGS` in a fresh interpreter, as a user would run it; stopped (`stop`) if it
    takes longer than `timeout` seconds."""
    cmd = [sys.executable, "-m", "slowstart", *args]
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        stop(p)
    lines = (err or "").splitlines(keepends=True)
    notes = [x for x in lines if x.startswith(REMOVED_NOTE)]
    ran = Ran(cmd, p.returncode, out, "".join(x for x in lines if x not in notes))
    ran.pid, ran.notes = p.pid, notes
    return ran
