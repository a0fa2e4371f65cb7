"""`slowstart report`: one self-contained page, checked in a real headless Chromium."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, chromium, cli, needs_browser
from slowstart.reproductions.reproduce import EXPERIMENTS, headers, run_experiment
from slowstart.reproductions.swarm import findings, run_study
from slowstart.running.sweeps import sweep

SMALL = {
    "name": "small",
    "duration": "20s",
    "path": {"rate": "10Mbps", "rtt": "40ms", "buffer": "4bdp"},
    "flow": [{"cc": "reno", "size": "200kB"}],
}
# Screenshots are kept here, beside the test output (and ignored by git).
SHOTS = ROOT / "out" / "test-report"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("report")
    store = tmp / "results.duckdb"
    run_experiment(EXPERIMENTS["web-initcwnd"], store=store)
    vary = {"flow.0.initcwnd": ["2", "10", "40"], "path.rtt": ["20ms", "80ms"]}
    sweep(SMALL, vary, seeds=[1, 2], jobs=1, store=store)
    # A small swarm study: six leechers of a 2 MB file, one seed, uplink buffers 2 and 10.
    study = run_study(
        "swarm-adsl", seeds=[1], buffers=(2, 10), set=["swarm.file=2MB"], leechers=6, store=store
    )
    (tmp / "findings.json").write_text(json.dumps([f.as_dict() for f in findings(study)]))
    done = cli("report", str(tmp), "--out", str(tmp / "report.html"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {tmp / 'report.html'}"
    return tmp / "report.html"


def test_the_page_holds_everything_and_links_nothing(page: Path):
    text = page.read_text()
    assert "web-initcwnd: A 17 kB page" in text
    for header in headers(EXPERIMENTS["web-initcwnd"]):  # the CLI's columns
        assert f"<th>{header}</th>" in text
    assert "verdict: ok when ours is within the tolerance" in text
    assert "sweep of small over flow.0.initcwnd, path.rtt" in text
    # The reproduction's figures, a plot, a heatmap and the swarm study's five.
    assert text.count('class="figure"') >= 9
    # Offline: no script or stylesheet from elsewhere.
    assert not re.search(r'<script[^>]+src=|<link[^>]+href="http', text)


def test_the_swarm_study_shows_its_findings_verdicts_and_figures(page: Path):
    from slowstart.reproductions.swarm_findings import FINDING_COLUMNS
    from slowstart.reproductions.swarm_study import TITLE

    text = page.read_text()
    section = text[text.index(f"<h2>swarm: {html.escape(TITLE)}</h2>") :]
    section = section[: section.find("<h2>", 4)] if "<h2>" in section[4:] else section
    assert "8 runs (8 settings x 1 seeds); per run the first 3 completions discarded" in section
    assert "".join(f"<th>{h}</th>" for h in FINDING_COLUMNS) in section
    # Every finding, its verdict as the study gives it (ok and off coloured).
    for f in json.loads((page.parent / "findings.json").read_text()):
        cls = f' class="{f["verdict"]}"' if f["verdict"] in ("ok", "off") else ""
        assert f"<td>{html.escape(f['label'])}</td>" in section, f["label"]
        assert f"<td>{html.escape(f['tolerance'])}</td><td{cls}>{f['verdict']}</td>" in section, f
    alts = re.findall(r'<img alt="(swarm-[a-z]+\.png)"', section)
    assert alts == [f"swarm-{n}.png" for n in ("rank", "cdf", "queues", "breakdown", "buffer")]


@needs_browser
def test_the_page_loads_without_errors_and_draws_every_figure_inchromium(page: Path):
    from PIL import Image

    url = page.as_uri()
    dom = chromium("--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    drawn = re.search(r'data-figures="(\d+)/(\d+)"', dom.stdout)
    assert drawn, "the page's check script ran"
    assert int(drawn.group(2)) >= 9 and drawn.group(1) == drawn.group(2), drawn.group(0)
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    errors = [line for line in console if re.search(r"error|uncaught", line, re.I)]
    assert not errors, errors

    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / "report.png"
    done = chromium(f"--screenshot={shot}", "--window-size=1280,6000", url)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    pixels = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert pixels.std() > 10, "the screenshot is not blank"
    # Not blank where the figures are: most 400-pixel bands of the page hold something drawn.
    bands = [pixels[y : y + 400] for y in range(0, pixels.shape[0] - 400, 400)]
    inked = [b for b in bands if (b < 200).mean() > 0.005]
    assert len(inked) >= 6, f"{len(inked)} of {len(bands)} bands hold ink"
