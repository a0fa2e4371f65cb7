import json

import pytest

from conftest import cli
from slowstart.paths import scenario_path
from slowstart.reproduce import (
    EXPERIMENTS,
    Experiment,
    Row,
    Variant,
    format_table,
    run_experiment,
    runnable,
)
from slowstart.scenario import load


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


def test_the_readme_states_the_verdict_rule_the_cli_applies():
    from conftest import ROOT
    from slowstart.reproduce import VERDICT_RULE

    readme = " ".join(
        line.removeprefix("> ").strip()
        for line in (ROOT / "README.md").read_text().splitlines()
        if line.startswith("> ")
    )
    assert VERDICT_RULE in readme
