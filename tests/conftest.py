"""Shared fixtures: the repository root, a small scenario dict, a fixed algorithm registry."""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

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


# A registry shaped like `_core.algorithms()`, so loader tests do not depend on which
# algorithms the core has today.
ALGORITHMS = [
    {"name": "reno", "summary": "", "source": "", "params": []},
    {
        "name": "lss",
        "summary": "",
        "source": "",
        "params": [{"name": "max_ssthresh", "doc": "", "default": "100", "accepted": "> 0"}],
    },
    {
        "name": "aimd",
        "summary": "",
        "source": "",
        "params": [
            {"name": "a", "doc": "", "default": "1", "accepted": "> 0"},
            {"name": "b", "doc": "", "default": "0.5", "accepted": "(0, 1)"},
        ],
    },
]

SMALL = {
    "name": "small",
    "duration": "2s",
    "path": {"rate": "100Mbps", "rtt": "40ms"},
    "flow": [{"cc": "reno", "size": "1MB"}],
}


@pytest.fixture
def small() -> dict:
    return copy.deepcopy(SMALL)


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`slowstart ARGS` in a fresh interpreter, as a user would run it."""
    return subprocess.run(
        [sys.executable, "-m", "slowstart", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
