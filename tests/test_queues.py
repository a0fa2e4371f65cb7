"""Queue disciplines: the loader's canonical tables and errors, and runs under each AQM."""

import copy

import pytest

from conftest import ALGORITHMS, SMALL
from slowstart.scenario import build_config
from slowstart.units import ScenarioError


def bottleneck(path: dict) -> dict:
    raw = copy.deepcopy(SMALL)
    raw["path"].update(path)
    return build_config(raw, ALGORITHMS)["links"][1]


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
        ("sfq", "path.queue.kind: expected one of droptail, codel, fq_codel, pie, red, got"),
        (3, "path.queue: expected one of droptail, codel, fq_codel, pie, red or a table"),
        ({"kind": "codel", "quantum": 1}, "path.queue.quantum: unknown codel parameter"),
        ({"kind": "codel", "target": "soon"}, "path.queue.target: expected a time"),
        ({"kind": "codel", "interval": "0ms"}, 'path.queue.interval: must be positive, got "0ms"'),
        ({"kind": "pie", "alpha": -1}, "path.queue.alpha: expected a positive number (Hz)"),
        ({"kind": "red", "max_p": 2}, "path.queue.max_p: expected a probability in (0, 1]"),
        ({"kind": "red", "min_th": 30}, "path.queue.max_th: must be above min_th (30.0), got 15"),
        ({"kind": "fq_codel", "flows": 0}, "path.queue.flows: expected an integer in 1..=65536"),
    ],
)
def test_queue_errors(queue, message):
    with pytest.raises(ScenarioError) as err:
        bottleneck({"queue": queue})
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value)


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
    cfg = build_config(raw, ALGORITHMS)
    assert cfg["flows"][0]["ecn"] is True
    r = slowstart.run(raw, duration="3s")
    flow, link = r.summary["flows"][0], r.summary["links"][2]
    assert link["marks"] > 0 and flow["ecn_reductions"] > 0
    assert flow["drops"] == 0 and flow["retransmits"] == 0
    # Without ECN on the flow, the same queue drops instead.
    raw["flow"][0]["ecn"] = False
    assert "ecn" not in build_config(raw, ALGORITHMS)["flows"][0]
    plain = slowstart.run(raw, duration="3s").summary
    assert plain["links"][2]["marks"] == 0 and plain["flows"][0]["drops"] > 0
    assert "ecn_reductions" not in plain["flows"][0]
