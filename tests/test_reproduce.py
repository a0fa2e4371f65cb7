import json
import re

import pytest

from conftest import cli
from slowstart.loading.scenario import load
from slowstart.paths import scenario_path
from slowstart.reproductions.reproduce import (
    EXPERIMENTS,
    Experiment,
    Row,
    Variant,
    format_table,
    run_experiment,
    runnable,
)


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_every_variant_loads(name):
    exp = EXPERIMENTS[name]
    assert exp.name == name and exp.variants
    for v in exp.variants:
        if runnable(v) is not None:
            continue  # pending or unavailable here: reported as such by run_experiment
        config = load(scenario_path(v.scenario or exp.scenario), set=[*exp.common, *v.overrides])
        assert exp.flow < len(config["flows"])


def test_floyd_variants_are_the_four_standard_rows():
    exp = EXPERIMENTS["floyd"]
    configs = [
        load(scenario_path(exp.scenario), set=[*exp.common, *v.overrides])["flows"][0]
        for v in exp.variants
    ]
    assert [(c["delayed_ack"], c["mss"]) for c in configs] == [
        (False, 1460),
        (True, 1460),
        (False, 8960),
        (True, 8960),
    ]
    assert {c["max_window_bytes"] for c in configs} == {5_110_000}
    assert not any(c["abc"] for c in configs)
    assert [v.published for v in exp.variants] == [284, 577, 47, 91]
    assert exp.metric == "time_to_window_cap_s" and exp.tolerance == 0.10


@pytest.mark.parametrize(
    ("ours", "rel", "verdict"),
    [(284.0, 0.0, "ok"), (312.4, 0.1, "ok"), (313.0, 0.1021, "off"), (250.0, -0.1197, "off")],
)
def test_row_verdict(ours, rel, verdict):
    row = Row("x", 284, ours, 0.10)
    assert row.rel_diff == pytest.approx(rel, abs=1e-4)
    assert row.verdict == verdict


def test_unreached_metric():
    row = Row("x", 10, None, 0.1)
    assert row.rel_diff is None and row.verdict == "not reached"
    assert row.as_dict()["ours"] is None


TINY = Experiment(
    name="tiny",
    title="satellite, first seconds",
    source="test",
    scenario="satellite",
    metric="slow_start_exit_s",
    unit="s",
    tolerance=0.5,
    common=("duration=12s",),
    variants=(
        Variant("initcwnd 10", ("flow.0.initcwnd=10",), 9.0),
        Variant("initcwnd 40", ("flow.0.initcwnd=40",), 1.0),
    ),
)


def test_run_experiment_reports_the_summary_metric_and_plots(tmp_path):
    rows, written = run_experiment(TINY, tmp_path)
    assert [r.label for r in rows] == ["initcwnd 10", "initcwnd 40"]
    for r, v in zip(rows, TINY.variants, strict=True):
        assert r.published == v.published
    # A larger initial window leaves slow start sooner.
    assert rows[1].ours < rows[0].ours
    assert rows[1].verdict == "off"
    # What it judges (ours against published), then the cwnd overlay.
    assert written == [tmp_path / "tiny-verdicts.png", tmp_path / "tiny-cwnd.png"]
    assert all(p.stat().st_size > 10_000 for p in written)
    table = format_table(TINY, rows)
    ok = sum(r.verdict == "ok" for r in rows)
    assert "initcwnd 40" in table and f"{ok}/2 within ±50%" in table


@pytest.mark.slow
def test_floyd_reproduces_within_tolerance(tmp_path):
    proc = cli("reproduce", "floyd", "--json", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["floyd"]
    assert [r["verdict"] for r in report["rows"]] == ["ok"] * 4, report["rows"]
    assert (tmp_path / "floyd-cwnd.png").exists()


def test_the_reproductions_page_states_the_verdict_rule_the_cli_applies():
    from conftest import ROOT
    from slowstart.reproductions.reproduce import VERDICT_RULE

    page = " ".join(
        line.removeprefix("> ").strip()
        for line in (ROOT / "docs/reproductions/index.md").read_text().splitlines()
        if line.startswith("> ")
    )
    assert VERDICT_RULE in page


# Reproductions whose page has no verdict table: links (nothing published: its table is the
# study's own) and swarm (its findings table, from `reproduce swarm`'s 130 runs).
NO_VERDICT_TABLE = ("links", "swarm")
# Reproductions cheap enough (a few seconds each) to run again at every test and compare with
# their page, cell for cell; the others' pages are checked against their data and the rule.
FRESH = ("bittorrent", "web-initcwnd", "lss", "blast", "parallel", "vegas-gamma", "ledbat")


def _page_table(name: str) -> list[str]:
    """The lines of the verdict table on docs/reproductions/NAME.md (the header
    `markdown_table` writes, then its rows)."""
    from conftest import ROOT
    from slowstart.reproductions.reproduce import headers

    lines = (ROOT / "docs" / "reproductions" / f"{name}.md").read_text().splitlines()
    header = "| " + " | ".join(headers(EXPERIMENTS[name])) + " |"
    assert lines.count(header) == 1, f"docs/reproductions/{name}.md: one verdict table"
    start = lines.index(header)
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start:end]


def _page_verdict_tables() -> dict[str, list[list[str]]]:
    """Per reproduction, the rows of its page's verdict table, as cells."""
    return {
        name: [
            [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            for line in _page_table(name)[2:]
        ]
        for name in EXPERIMENTS
        if name not in NO_VERDICT_TABLE
    }


def _page_row(exp: Experiment, cells: list[str]) -> Row | None:
    """The Row a page's line stands for: the published value, bound and unit from the
    experiment's own data (found by label), ours as the page prints it; None for a row its
    runner makes (a ratio of two variants), which only a fresh run checks."""
    from slowstart.reproductions.atou import STRETCH

    label, _published, ours, _diff, verdict = cells
    by_label = {v.label: v for v in exp.variants}
    if exp.runner is not None and label not in by_label:
        if not label.startswith("stretch"):
            return None
        spec = (STRETCH, "=", None)  # atou: the stretch is judged
    else:
        assert label in by_label, f"page {exp.name}: no variant {label!r} in reproduce.py"
        v = by_label[label]
        spec = (v.published, v.bound, v.unit)
    value = None if ours == "-" else float(ours.split()[0])
    pending = verdict.removeprefix("pending: ") if verdict.startswith("pending: ") else None
    return Row(label, spec[0], value, exp.tolerance, spec[1], spec[2], pending)


def test_every_reproduction_has_a_page_in_the_nav():
    from conftest import ROOT

    nav = (ROOT / "mkdocs.yml").read_text()
    for name in EXPERIMENTS:
        assert (ROOT / "docs" / "reproductions" / f"{name}.md").exists(), name
        assert f"reproductions/{name}.md" in nav, name


def test_the_pages_verdict_tables_follow_the_rule_and_the_published_values():
    from slowstart.reproductions.reproduce import cells

    for name, rows in _page_verdict_tables().items():
        exp = EXPERIMENTS[name]
        assert rows, f"page {name}: an empty verdict table"
        for shown in rows:
            row = _page_row(exp, shown)
            if row is None:
                continue
            expected = cells(exp, row)
            # Published, ours and verdict exactly as the CLI prints them; the difference as
            # the CLI prints it for some value that rounds to ours as printed.
            assert [shown[i] for i in (0, 1, 2, 4)] == [expected[i] for i in (0, 1, 2, 4)], name
            if expected[3] == "-":
                assert shown[3] == "-", (name, shown)
            else:
                number = shown[2].split()[0]
                half = 0.5 * 10.0 ** -len(number.partition(".")[2])
                low, high = (
                    100 * (row.ours + d - row.published) / row.published for d in (-half, half)
                )
                assert low - 0.05 <= float(shown[3].rstrip("%")) <= high + 0.05, (name, shown)
        # Every published value of the experiment is in its table.
        labels = {r[0] for r in rows}
        missing = [v.label for v in exp.variants if v.published and v.label not in labels]
        assert exp.runner is not None or not missing, (name, missing)


def _markdown(tmp_path, *names: str):
    """`slowstart reproduce NAMES --markdown`, its runs and figures in tmp_path."""
    folders = ["--out", str(tmp_path), "--store", str(tmp_path / "s.duckdb")]
    return cli("reproduce", *names, "--markdown", "--quiet", *folders)


def test_the_pages_tables_are_what_reproduce_prints_now(tmp_path):
    """The cheap reproductions run again: each page's table is what `--markdown` prints,
    line for line (`make figures` rewrites them when a change moves a number)."""
    proc = _markdown(tmp_path, *FRESH)
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout.split("### ")[1:]
    assert [p.split("\n", 1)[0] for p in printed] == list(FRESH)
    for name, text in zip(FRESH, printed, strict=True):
        fresh = [line for line in text.splitlines() if line.startswith("|")]
        assert _page_table(name) == fresh, f"docs/reproductions/{name}.md (make figures)"


def test_a_markdown_table_row_per_row_with_the_cells_the_cli_prints():
    from slowstart.reproductions.reproduce import markdown_table

    rows = [
        Row("initcwnd 10", 9.0, 4.2, 0.5),
        Row("initcwnd 40", 1.0, None, 0.5, "<"),
        Row("a | b", None, 12.34, 0.5, unit=" Mbps"),
    ]
    text = markdown_table(TINY, rows).splitlines()
    assert text[0] == "| variant | published | ours | difference | verdict (±50%) |"
    assert text[2:] == [
        "| initcwnd 10 | 9 s | 4.2 s | -53.3% | off |",
        "| initcwnd 40 | <1 s | - | - | not reached |",
        "| a \\| b | - | 12.3 Mbps | - | - |",
    ]


def test_reproduce_markdown_prints_a_pages_table(tmp_path):
    from slowstart.reproductions.reproduce import headers

    proc = _markdown(tmp_path, "web-initcwnd")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:3] == [
        "### web-initcwnd",
        "",
        "| " + " | ".join(headers(EXPERIMENTS["web-initcwnd"])) + " |",
    ]
    rows = [line for line in lines[4:] if line.startswith("| ")]
    assert [r.split(" | ")[0][2:] for r in rows] == [
        v.label for v in EXPERIMENTS["web-initcwnd"].variants
    ]
    assert rows[2].endswith("| 2 | 2 | +0.0% | ok |")  # two round trips with initcwnd 20
