"""Queue disciplines: the loader's canonical tables and errors, and runs under each AQM."""

import copy
import tracemalloc

import pytest

from conftest import ROOT, SMALL
from slowstart.loading.scenario import build_config, load
from slowstart.units import ScenarioError


def bottleneck(path: dict) -> dict:
    raw = copy.deepcopy(SMALL)
    raw["path"].update(path)
    return build_config(raw)["links"][1]


def test_drop_tail_scenarios_keep_their_canonical_form():
    link = bottleneck({})
    assert "discipline" not in link["forward"] and "ecn" not in link["forward"]
    assert bottleneck({"queue": "droptail"}) == link


def test_names_and_tables_resolve_units():
    link = bottleneck({"queue": "codel", "ecn": True})
    assert link["forward"]["discipline"] == {"kind": "codel"}
    assert link["reverse"]["discipline"] == {"kind": "codel"}
    assert link["forward"]["ecn"] is True and link["reverse"]["ecn"] is True
    link = bottleneck(
        {
            "queue": {"kind": "fq_codel", "target": "2ms", "quantum": "3000B", "flows": 64},
            "reverse_queue": "droptail",
        }
    )
    assert link["forward"]["discipline"] == {
        "kind": "fq_codel",
        "target_ns": 2_000_000,
        "quantum_bytes": 3000,
        "flows": 64,
    }
    assert "discipline" not in link["reverse"]
    red = bottleneck({"queue": {"kind": "red", "min_th": 20, "max_th": 60, "gentle": False}})
    assert red["forward"]["discipline"] == {
        "kind": "red",
        "min_th": 20.0,
        "max_th": 60.0,
        "gentle": False,
    }


@pytest.mark.parametrize(
    ("queue", "message"),
    [
        (
            "sfq",
            "path.queue.kind: expected one of droptail, codel, fq_codel, pie, red, dualpi2, got",
        ),
        (3, "path.queue: expected one of droptail, codel, fq_codel, pie, red, dualpi2 or a table"),
        ({"kind": "codel", "quantum": 1}, "path.queue.quantum: unknown codel parameter"),
        ({"kind": "codel", "target": "soon"}, "path.queue.target: expected a time"),
        ({"kind": "pie", "alpha": "x"}, 'path.queue.alpha: expected a number (Hz), got "x"'),
        ({"kind": "red", "max_p": "nan"}, "path.queue.max_p: expected a probability (a number)"),
        ({"kind": "fq_codel", "flows": 1.5}, "path.queue.flows: expected a positive integer"),
    ],
)
def test_queue_errors(queue, message):
    with pytest.raises(ScenarioError) as err:
        bottleneck({"queue": queue})
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            {"queue": {"kind": "codel", "interval": "0ms"}},
            "path.queue.interval: must be in 1..=3600000000000, got 0",
        ),
        (
            {"queue": {"kind": "pie", "alpha": -1}},
            "path.queue.alpha: must be in (0, 1000000], got -1",
        ),
        ({"queue": {"kind": "red", "max_p": 2}}, "path.queue.max_p: must be in (0, 1], got 2"),
        (
            {"queue": {"kind": "red", "min_th": 30}},
            "path.queue.max_th: must be at least min_th >= 0 and above 0, got min_th 30 max_th 15",
        ),
        (
            {"queue": {"kind": "fq_codel", "flows": 0}},
            "path.queue.flows: must be in 1..=65536, got 0",
        ),
        (
            {"reverse_queue": {"kind": "fq_codel", "quantum": 0}},
            "path.reverse_queue.quantum: must be in 1..=1000000000000, got 0",
        ),
        ({"loss": {"p": 1.5}}, "path.loss.p: must be in [0, 1], got 1.5"),
    ],
)
def test_queue_ranges_are_the_cores(path, message):
    """Bounds are checked by the core (config.rs `Discipline::validate`), named as written."""
    raw = copy.deepcopy(SMALL)
    raw["path"].update(path)
    with pytest.raises(ScenarioError) as err:
        load(raw)
    assert str(err.value) == message


def test_ecn_must_be_a_bool():
    with pytest.raises(ScenarioError, match="path.ecn: expected true or false"):
        bottleneck({"ecn": "yes"})


@pytest.mark.parametrize("queue", ["codel", "fq_codel", "pie", "red"])
def test_every_discipline_runs_and_names_itself_in_the_summary(queue):
    import slowstart

    raw = copy.deepcopy(SMALL)
    raw["path"].update({"buffer": "10bdp", "queue": queue})
    raw["flow"][0]["size"] = "20MB"
    r = slowstart.run(raw, duration="3s")
    link = r.summary["links"][2]
    assert link["queue"] == queue
    assert "marks" not in link
    drop_tail = slowstart.run({**raw, "path": {**raw["path"], "queue": "droptail"}}, duration="3s")
    assert "queue" not in drop_tail.summary["links"][2]
    assert link["mean_queue_delay_s"] < drop_tail.summary["links"][2]["mean_queue_delay_s"]


def test_ecn_flow_is_marked_not_dropped_and_counts_its_reductions():
    import slowstart

    raw = copy.deepcopy(SMALL)
    raw["path"].update({"buffer": "10bdp", "queue": "codel", "ecn": True})
    raw["flow"][0].update({"size": "20MB", "ecn": True})
    cfg = build_config(raw)
    assert cfg["flows"][0]["ecn"] is True
    r = slowstart.run(raw, duration="3s")
    flow, link = r.summary["flows"][0], r.summary["links"][2]
    assert link["marks"] > 0 and flow["ecn_reductions"] > 0
    assert flow["drops"] == 0 and flow["retransmits"] == 0
    # Without ECN on the flow, the same queue drops instead.
    raw["flow"][0]["ecn"] = False
    assert "ecn" not in build_config(raw)["flows"][0]
    plain = slowstart.run(raw, duration="3s").summary
    assert plain["links"][2]["marks"] == 0 and plain["flows"][0]["drops"] > 0
    assert "ecn_reductions" not in plain["flows"][0]


def test_gilbert_elliott_loss_takes_netems_defaults():
    link = bottleneck({"loss": {"p": "1%"}})
    assert link["forward"]["loss"] == 0.0
    assert link["forward"]["gilbert_elliott"] == {
        "p": 0.01,
        "r": 0.99,
        "loss_bad": 1.0,
        "loss_good": 0.0,
    }
    assert "gilbert_elliott" not in link["reverse"]
    assert "gilbert_elliott" not in bottleneck({"loss": 0.01})["forward"]


@pytest.mark.parametrize(
    ("loss", "message"),
    [
        ({"r": 0.5}, "path.loss.p: missing"),
        ({"p": 0.1, "q": 1}, "path.loss.q: unknown key (accepted: p, r, loss_bad, loss_good"),
        ({"p": "150"}, "path.loss.p: expected a probability in [0, 1]"),
        ({"p": 0.1, "r": "lots"}, "path.loss.r: expected a probability in [0, 1]"),
    ],
)
def test_gilbert_elliott_errors(loss, message):
    with pytest.raises(ScenarioError) as err:
        bottleneck({"loss": loss})
    assert str(err.value).startswith(message), str(err.value)


def test_bursty_loss_runs_and_loses_in_bursts():
    import slowstart

    raw = copy.deepcopy(SMALL)
    raw["path"]["loss"] = {"p": "0.2%", "r": "30%"}
    r = slowstart.run(raw, duration="2s")
    assert r.summary["links"][2]["drops"] > 0


# --- trace-driven links ---------------------------------------------------------------------

SHARED_TRACES = ROOT.parent / "shared" / "traces"


def test_trace_rate_is_read_with_its_mean():
    link = bottleneck({"rate": {"trace": "traces/steps.txt"}})
    times = link["forward"]["rate_trace_ms"]
    assert times.count(" ") + 1 == 18_750 and times.endswith(" 20000")
    # 12, 3, 24 and 6 Mbps for 5 s each: a mean of 11.25 Mbps.
    assert link["forward"]["rate_bps"] == 11_250_000
    assert link["reverse"]["rate_trace_ms"] == times
    fixed = bottleneck({"rate": {"trace": "traces/steps.txt"}, "reverse_rate": "5Mbps"})
    assert "rate_trace_ms" not in fixed["reverse"]


def test_a_trace_costs_a_few_times_its_size_to_load(tmp_path):
    """The loader holds a trace as text and numpy, never a list of ints: 2 million
    opportunities (13 MB) cost a few times the file to load (the file, a copy with spaces, the
    times as 8-byte integers, the text kept), not the 36x of a list of ints."""
    trace = tmp_path / "busy.txt"
    trace.write_text("".join(f"{i // 8}\n" for i in range(2_000_000)))
    size = trace.stat().st_size
    tracemalloc.start()
    try:
        link = bottleneck({"rate": {"trace": str(trace)}})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * size, (peak, size)
    # 8 opportunities of 1500 bytes per ms: 96 Mbps.
    assert link["forward"]["rate_bps"] == 2_000_000 * 1500 * 8 * 1000 // 249_999


def test_shipped_traces_are_what_the_script_writes(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_traces", ROOT / "traces/make_traces.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", tmp_path)
    module.main()
    for name in ("steps.txt", "outages.txt", "cellular-walk.txt"):
        assert (tmp_path / name).read_text() == (ROOT / "traces" / name).read_text(), name


@pytest.mark.parametrize(
    ("rate", "message"),
    [
        ({"trace": "traces/nowhere.txt"}, "path.rate.trace: traces/nowhere.txt: no such file"),
        ({"trace": 3}, "path.rate.trace: expected a file name, got 3"),
        ({"file": "x"}, 'path.rate: expected a rate such as "20Mbps" or {trace = "file"}'),
    ],
)
def test_trace_errors(rate, message):
    with pytest.raises(ScenarioError) as err:
        bottleneck({"rate": rate})
    assert str(err.value).startswith(message), str(err.value)


def test_bad_trace_lines_are_named(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1\n2\nthree\n")
    with pytest.raises(ScenarioError, match=r"path.rate.trace: .*bad.txt line 3: expected a time"):
        bottleneck({"rate": {"trace": str(bad)}})
    bad.write_text("0\n1\n\n  2 \n3600001\n4\n")  # the file's lines, blank ones too
    with pytest.raises(ScenarioError, match=r"bad.txt line 5: .* got \"3600001\""):
        bottleneck({"rate": {"trace": str(bad)}})
    bad.write_text("0\n1\n-2\n")
    with pytest.raises(ScenarioError, match=r"bad.txt line 3: .* got \"-2\""):
        bottleneck({"rate": {"trace": str(bad)}})
    bad.write_text("5\n3\n")
    raw = copy.deepcopy(SMALL)
    raw["path"]["rate"] = {"trace": str(bad)}
    with pytest.raises(ScenarioError) as err:  # the core's check, named as written
        load(raw)
    assert str(err.value) == "path.rate.trace: times must not decrease"


@pytest.mark.parametrize("queue", ["droptail", "codel"])
def test_flow_over_a_trace_follows_its_capacity(queue):
    import slowstart

    raw = copy.deepcopy(SMALL)
    raw["path"].update(
        {"rate": {"trace": "traces/outages.txt"}, "buffer": "100pkt", "queue": queue}
    )
    raw["flow"][0].update({"size": "inf", "cc": "reno"})
    r = slowstart.run(raw, duration="16s")
    goodput = r.summary["flows"][0]["goodput_bps"]
    # 12 Mbps but for 500 ms in every 4 s: 10.5 Mbps of capacity, 1460/1500 of it payload.
    # Outages cost more than their own time: the window waits out timeouts, and under CoDel
    # the queue built during the outage is cut afterwards.
    assert 0.7 * 10.5e6 < goodput < 10.5e6 * 1460 / 1500, goodput


@pytest.mark.skipif(
    not SHARED_TRACES.is_dir(), reason=f"recorded traces not present at {SHARED_TRACES}"
)
def test_recorded_lte_trace_runs_in_both_directions():
    import slowstart

    raw = copy.deepcopy(SMALL)
    raw["path"].update(
        {
            "rate": {"trace": str(SHARED_TRACES / "Verizon-LTE-short.down")},
            "reverse_rate": {"trace": str(SHARED_TRACES / "Verizon-LTE-short.up")},
            "buffer": "200pkt",
        }
    )
    raw["flow"][0]["size"] = "inf"
    r = slowstart.run(raw, duration="10s")
    link = r.summary["links"][2]
    assert link["forwarded"] > 1000
    assert r.summary["flows"][0]["goodput_bps"] < link["rate_bps"] * 2


def test_links_experiment_skips_lte_rows_without_the_traces(tmp_path, monkeypatch):
    import dataclasses

    from slowstart.reproductions import links_study
    from slowstart.reproductions.reproduce import EXPERIMENTS, run_experiment

    monkeypatch.setattr(links_study, "SHARED_TRACES", tmp_path / "absent")
    exp = EXPERIMENTS["links"]
    assert len(exp.variants) == len(links_study.ALGORITHMS) * len(links_study.LINKS)
    keep = ("reno | drop-tail 1 BDP", "reno | CoDel", "reno | Verizon LTE")
    small = dataclasses.replace(
        exp,
        common=("duration=2s",),
        variants=tuple(v for v in exp.variants if v.label in keep),
    )
    rows, written = run_experiment(small, tmp_path / "out")
    by = {r.label: r for r in rows}
    assert by["reno | Verizon LTE"].pending.startswith("recorded traces not present at")
    assert by["reno | CoDel"].ours is not None
    table = (tmp_path / "out" / "links-table.md").read_text()
    assert "| reno | " in table and "Verizon LTE" not in table
    assert [p.name for p in written] == ["links-table.md", "links.png"]
