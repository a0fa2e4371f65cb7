"""Every example in README.md and docs/ runs as written (#40), and what its page says of the
output holds.

Each page's blocks run in the page's order, in a folder of their own that sees the
repository's scenarios, examples, suites, traces and built guests (so `out/...` lands there):
`sh` blocks command by command, `python` blocks in one namespace per page (a later block uses
an earlier one's class, as a reader's session would), `console` blocks by their `$` lines, the
lines below each being its output, `toml` blocks loaded as scenarios or sweep plans. What the
prose claims is checked in CHECKS, keyed by page and command (or Python block). A block that
cannot run here (root, minutes, your own files) says so in its first line, `# not run by make
test: why`, which the reader sees too; `text` blocks are output or layouts.

A small runner rather than pytest-examples or mktestdocs: those run Python (mktestdocs also
bash) blocks one by one, each in the current folder, with no order across languages, no
`console` outputs and no way for a check to read what a page's run wrote; this is those
~150 lines. A page is one test, so its runs are made once and shared by its checks.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "docs"))
import hooks  # noqa: E402 - docs/hooks.py, the generated parts' writer

from slowstart.loading.scenario import load  # noqa: E402
from slowstart.reports.score_suite import load_suite  # noqa: E402
from slowstart.running.sweepplan import load_plan  # noqa: E402

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
LANGUAGES = {"sh", "console", "python", "toml", "text", "rust", "bibtex"}
RUNNABLE = {"sh", "console", "python", "toml"}
NOT_RUN = "# not run by make test: "
SEES = ("scenarios", "examples", "suites", "traces", "target")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    text: str

    @property
    def name(self) -> str:
        return str(self.page.relative_to(ROOT))

    @property
    def not_run(self) -> str | None:
        first = self.text.split("\n", 1)[0]
        return first.removeprefix(NOT_RUN) if first.startswith(NOT_RUN) else None


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    return [
        Block(page, text[: m.start()].count("\n") + 1, m.group(1), m.group(2))
        for m in FENCE.finditer(text)
    ]


def commands(text: str) -> list[str]:
    """A block's commands: continuation lines joined, comments and blank lines left out."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [c.strip() for c in joined.splitlines() if c.strip() and not c.strip().startswith("#")]


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A documented command, as the page writes it: `.venv/bin/slowstart` (or `slowstart`) and
    `.venv/bin/python` are this interpreter's; nothing else runs here."""
    words = shlex.split(command, comments=True)
    if words[0] in (".venv/bin/slowstart", "slowstart"):
        argv = [sys.executable, "-m", "slowstart", *words[1:]]
    elif words[0] == ".venv/bin/python":
        argv = [sys.executable, *words[1:]]
    else:
        raise AssertionError(f"{command}: only slowstart commands run here; mark the block")
    env = {k: v for k, v in os.environ.items() if k != "SLOWSTART_STORE"}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


# Commands already run in this process, with the folder they ran in: the same command on another
# page (the worked example is on two, DelayStart's runs on two) is read back, its output folders
# copied, not run again. The pages that share commands run on one worker (GROUPS).
_RAN: dict[str, tuple[subprocess.CompletedProcess[str], Path]] = {}
_WRITES = ("--out", "--pcap", "--qlog")


def shell_once(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    if command in _RAN:
        ran, before = _RAN[command]
        words = shlex.split(command, comments=True)
        for option, value in zip(words, words[1:], strict=False):
            if option in _WRITES and (before / value).is_dir():
                shutil.copytree(before / value, cwd / value, dirs_exist_ok=True)
        return ran
    ran = shell(command, cwd)
    _RAN[command] = (ran, cwd)
    return ran


def sandbox(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in SEES:
        (folder / name).symlink_to(ROOT / name)
    return folder


def row(table: str, flow: int = 0) -> dict[str, str]:
    """A flow's row of `slowstart run`'s table, by the header's column starts."""
    lines = table.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("flow  cc"))
    starts = [m.start() for m in re.finditer(r"\S+", lines[header])]
    names = lines[header].split()
    line = next(x for x in lines[header + 1 :] if x.split()[:1] == [str(flow)])
    ends = [*starts[1:], None]
    return {n: line[a:b].strip() for n, a, b in zip(names, starts, ends, strict=True)}


# --- what the pages say of their output -----------------------------------------------------

SATELLITE_BDP = 250e6 * 0.6 / 8


def _worked_example(ran: Any, out: Path) -> None:
    """README and getting-started: the transfer ends at 9.8 s after 9 256 drops, cwnd grows to
    3.9 times the BDP; the four files are written."""
    summary = json.loads((out / "out" / "sat" / "summary.json").read_text())
    flow = summary["flows"][0]
    assert round(flow["completion_s"], 1) == 9.8
    assert sum(link["drops"] for link in summary["links"]) == 9256
    assert round(flow["max_cwnd_bytes"] / SATELLITE_BDP, 1) == 3.9
    for name in ("summary.json", "flows.parquet", "queues.parquet", "cwnd.png"):
        assert (out / "out" / "sat" / name).stat().st_size > 0


def _delay_start(exit_s: float, completion_s: float, retx: int) -> None:
    """The README: it leaves slow start at 7.5 s, loses nothing and finishes at 9.81 s."""
    assert (round(exit_s, 1), round(completion_s, 2), retx) == (7.5, 9.81, 0)


def _delay_start_row(ran: Any, _out: Path) -> None:
    r = row(ran.stdout)
    _delay_start(float(r["ss_exit_s"]), float(r["completion_s"]), int(r["retx"]))


def _abridged_class(ns: dict[str, Any], _out: Path) -> None:
    """controllers.md's abridged DelayStart runs as the file does; Reno's overshoot costs 9 252
    retransmissions and 10.12 s."""
    own = ns["slowstart"].run("satellite", cc={"name": ns["DelayStart"], "rise": 0.25})
    f = own.summary["flows"][0]
    _delay_start(f["slow_start_exit_s"], f["completion_s"], f["retransmits"])
    reno = ns["slowstart"].run("satellite").summary["flows"][0]
    assert (reno["retransmits"], round(reno["completion_s"], 2)) == (9252, 10.12)


def _python_worked_example(ns: dict[str, Any], out: Path) -> None:
    assert round(ns["r"].summary["flows"][0]["completion_s"], 1) == 9.8
    assert isinstance(ns["r"].flows, pd.DataFrame) and (out / "cwnd.png").stat().st_size > 0


def _captures(_ran: Any, out: Path) -> None:
    for name in ("access", "access_reverse", "bottleneck", "bottleneck_reverse"):
        assert (out / "out" / "pcap" / f"{name}.pcap").stat().st_size > 24
    assert list((out / "out" / "qlog").iterdir())


def _json(ran: Any, _out: Path) -> None:
    assert json.loads(ran.stdout)["flows"][0]["cc"] == "reno"


def _labelled_once(ran: Any, _out: Path) -> None:
    labels = [line.split("  ")[1] for line in ran.stdout.splitlines() if line.startswith("  ")]
    mine = [x for x in labels if "delay_start.py" in x]
    assert len(mine) == 3 and len(set(mine)) == 3, mine


def _first_to_last(ms: str) -> Callable[[Any, Path], None]:
    """metrics.md: the 17 kB page's first to last byte at initcwnd 3, initrwnd 4."""

    def check(ran: Any, _out: Path) -> None:
        line = next(x for x in ran.stdout.splitlines() if x.split()[:3] == ["17,000", "3", "4"])
        assert line.split()[4] == ms, line

    return check


def _careful_resume(ns: dict[str, Any], _out: Path) -> None:
    """startups.md: the saved state (12660, 600.108), and 6.29 s, then 5.17 s."""
    assert (ns["cwnd"], round(ns["rtt_ms"], 3)) == (12660, 600.108)
    times = [round(r.summary["flows"][0]["completion_s"], 2) for r in (ns["first"], ns["second"])]
    assert times == [6.29, 5.17]


def _sweep_stores_only_when_told(ns: dict[str, Any], out: Path) -> None:
    assert (ns["table"].attrs["runs"], ns["table"].attrs["stored"]) == (4, 0)
    assert (out / "out" / "results.duckdb").exists()  # only the second, given a store
    assert ns["stored"].attrs["runs"] == 4


def _written(*names: str) -> Callable[[Any, Path], None]:
    def check(_ran: Any, out: Path) -> None:
        for name in names:
            assert (out / name).stat().st_size > 0, name

    return check


SAT = ".venv/bin/slowstart run scenarios/satellite.toml --set flow.0.initcwnd=20 --out out/sat"
DELAY = ".venv/bin/slowstart run satellite --cc examples/python/delay_start.py:DelayStart:rise=0.25"
WASM = (
    ".venv/bin/slowstart run satellite --cc "
    "target/wasm32-unknown-unknown/release/wasm_controller.wasm:rise=0.25"
)
PLAN = ".venv/bin/slowstart plan --rtt 50ms --rate 10Mbps --size 17kB --initcwnd 3 --initrwnd 4"
CHECKS: dict[tuple[str, str | int], Callable[[Any, Path], None]] = {
    ("README.md", SAT): _worked_example,
    ("README.md", 0): _python_worked_example,
    ("README.md", DELAY): _delay_start_row,
    ("README.md", WASM): _delay_start_row,
    ("docs/getting-started.md", SAT): _worked_example,
    ("docs/getting-started.md", 0): _python_worked_example,
    (
        "docs/getting-started.md",
        ".venv/bin/slowstart run scenarios/satellite.toml --duration 10s --pcap out/pcap "
        "--qlog out/qlog",
    ): _captures,
    (
        "docs/getting-started.md",
        ".venv/bin/slowstart run scenarios/lfn-early-loss.toml --cc reno --duration 10s --json",
    ): _json,
    ("docs/controllers.md", 0): _abridged_class,
    ("docs/controllers.md", DELAY): _delay_start_row,
    ("docs/controllers.md", WASM): _delay_start_row,
    (
        "docs/controllers.md",
        ".venv/bin/slowstart reproduce satellite --cc examples/python/delay_start.py:DelayStart",
    ): _labelled_once,
    ("docs/metrics.md", f"{PLAN} --abc off"): _first_to_last("144.5"),
    ("docs/metrics.md", f"{PLAN} --abc on"): _first_to_last("106.9"),
    ("docs/startups.md", 0): _careful_resume,
    ("docs/sweeps.md", 0): _sweep_stores_only_when_told,
    (
        "docs/sweeps.md",
        ".venv/bin/slowstart report out/results.duckdb --out out/report.html",
    ): _written("out/report.html"),
    ("docs/scorecard.md", 0): _written("out/scorecard/scorecard.html"),
}


# --- the runner -----------------------------------------------------------------------------


def _console(block: Block, folder: Path) -> None:
    """`$ command` lines run, each in a fresh folder; the lines below are its output (stderr's
    lines, then stdout's)."""
    steps = re.split(r"^\$ ", block.text, flags=re.MULTILINE)[1:]
    for i, step in enumerate(steps):
        command, _, expected = step.partition("\n")
        ran = shell(command, sandbox(folder / f"console-{block.line}-{i}"))
        said = [x.rstrip() for x in (ran.stderr + ran.stdout).splitlines() if x.strip()]
        assert said == [x.rstrip() for x in expected.splitlines() if x.strip()], (
            f"{block.name}:{block.line}: {command}"
        )


def _toml(block: Block, first: dict[str, Any] | None) -> None:
    """A scenario loads; a sweep plan loads; a fragment (no duration) loads beside the page's
    first full scenario."""
    value = tomllib.loads(block.text)
    if "scenario" in value or "scenarios" in value:
        return
    if "duration" not in value:
        base = dict(first or {"duration": "10s"})
        for key, v in value.items():
            base[key] = [*base.get(key, []), *v] if isinstance(v, list) else v
        value = base
    load(value)


def _plan(block: Block, folder: Path) -> None:
    plan = folder / f"plan-{block.line}.toml"
    plan.write_text(block.text)
    load_plan(plan)


def run_page(page: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = sandbox(folder)
    monkeypatch.chdir(out)
    name = str(page.relative_to(ROOT))
    namespace: dict[str, Any] = {}
    first: dict[str, Any] | None = None
    python = 0
    for block in blocks(page):
        if block.lang not in RUNNABLE or block.not_run is not None:
            continue
        if block.lang == "sh":
            for command in commands(block.text):
                ran = shell_once(command, out)
                where = f"{name}:{block.line}: {command}"
                assert ran.returncode == 0, f"{where}\n{ran.stderr[-2000:]}"
                assert "warning:" not in ran.stderr, f"{where}\n{ran.stderr[-2000:]}"
                CHECKS.get((name, command), lambda *_: None)(ran, out)
        elif block.lang == "console":
            _console(block, folder)
        elif block.lang == "toml":
            if "scenario =" in block.text or "scenarios =" in block.text:
                _plan(block, folder)
            else:
                _toml(block, first)
                parsed = tomllib.loads(block.text)
                first = first or (parsed if "duration" in parsed else None)
        else:
            code = compile(block.text, f"{name}:{block.line}", "exec")
            exec(code, namespace)  # noqa: S102 - the page's own example
            CHECKS.get((name, python), lambda *_: None)(namespace, out)
            python += 1


def _runs(page: Path) -> bool:
    return any(b.lang in RUNNABLE and b.not_run is None for b in blocks(page))


# Pages that run the same commands, kept on one worker so that each runs once.
GROUPS = dict.fromkeys(("README.md", "getting-started.md", "controllers.md"), "docs-shared")


def _page_param(page: Path) -> Any:
    group = GROUPS.get(page.name)
    marks = [pytest.mark.xdist_group(group)] if group else []
    return pytest.param(page, marks=marks, id=str(page.relative_to(ROOT)))


@pytest.mark.parametrize("page", [_page_param(p) for p in PAGES if _runs(p)])
def test_every_example_on_the_page_runs_as_written(page: Path, tmp_path, monkeypatch):
    run_page(page, tmp_path / "page", monkeypatch)


def test_every_block_names_its_language_and_a_skipped_one_says_why():
    for page in PAGES:
        for b in blocks(page):
            assert b.lang in LANGUAGES, f"{b.name}:{b.line}: name its language {sorted(LANGUAGES)}"
            if b.not_run is not None:
                assert b.lang in RUNNABLE and b.not_run.strip(), f"{b.name}:{b.line}"


def test_every_check_is_of_an_example_on_its_page():
    for (name, key), _check in CHECKS.items():
        runnable = [b for b in blocks(ROOT / name) if b.not_run is None]
        if isinstance(key, int):
            assert key < sum(b.lang == "python" for b in runnable), (name, key)
        else:
            assert any(key in commands(b.text) for b in runnable if b.lang == "sh"), (name, key)


def test_the_generated_reference_parts_are_the_codes():
    """The pages hold what docs/hooks.py writes from the core, so the repository reads as the
    site does."""
    stale = [str(p.relative_to(ROOT)) for p in hooks.stale_pages()]
    assert not stale, f"run .venv/bin/python docs/hooks.py: {stale} hold older generated parts"


def test_the_scorecard_page_counts_the_suites_paths_and_runs():
    """scorecard.md: "410 runs (24 controllers on 13 paths, five seeds on the random-loss one,
    and the two incumbents alone)"."""
    text = (ROOT / "docs" / "scorecard.md").read_text()
    m = re.search(r"(\d+) runs \((\d+) controllers on (\d+) paths", text)
    assert m is not None
    runs, controllers, paths = map(int, m.groups())
    suite = load_suite()
    assert paths == len(suite.paths)
    cells = sum(len(p.seeds) for p in suite.paths)
    alone = sum(len(p.seeds) for p in suite.paths if p.incumbent is not None)
    assert runs == controllers * cells + alone
