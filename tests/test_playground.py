"""The documentation's Playground (docs/playground.md): its settings are `--set` items and a
`--cc` the loader reads (settings.js under Node), and the built page, served and driven in
headless Chromium, runs the satellite scenario with two controllers and a TOML typed in its box,
and shows `slowstart run`'s numbers and lines. The engine in it, with the core's loader, is held
to the native engine byte for byte by crates/slowstart-web/tests."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.server
import json
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import BROWSER, ROOT, cli, needs_browser
from slowstart.loading.scenario import load
from slowstart.reports import playground

NODE = shutil.which("node") or shutil.which("nodejs")
SETTINGS = ROOT / "docs" / "playground" / "settings.js"

# Each slider and the controller, alone and together, as the page writes them: the `--set`
# items and `--cc` the engine's loader reads, and `slowstart run` takes.
CASES = [
    ("satellite", {"rate_bps": 100_000_000}, ["path.rate=100000000bps"], None),
    ("satellite", {"rtt_ns": 251_000_000}, ["path.rtt=251ms"], None),
    ("satellite", {"buffer_bdp": 0.25}, ["path.buffer=0.25bdp"], None),
    ("satellite", {"loss": 0.002, "initcwnd": 20}, ["path.loss=0.002", "flow.*.initcwnd=20"], None),
    (
        "ledbat-alone",
        {"rate_bps": 3_330_000, "rtt_ns": 7_000_000},
        ["path.rate=3330000bps", "path.rtt=7ms"],
        None,
    ),
    ("careful-resume", {"rate_bps": 50_000_000}, ["path.rate=50000000bps"], None),
    (
        "net100-lss",
        {"rtt_ns": 30_000_000, "buffer_bdp": 3},
        ["path.rtt=30ms", "path.buffer=3bdp"],
        None,
    ),
    (
        "net100-parallel",
        {"initcwnd": 4, "cc": {"name": "cubic", "params": {"beta": 0.5}}},
        ["flow.*.initcwnd=4"],
        "cubic:beta=0.5",
    ),
    (
        "rapid-start",
        {"cc": {"name": "reno", "params": {"slow_start": "hystart++"}}},
        [],
        "reno:slow_start=hystart++",
    ),
    # The general form has no [path]: a path slider gives nothing.
    ("dctcp-fig17", {"rate_bps": 1_000_000, "initcwnd": 4}, ["flow.*.initcwnd=4"], None),
]


def node(script: str, *args: str) -> str:
    done = subprocess.run(
        [NODE, "-e", script, *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@functools.cache
def scenarios() -> dict[str, dict]:
    return {s["name"]: s for s in playground.data()["scenarios"]}


@pytest.mark.skipif(NODE is None, reason="no node (Debian's nodejs) on this machine")
def test_the_settings_are_the_set_items_and_cc_the_loader_reads_and_the_command_gives():
    jobs = [{"scenario": scenarios()[name], "settings": s} for name, s, _, _ in CASES]
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "jobs.json").write_text(json.dumps(jobs))
        out = json.loads(
            node(
                "const S = require(process.argv[1]); const jobs = require(process.argv[2]);"
                "console.log(JSON.stringify(jobs.map(j => ({"
                "sets: S.sets(j.scenario, j.settings),"
                "request: S.request(j.scenario, j.settings, j.scenario.toml),"
                "command: S.command(j.scenario, j.settings)}))))",
                str(SETTINGS),
                str(Path(folder) / "jobs.json"),
            )
        )
    for (name, _, sets, cc), made in zip(CASES, out, strict=True):
        file = ROOT / "scenarios" / f"{name}.toml"
        assert made["sets"] == sets, name
        # What the engine gets: the file's text, the items, the controller and the file's name.
        request = json.loads(made["request"])
        assert request == {"toml": file.read_text(), "set": sets, "cc": cc, "name": name}
        # The loader takes them and they change the scenario.
        expected = load(file, set=sets, cc=cc)
        raw = tomllib.loads(request["toml"]) | {"name": name}
        assert load(raw, set=request["set"], cc=request["cc"]) == expected, name
        assert expected != load(file), f"{name}: the settings changed nothing"
        # The command says the same, as a shell splits it.
        words = ["slowstart", "run", name, *(["--cc", cc] if cc else [])]
        assert shlex.split(made["command"]) == words + [w for s in sets for w in ("--set", s)]


# --- the built page in headless Chromium ---------------------------------------------------


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """`folder` over HTTP on localhost (a worker and a fetch need a served page)."""
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *_: object) -> None:
        pass


# Waits until the page's run has ended, then reads what it shows.
_READ = """new Promise((resolve) => {
  const read = () => {
    const s = document.getElementById("pg-status");
    if (!["done", "error"].includes(s.dataset.state)) return setTimeout(read, 100);
    resolve({
      state: s.dataset.state, status: s.textContent, ms: JSON.parse(s.dataset.ms || "[]"),
      totalMs: Number(s.dataset.totalMs),
      error: document.getElementById("pg-error").textContent,
      summaries: [...document.querySelectorAll(".pg-summary-json")].map(
        (p) => [p.dataset.run, p.textContent]),
      cells: [...document.querySelectorAll("#pg-table td[data-key]")].map(
        (c) => [c.parentElement.dataset.run, c.dataset.key, c.dataset.value, c.textContent]),
      figures: [...document.querySelectorAll(".pg-figure")].map(
        (f) => f.querySelectorAll("svg.main-svg path.js-line").length),
      command: document.getElementById("pg-command").textContent,
    });
  };
  read();
})"""


async def _drive(port: int, url: str, timeout: float, read: str) -> tuple[dict, list[str]]:
    from tornado.websocket import websocket_connect

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as listing:
        targets = json.load(listing)
    page = next(t for t in targets if t["type"] == "page")
    ws = await websocket_connect(page["webSocketDebuggerUrl"], max_message_size=1 << 26)
    errors: list[str] = []
    ids = iter(range(1, 1000))

    seen: set[str] = set()

    async def message() -> dict:
        m = json.loads(await ws.read_message())
        seen.add(m.get("method", ""))
        if m.get("method") == "Runtime.exceptionThrown":
            errors.append(m["params"]["exceptionDetails"]["text"])
        elif m.get("method") == "Runtime.consoleAPICalled" and m["params"]["type"] == "error":
            errors.append(str(m["params"]["args"]))
        return m

    async def call(method: str, **params: object) -> dict:
        n = next(ids)
        ws.write_message(json.dumps({"id": n, "method": method, "params": params}))
        while True:
            m = await message()
            if m.get("id") == n:
                return m

    try:
        await call("Runtime.enable")
        await call("Page.enable")
        await call("Page.navigate", url=url)
        while "Page.loadEventFired" not in seen:  # the page's own scripts have run
            await asyncio.wait_for(message(), timeout)
        got = await asyncio.wait_for(
            call("Runtime.evaluate", expression=read, awaitPromise=True, returnByValue=True),
            timeout,
        )
        assert "exceptionDetails" not in got["result"], got["result"]
    finally:
        # Closed both ways (the browser answers), so no socket is left for the collector.
        ws.close()
        with contextlib.suppress(asyncio.TimeoutError):
            while await asyncio.wait_for(ws.read_message(), 5) is not None:
                pass
    return got["result"]["result"]["value"], errors


def drive(url: str, timeout: float = 120, read: str = _READ) -> tuple[dict, list[str]]:
    """Open `url` in headless Chromium, then wait for `read`'s promise, by default the page's
    run and what it shows (by the DevTools protocol: --dump-dom's virtual time does not wait
    for a worker)."""
    assert BROWSER is not None
    # Chromium's helpers may still write the profile for a moment after it is stopped.
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        p = subprocess.Popen(
            [BROWSER, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert p.stderr is not None
            for line in p.stderr:
                m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
                if m:
                    break
            else:
                raise AssertionError("chromium did not open its DevTools port")
            return asyncio.run(_drive(int(m.group(1)), url, timeout, read))
        finally:
            p.terminate()
            p.wait(timeout=30)


@needs_browser
def test_the_page_runs_satellite_with_two_controllers_and_shows_the_clis_numbers(
    site: Path,
):
    with served(site) as base:
        shown, errors = drive(f"{base}/playground/?scenario=satellite&cc=reno,cubic")
    assert shown["state"] == "done", (shown["status"], shown["error"])
    assert not errors, errors
    # Every figure drawn, a line per run at least (cwnd and in flight: two per run).
    assert shown["figures"][0] >= 4 and min(shown["figures"]) >= 2, shown["figures"]
    assert [run for run, _ in shown["summaries"]] == ["reno", "cubic"]
    assert shown["command"].splitlines() == [
        "slowstart run satellite --cc 'reno' --json",
        "slowstart run satellite --cc 'cubic' --json",
    ]
    for run, text in shown["summaries"]:
        ran = cli("run", "satellite", "--cc", run, "--json", "--quiet")
        assert ran.returncode == 0, ran.stderr
        expected = json.loads(ran.stdout)
        del expected["wall_s"]
        assert json.loads(text) == expected, run
        cells = [c for c in shown["cells"] if c[0] == run]
        assert len(cells) == 8
        flow = expected["flows"][0]
        for _, key, value, _ in cells:
            assert json.loads(value) == flow[key], (run, key)
        completion = next(c[3] for c in cells if c[1] == "completion_s")
        assert completion == f"{flow['completion_s']:.3f}"
    print(f"satellite in the browser: {shown['ms']} ms")  # docs/performance.md records it


@needs_browser
def test_a_bad_config_gets_the_cores_one_line(site: Path):
    with served(site) as base:
        shown, errors = drive(f"{base}/playground/?scenario=satellite&cc=cubic:beta=2")
    assert shown["state"] == "error"
    assert shown["error"] == (
        "flow.0.cc cubic: parameter 'beta' = 2 is not accepted (accepted: 0.1..=0.95)"
    )
    assert not errors, errors


def _own(toml: str) -> str:
    """A script that waits for the page's first run, types `toml` into the box, runs it and
    then reads the page as _READ does."""
    return f"""new Promise((resolve) => {{
  const s = document.getElementById("pg-status");
  const first = () => {{
    if (!["done", "error"].includes(s.dataset.state)) return setTimeout(first, 100);
    const box = document.getElementById("pg-toml");
    box.value = {json.dumps(toml)};
    box.dispatchEvent(new Event("input"));
    document.getElementById("pg-run-toml").click();
    resolve(null);
  }};
  first();
}}).then(() => {_READ})"""


OWN = """duration = "5s"
[path]
rate = "20Mbps"
rtt = "30ms"
buffer = "0.5bdp"
[[flow]]
cc = "cubic"
size = "2MB"
"""


@needs_browser
def test_a_toml_typed_in_the_box_runs_as_slowstart_run_runs_it(site: Path, tmp_path: Path):
    with served(site) as base:
        shown, errors = drive(f"{base}/playground/?scenario=satellite", read=_own(OWN))
    assert shown["state"] == "done", (shown["status"], shown["error"])
    assert not errors, errors
    # The command names the box's text as saved, my.toml; run so, it gives the page's numbers.
    assert shown["command"] == "slowstart run my.toml --json"
    (tmp_path / "my.toml").write_text(OWN)
    ran = cli("run", str(tmp_path / "my.toml"), "--json", "--quiet")
    assert ran.returncode == 0, ran.stderr
    expected = json.loads(ran.stdout)
    del expected["wall_s"]
    [(_, text)] = shown["summaries"]
    assert json.loads(text) == expected
    assert expected["flows"][0]["cc"] == "cubic"


@needs_browser
def test_a_bad_value_in_the_box_gets_the_clis_line(site: Path, tmp_path: Path):
    bad = OWN.replace('rate = "20Mbps"', 'rate = "20 furlongs"')
    with served(site) as base:
        shown, errors = drive(f"{base}/playground/?scenario=satellite", read=_own(bad))
    assert shown["state"] == "error"
    assert not errors, errors
    (tmp_path / "my.toml").write_text(bad)
    ran = cli("run", str(tmp_path / "my.toml"))
    assert ran.returncode == 2
    assert ran.stderr.strip() == f"error: {shown['error']}"
    assert shown["error"].startswith('path.rate: expected a rate such as "250Mbps"')


# Waits for the run's progress bar to move, presses Stop, then reads the page.
_STOP = """new Promise((resolve) => {
  const bar = document.getElementById("pg-progress");
  const wait = () => {
    if (!(bar.value > 0)) return setTimeout(wait, 50);
    const moved = bar.value;
    document.getElementById("pg-stop").click();
    const s = document.getElementById("pg-status");
    resolve({moved, state: s.dataset.state,
             stopDisabled: document.getElementById("pg-stop").disabled,
             error: document.getElementById("pg-error").hidden});
  };
  wait();
})"""


@needs_browser
def test_a_long_run_shows_its_progress_and_stops(site: Path):
    # Floyd's early loss runs 600 simulated seconds (7.6 s natively, 78 M events).
    with served(site) as base:
        shown, errors = drive(f"{base}/playground/?scenario=lfn-early-loss", read=_STOP)
    assert 0 < shown["moved"] < 1
    assert shown == {**shown, "state": "stopped", "stopDisabled": True, "error": True}
    assert not errors, errors


# Waits for a reproduction page's live figure, then reads its table and figures.
_LIVE = """new Promise((resolve) => {
  const read = () => {
    const s = document.querySelector(".pg-live-status");
    if (!s || !["done", "error"].includes(s.dataset.state)) return setTimeout(read, 100);
    resolve({state: s.dataset.state, status: s.textContent,
      error: document.querySelector(".pg-live .pg-error").textContent,
      rows: [...document.querySelectorAll(".pg-live-table tbody tr")].map(
        (r) => [r.cells[0].textContent, JSON.parse(r.dataset.ours), r.cells[3].textContent]),
      figures: [...document.querySelectorAll(".pg-live .pg-figure")].map(
        (f) => f.querySelectorAll("svg.main-svg").length)});
  };
  read();
})"""


@needs_browser
def test_a_reproductions_live_figure_shows_reproduces_values(site: Path, tmp_path: Path):
    with served(site) as base:
        shown, errors = drive(f"{base}/reproductions/web-initcwnd/", read=_LIVE)
    assert shown["state"] == "done", (shown["status"], shown["error"])
    assert not errors, errors
    assert all(n > 0 for n in shown["figures"]) and len(shown["figures"]) == 2
    ran = cli("reproduce", "web-initcwnd", "--json", "--quiet", "--out", str(tmp_path))
    assert ran.returncode == 0, ran.stderr
    rows = {r["label"]: r for r in json.loads(ran.stdout)["web-initcwnd"]["rows"]}
    # Every row the page runs (those measured from a summary value), as reproduce has it.
    assert len(shown["rows"]) == 3
    for label, ours, verdict in shown["rows"]:
        assert (ours, verdict) == (rows[label]["ours"], rows[label]["verdict"]), label
