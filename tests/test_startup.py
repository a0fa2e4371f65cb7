"""Start-up: the commands that need no table, file or figure load no heavy library.

`slowstart list` and `slowstart run --json` are timed in bench/run.py (`startup-*`), never
here; what is tested is the cause of a slow start, the imports.
"""

import ast
import importlib.metadata
import json
import subprocess
import sys

import pytest

from conftest import ROOT, cli
from slowstart import _core

HEAVY = ("numpy", "pandas", "pyarrow", "matplotlib")


def imported(*args: str) -> set[str]:
    """Top-level packages `slowstart ARGS` imported, read from `python -X importtime`."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "slowstart", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            names.add(name.split(".")[0])
    assert "slowstart" in names, "no -X importtime output to read"
    return names


def test_list_imports_nothing_heavy():
    assert not imported("list") & set(HEAVY)


@pytest.mark.parametrize(
    "args",
    [
        ["satellite"],
        ["web-initcwnd", "--duration", "2s"],
        ["bittorrent-request-slowstart", "--duration", "1s"],  # a run with app series
        ["swarm-adsl", "--duration", "20s"],  # peers instead of flows
    ],
)
def test_run_json_imports_nothing_heavy(args):
    assert not imported("run", *args, "--json") & set(HEAVY)


def test_heavy_imports_are_seen_when_needed(tmp_path):
    # The check above can see them: writing files needs pandas, pyarrow and matplotlib.
    found = imported("run", "web-initcwnd", "--duration", "2s", "--out", str(tmp_path))
    assert set(HEAVY) <= found


def test_result_frames_built_on_first_use():
    """`slowstart.run(...).summary` alone loads neither numpy nor pandas; `.flows` does."""
    script = (
        "import json, sys, slowstart\n"
        "r = slowstart.run('scenarios/satellite.toml', duration='1s')\n"
        "before = [m for m in sys.argv[1:] if m in sys.modules]\n"
        "rows = len(r.flows)\n"
        "print(json.dumps([before, rows, 'pandas' in sys.modules]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, *HEAVY],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    before, rows, pandas_after = json.loads(proc.stdout)
    assert before == []
    assert rows > 0 and pandas_after


def test_version():
    proc = cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"slowstart {importlib.metadata.version('slowstart')}\n"
    assert proc.stderr == ""


def test_the_extension_stub_declares_every_function_it_has():
    """_core.pyi is what editors and type checkers see of the extension: one `def` or `class`
    per function or class the module exports, none missing and none left over."""
    stub = ast.parse((ROOT / "python" / "slowstart" / "_core.pyi").read_text())
    declared = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    exported = {n for n in dir(_core) if not n.startswith("_") and callable(getattr(_core, n))}
    assert declared == exported
