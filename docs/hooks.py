"""MkDocs hooks: the part of a page between `<!-- generated: NAME -->` and
`<!-- end generated -->` is what slowstart.loading.reference writes for NAME from the core
(scenario keys, algorithms, queue disciplines), so those pages cannot drift from the code.

The pages hold what was generated last, so the repository reads as the site does;
`.venv/bin/python docs/hooks.py` writes it again (tests/test_doc_examples.py fails when a page
holds something else). After the build, the Playground's engine (crates/slowstart-web, `make
web`), its data (slowstart.reports.playground: the scenarios, and the reproductions its live
figures run) and Plotly (the report's plotting library, from its PyPI package) are written
beside its page."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import plotly.offline

from slowstart.loading.reference import GENERATED
from slowstart.reports import playground

_PART = re.compile(
    r"^<!-- generated: ([a-z-]+) -->\n.*?^<!-- end generated -->$", re.MULTILINE | re.DOTALL
)
DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
MODULE = ROOT / "target" / "wasm32-unknown-unknown" / "web" / "slowstart_web.wasm"


def generated(markdown: str) -> str:
    """`markdown` with every generated part written afresh."""

    def generate(m: re.Match[str]) -> str:
        if m.group(1) not in GENERATED:
            raise ValueError(f"no generated part named {m.group(1)!r}: {sorted(GENERATED)}")
        body = GENERATED[m.group(1)]().strip("\n")
        return f"<!-- generated: {m.group(1)} -->\n{body}\n<!-- end generated -->"

    return _PART.sub(generate, markdown)


def on_page_markdown(markdown: str, **_: object) -> str:
    return generated(markdown)


def on_post_build(config: dict, **_: object) -> None:
    if not MODULE.exists():
        raise FileNotFoundError(f"{MODULE}: the Playground's engine is not built (make web)")
    out = Path(config["site_dir"]) / "playground"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(MODULE, out / "slowstart_web.wasm")
    (out / "plotly.min.js").write_text(plotly.offline.get_plotlyjs(), "utf-8")
    (out / "data.json").write_text(json.dumps(playground.data()), "utf-8")
    (out / "experiments.json").write_text(json.dumps(playground.experiments()), "utf-8")


def stale_pages() -> list[Path]:
    """The pages whose generated parts are not what the code writes now."""
    return [p for p in sorted(DOCS.rglob("*.md")) if generated(p.read_text()) != p.read_text()]


if __name__ == "__main__":
    for page in stale_pages():
        page.write_text(generated(page.read_text()))
        print(f"wrote {page}", file=sys.stderr)
