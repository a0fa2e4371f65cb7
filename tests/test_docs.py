"""The documentation site (mkdocs.yml, docs/): its generated references, its build, and three
of its pages opened in a real headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, chromium, needs_browser
from slowstart.loading import reference
from slowstart.loading.scenario import load

SHOTS = ROOT / "out" / "test-docs"


@pytest.mark.parametrize("table", reference.TABLES, ids=lambda t: t.at or "top")
def test_each_documented_unit_is_one_the_loader_takes(table: reference.Table):
    """A key documented as a time parses "7ms", a rate "7Mbps", a size "7kB", ...: a unit
    written wrong on the reference page fails here. (The value may then break a rule of the
    core's, such as min_rto <= max_rto: that message is about the value, not its unit.)"""
    from slowstart.units import ScenarioError

    for key in table.keys:
        sample = reference.UNITS.get(table.unit(key), (None,))[0]
        if sample is None:
            continue
        at = f"{table.at}.{key}" if table.at else key
        try:
            load(table.base, set=[f"{at}={json.dumps(sample)}"])
        except ScenarioError as e:
            message = str(e)
            assert not message.startswith(f"{at}: expected"), message
            assert "is not a whole number" not in message, message


def test_each_key_is_listed_with_the_cores_unit_and_meaning():
    """The page's unit and meaning of a key are keys.rs's (`cargo test -p slowstart-config
    keys` fails on a key without a meaning)."""
    text = reference.scenario_keys()
    for table in reference.TABLES:
        for key in table.keys:
            unit, meaning = table.unit(key).replace("_", " "), table.meaning(key)
            assert meaning, (table.title, key)
            assert re.search(rf"\| `{key}` \| {unit} \|[^\n]*\| {re.escape(meaning)} \|", text)
    assert "| `reverse_delay` | time |  | 0s to 3600s | the reverse direction's delay " in text


def test_bounds_are_the_cores_messages():
    text = reference.scenario_keys()
    # config.rs: mss in 1..=65000, delays up to an hour, durations up to 10^9 s.
    assert "| `mss` | positive | `1460` | 1 to 65 000 |" in text
    assert "| `rtt` | time |  | 0s to 3600s |" in text
    assert "| `duration` | time |  | 1ns to 1000000000s |" in text
    # A default the core spells otherwise is written as a scenario writes it.
    assert '| `population` | word | `"50-50"` |' in text
    queues = reference.queues()
    assert "| `flows` | `1024` | 1 to 65 536 |" in queues


def test_the_slow_start_rules_parameters_are_listed_once_with_each_default_rule():
    text = reference.algorithms()
    cubic = text.split("## `cubic`", 1)[1].split("## `", 1)[0]
    assert "Slow start: `hystart` by default" in cubic
    assert "| `c` |" in cubic  # its own parameters stay with it
    assert text.count("| `max_ssthresh` |") == 1
    assert text.index("| `max_ssthresh` |") > text.index("## Slow-start rules")


def _text(page: Path) -> str:
    return re.sub(r"<[^>]+>", " ", page.read_text("utf-8"))


def test_the_generated_pages_hold_every_key_algorithm_and_discipline(site: Path):
    from slowstart.loading.defaults import _core_defaults

    keys = (site / "reference" / "scenario-keys" / "index.html").read_text("utf-8")
    for table in reference.TABLES:
        for key in table.keys:
            assert f"<code>{key}</code>" in keys, (table.title, key)
    algorithms = (site / "reference" / "algorithms" / "index.html").read_text("utf-8")
    for a in reference._algorithms():
        assert f"<code>{a['name']}</code>" in algorithms, a["name"]
        for p in a["params"]:
            assert f"<code>{p['name']}</code>" in algorithms, (a["name"], p["name"])
    queues = (site / "reference" / "queues" / "index.html").read_text("utf-8")
    for kind in _core_defaults()["queue"]:
        assert f"<code>{kind}</code>" in queues, kind
    # The API page rendered the docstrings.
    api = _text(site / "reference" / "api" / "index.html")
    assert "Load a scenario (TOML path or dict), apply overrides, run it." in api


def test_the_site_loads_nothing_from_elsewhere(site: Path):
    """No web font, script, stylesheet or picture from another host; and no diagram that
    would make Material or the notebook template fetch mermaid."""
    external = re.compile(r'<(?:script|link|img|iframe|source)\b[^>]*(?:src|href)="(?:https?:)?//')
    for page in site.rglob("*.html"):
        text = page.read_text("utf-8")
        assert not external.search(text), page
        assert "fonts.googleapis" not in text, page
        assert 'class="mermaid' not in text and "jp-Mermaid" not in text.split("<script")[0]
    for css in site.rglob("*.css"):
        assert not re.search(r"@import\s+url\(\s*['\"]?https?:", css.read_text("utf-8")), css


# Counts a page's figures that the browser drew (loaded, with a size), once it has loaded.
_CHECK = """<script>
addEventListener("load", () => {
  const imgs = [...document.querySelectorAll("article img")];
  const drawn = imgs.filter((i) => i.complete && i.naturalWidth > 0).length;
  document.body.dataset.figures = drawn + "/" + imgs.length;
});
</script>"""


@needs_browser
@pytest.mark.parametrize(
    ("page", "figures"),
    [("index.html", 1), ("reproductions/ledbat/index.html", 2), ("tutorial/index.html", 2)],
)
def test_a_page_renders_with_its_figures_inchromium(site: Path, tmp_path: Path, page, figures):
    from PIL import Image

    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    target = copy / page
    target.write_text(target.read_text("utf-8").replace("</body>", _CHECK + "</body>"), "utf-8")
    dom = chromium("--dump-dom", target.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    drawn = re.search(r'data-figures="(\d+)/(\d+)"', dom.stdout)
    assert drawn, "the check script ran"
    assert int(drawn.group(2)) >= figures and drawn.group(1) == drawn.group(2), drawn.group(0)
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if re.search(r"error|uncaught", line, re.I)], console

    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / (page.replace("/", "-").removesuffix(".html") + ".png")
    done = chromium(f"--screenshot={shot}", "--window-size=1280,2400", target.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    pixels = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert pixels.std() > 10, "the screenshot is not blank"
