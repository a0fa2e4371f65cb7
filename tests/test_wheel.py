"""The wheel as a user installs it: `make wheel` (from the release build `make setup` made), into
a new virtual environment holding nothing else, then the commands of the issue (#39) run from a
folder with no scenarios/ of its own, finding everything in the installed package."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT

UV = Path(sys.executable).with_name("uv")  # the dev extra's: seconds where pip takes a minute


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a new venv with the built wheel installed, nothing from the checkout."""
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    # The features `make setup` built the extension with (make expands the reference), so
    # nothing is compiled again.
    make = ["make", "--no-print-directory", "wheel", f"DIST={dist}"]
    make.append("WHEEL_FEATURES=$(EXTENSION_FEATURES)")
    # `make wheel` stages its data in the checkout: one at a time, each pytest worker its own.
    with open(tmp_path_factory.getbasetemp().parent / "make-wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = subprocess.run(make, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stderr[-2000:]
    wheels = list(dist.glob("slowstart-*-abi3-*.whl"))
    assert len(wheels) == 1 and list(dist.glob("slowstart-*.tar.gz")), sorted(dist.iterdir())
    venv = tmp / "venv"
    subprocess.run([UV, "venv", "--quiet", "--python", sys.executable, venv], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}"}
    env.pop("SLOWSTART_STORE", None)
    subprocess.run([UV, "pip", "install", "--quiet", wheels[0]], env=env, check=True)
    return env


def user(env: dict[str, str], cwd: Path, *cmd: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def test_the_installed_package_finds_its_own_data_and_version(installed, tmp_path):
    script = (
        "import json, slowstart, slowstart._core as core\n"
        "from slowstart import paths\n"
        "print(json.dumps([str(paths.REPO), slowstart.__version__, core.__version__,\n"
        "    [p.name for p in (paths.SUITE, paths.EXAMPLES / 'wasm-controller' / 'Cargo.toml',\n"
        "     paths.EXAMPLES / 'bpf' / 'reno.bpf.c', paths.REPO / 'traces' / 'steps.txt')\n"
        "     if p.is_file()]]))"
    )
    proc = user(installed, tmp_path, "python", "-c", script)
    repo, version, core_version, found = json.loads(proc.stdout)
    assert Path(repo).parts[-3:] == ("site-packages", "slowstart", "_data")
    assert Path(installed["VIRTUAL_ENV"]) in Path(repo).parents
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]
    assert version == core_version == workspace["version"]
    assert user(installed, tmp_path, "slowstart", "--version").stdout == f"slowstart {version}\n"
    assert found == ["scorecard.toml", "Cargo.toml", "reno.bpf.c", "steps.txt"]


def test_the_commands_run_from_any_folder(installed, tmp_path):
    listed = user(installed, tmp_path, "slowstart", "list").stdout
    assert "_data/scenarios" in listed and "satellite " in listed
    run = user(installed, tmp_path, "slowstart", "run", "satellite").stdout
    assert run.startswith("satellite: seed 1,") and "100.00 MB" in run
    score = user(installed, tmp_path, "slowstart", "score", "--path", "satellite", "--quiet")
    assert "cubic:slow_start=lss" in score.stdout
    floyd = user(installed, tmp_path, "slowstart", "reproduce", "floyd", "--json", "--quiet")
    rows = json.loads(floyd.stdout)["floyd"]["rows"]
    assert len(rows) == 4 and all(row["verdict"] == "ok" for row in rows)


def test_a_missing_extra_is_named_in_one_line(installed, tmp_path):
    cmd = ["slowstart", "sweep", "satellite", "--vary", "flow.0.initcwnd=10"]
    cmd += ["--cluster", "local:1"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=installed, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "error: --cluster local:1: needs Dask, not installed: pip install 'slowstart[dask]'"
    ]


def test_the_python_api_runs_a_scenario_by_name(installed, tmp_path):
    script = (
        "import slowstart\n"
        "r = slowstart.run('satellite', duration='2s', cc='reno')\n"
        "print(r.summary['flows'][0]['cc'])"
    )
    assert user(installed, tmp_path, "python", "-c", script).stdout.strip() == "reno"
