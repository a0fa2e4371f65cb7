"""`make figures`: the documentation's figures and reproduction tables, made from fresh runs.

Every picture a page shows (`![...](img/NAME.png)` or `../img/NAME.png`) is made by a command
here and copied into docs/img/; every reproduction page's verdict table is replaced by what
`slowstart reproduce NAME --markdown` prints now. Nothing in docs/img/ is edited by hand.

    .venv/bin/python docs/make_figures.py              # all but the long or root-only ones
    .venv/bin/python docs/make_figures.py ledbat blast  # these reproductions only
    .venv/bin/python docs/make_figures.py swarm atou    # 10-30 min; atou's UDP part needs root

`swarm` runs 130 swarms (10-30 minutes on two cores) and `atou` runs its UDP part through
network namespaces when it has root, so neither runs unless named.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
OUT = ROOT / "out" / "figures"
SLOWSTART = str(ROOT / ".venv" / "bin" / "slowstart")
# Run only when named (see the docstring).
ON_REQUEST = ("swarm", "atou")
# Pictures that are not a reproduction's: the command, and the file it writes under OUT.
OTHERS = {
    "worked-example.png": (
        ["run", "scenarios/satellite.toml", "--set", "flow.0.initcwnd=20", "--quiet"]
        + ["--out", str(OUT / "worked-example")],
        OUT / "worked-example" / "cwnd.png",
    ),
    # A Python controller of one's own on the satellite path (README, docs/controllers.md).
    "own-controller.png": (
        ["run", "scenarios/satellite.toml", "--quiet", "--cc"]
        + ["examples/python/delay_start.py:DelayStart:rise=0.25"]
        + ["--out", str(OUT / "own-controller")],
        OUT / "own-controller" / "cwnd.png",
    ),
    # HyStart, HyStart++ and SEARCH on every bulk path (docs/reproductions/startup-rules.md).
    "startup-rules-sweep.png": (
        ["sweep", "net100-lss", "net100-vegas-gamma", "real-20mbps", "satellite"]
        + ["satellite-picoquic-test", "--metric", "slow_start_exit_s", "--vary"]
        + ["flow.0.cc=cubic:slow_start=hystart,cubic:slow_start=hystart++,cubic:slow_start=search"]
        + ["--store", str(OUT / "sweep.duckdb"), "--out", str(OUT / "startup-rules")],
        OUT / "startup-rules" / "sweep.png",
    ),
}
_IMAGE = re.compile(r"!\[[^\]]*\]\((?:\.\./)?img/([\w.-]+\.png)\)")


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md"))


def wanted(page: Path) -> list[str]:
    return _IMAGE.findall(page.read_text("utf-8"))


def replace_tables(page: Path, printed: str) -> bool:
    """Put each table `--markdown` printed (found by its header line) in place of the page's
    table under the same header; False if the page has none."""
    text = page.read_text("utf-8")
    lines = printed.strip().splitlines()
    table = [line for line in lines if line.startswith("|")]
    if not table or table[0] not in text:
        return False
    start = text.index(table[0])
    end = start
    while end < len(text) and text[end] == "|":
        end = text.find("\n", end) + 1 or len(text)
    page.write_text(text[:start] + "\n".join(table) + "\n" + text[end:], "utf-8")
    return True


def reproduce(name: str) -> None:
    from slowstart.reproductions.links_study import SHARED_TRACES

    if name == "links" and not SHARED_TRACES.is_dir():
        # Without the recorded LTE traces its figure would lose two of its five links.
        print(f"links: skipped, {SHARED_TRACES} is absent (its LTE rows need it)")
        return
    folder = OUT / "reproduce"
    store = folder / "results.duckdb"
    cmd = [SLOWSTART, "reproduce", name, "--markdown", "--quiet", "--rerun"]
    cmd += ["--out", str(folder), "--store", str(store)]
    print("$", " ".join(cmd[1:]), flush=True)
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{name}: {done.stderr.strip()}")
    page = DOCS / "reproductions" / f"{name}.md"
    if done.stdout.strip() and not replace_tables(page, done.stdout):
        print(f"  {page.relative_to(ROOT)}: no table under the printed header; left as it is")
    for picture in wanted(page):
        made = folder / picture
        if made.exists():
            shutil.copyfile(made, DOCS / "img" / picture)
            print(f"  docs/img/{picture}")


def main(names: list[str]) -> None:
    sys.path.insert(0, str(ROOT / "python"))
    from slowstart.reproductions.reproduce import EXPERIMENTS

    OUT.mkdir(parents=True, exist_ok=True)
    chosen = names or [n for n in EXPERIMENTS if n not in ON_REQUEST]
    unknown = [n for n in chosen if n not in EXPERIMENTS and n not in OTHERS]
    if unknown:
        sys.exit(f"unknown: {', '.join(unknown)} (reproductions: {', '.join(EXPERIMENTS)})")
    for picture, (args, made) in OTHERS.items():
        if not names or picture in names:
            print("$ slowstart", " ".join(args), flush=True)
            subprocess.run([SLOWSTART, *args], cwd=ROOT, check=True, capture_output=True)
            shutil.copyfile(made, DOCS / "img" / picture)
    for name in chosen:
        if name in EXPERIMENTS:
            reproduce(name)
    shown = {p for page in pages() for p in wanted(page)}
    missing = sorted(p for p in shown if not (DOCS / "img" / p).exists())
    if missing:
        sys.exit(f"pictures a page shows that no command made: {', '.join(missing)}")


if __name__ == "__main__":
    main(sys.argv[1:])
