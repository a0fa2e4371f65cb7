"""MkDocs hooks: a line `<!-- generated: NAME -->` in a page is replaced by what
slowstart.loading.reference writes for NAME from the core (scenario keys, algorithms, queue
disciplines), so those pages cannot drift from the code. After the build, the Playground's
engine (crates/slowstart-web, `make web`), its data (slowstart.reports.playground: the
scenarios, and the reproductions its live figures run) and Plotly (the report's plotting
library, from its PyPI package) are written beside its page."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import plotly.offline

from slowstart.loading.reference import GENERATED
from slowstart.reports import playground

_MARK = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)
ROOT = Path(__file__).resolve().parent.parent
MODULE = ROOT / "target" / "wasm32-unknown-unknown" / "web" / "slowstart_web.wasm"


def on_page_markdown(markdown: str, **_: object) -> str:
    def generate(m: re.Match[str]) -> str:
        if m.group(1) not in GENERATED:
            raise ValueError(f"no generated part named {m.group(1)!r}: {sorted(GENERATED)}")
        return GENERATED[m.group(1)]()

    return _MARK.sub(generate, markdown)


def on_post_build(config: dict, **_: object) -> None:
    if not MODULE.exists():
        raise FileNotFoundError(f"{MODULE}: the Playground's engine is not built (make web)")
    out = Path(config["site_dir"]) / "playground"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(MODULE, out / "slowstart_web.wasm")
    (out / "plotly.min.js").write_text(plotly.offline.get_plotlyjs(), "utf-8")
    (out / "data.json").write_text(json.dumps(playground.data()), "utf-8")
    (out / "experiments.json").write_text(json.dumps(playground.experiments()), "utf-8")
