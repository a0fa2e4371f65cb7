"""DCTCP end to end: the flow options and the step queue through the loader, and the Fig. 17
reproduction (`reproduce dctcp`): at a fifth of ns-3's times in the default suite (a few
seconds), at ns-3's own under `-m slow` (about a minute)."""

from __future__ import annotations

import pytest

from conftest import cli
from slowstart import load, run
from slowstart.reproductions.dctcp_fig17 import jain, measure
from slowstart.reproductions.dctcp_fig17 import run as run_fig17
from slowstart.reproductions.reproduce import EXPERIMENTS, run_experiment

STEP = {"kind": "red", "min_th": 20, "max_th": 20, "w_q": 1, "gentle": False, "hard_drop": False}


def test_a_dctcp_flow_turns_ecn_on_and_the_step_is_red_without_hard_drops():
    raw = {
        "duration": "1s",
        "path": {"rate": "1Gbps", "rtt": "100us", "buffer": "1000pkt", "queue": STEP, "ecn": True},
        "flow": [{"cc": "dctcp"}],
    }
    config = load(raw)
    assert config["links"][1]["forward"]["discipline"] == STEP
    # The canonical form keeps what the scenario wrote; the transport turns ECN on for dctcp.
    assert "ecn" not in config["flows"][0]
    summary = run(raw).summary
    flow, link = summary["flows"][0], summary["links"][2]
    assert flow["ecn_reductions"] > 0 and link["marks"] > 0
    assert (flow["retransmits"], link["drops"]) == (0, 0)
    # RED's defaults keep hard drops on, and write nothing for them.
    assert (
        "hard_drop"
        not in load({**raw, "path": {**raw["path"], "queue": "red"}})["links"][1]["forward"][
            "discipline"
        ]
    )


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "ecn_feedback",
            "l4s",
            'flow.0.ecn_feedback: expected one of classic, dctcp, accurate, got "l4s"',
        ),
        (
            "ecn_feedback",
            "dctcp",
            'flow.0.ecn_feedback: a feedback other than "classic" needs ecn = true',
        ),
    ],
)
def test_a_bad_feedback_is_one_line_naming_it(tmp_path, key, value, message):
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        f'duration = "1s"\n[path]\nrate = "10Mbps"\nrtt = "10ms"\nbuffer = "10pkt"\n'
        f'[[flow]]\ncc = "reno"\n{key} = "{value}"\n'
    )
    r = cli("run", str(scenario))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"error: {message}"], r.stderr


def test_a_step_below_zero_or_red_thresholds_out_of_order_are_refused(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'duration = "1s"\n[path]\nrate = "10Mbps"\nrtt = "10ms"\nbuffer = "10pkt"\n'
        'queue = {kind = "red", min_th = 20, max_th = 10}\n[[flow]]\ncc = "dctcp"\n'
    )
    r = cli("run", str(scenario))
    assert r.returncode == 2
    assert "queue.max_th: must be at least min_th >= 0" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_jains_index():
    assert jain([5.0, 5.0, 5.0]) == pytest.approx(1.0)
    assert jain([1.0, 0.0]) == pytest.approx(0.5)
    assert jain([0.0, 0.0]) is None


TIMESCALE = 0.2  # 0.2 s of staggered starts, 0.6 s to converge, 0.2 s measured


@pytest.fixture(scope="module")
def scaled():
    return {m: measure(run_fig17(m, TIMESCALE), TIMESCALE) for m in ("step", "ns3-red")}


def test_fig17_scaled_fills_both_bottlenecks_and_shares_them(scaled):
    """Invariants of the topology, whatever the marking: the 10 Gbps link is shared by 20 S2
    and 10 S1 senders, the 1 Gbps link to R1 by 10 S1 and 10 S3 senders; each is nearly full,
    and S2's rate is what the 10 Gbps link leaves after S1, shared in 20."""
    payload = 1448 / 1500
    for marking, v in scaled.items():
        to_r1 = 10 * (v["S1"] + v["S3"])
        through_t1 = 20 * v["S2"] + 10 * v["S1"]
        assert to_r1 > 0.9 * 1000 * payload, (marking, to_r1)
        assert through_t1 > 0.9 * 10_000 * payload, (marking, through_t1)
        assert v["S2"] == pytest.approx((through_t1 - 10 * v["S1"]) / 20)
        # S1 crosses both bottlenecks and gets less than S3 (the paper: 46 and 54 Mbps).
        assert v["S1"] < v["S3"], marking
        assert v["jain"] > 0.95, marking


def test_fig17_scaled_queues_follow_the_marking(scaled):
    """The step holds T2 -> R1 near K = 20 packets (0.24 ms at 1 Gbps); ns-3's RED, marking
    surely only above 2 x 60 packets, holds it longer."""
    step, red = scaled["step"], scaled["ns3-red"]
    assert 0.12 < step["T2 -> R1"] < 0.6, step
    assert red["T2 -> R1"] > 1.5 * step["T2 -> R1"], (step, red)
    assert red["T1 -> T2"] > step["T1 -> T2"], (step, red)


@pytest.mark.slow
def test_fig17_at_ns3s_times(tmp_path):
    """The whole reproduction, as `slowstart reproduce dctcp` runs it (about a minute)."""
    exp = EXPERIMENTS["dctcp"]
    rows, written = run_experiment(exp, tmp_path)
    by_label = {r.label: r for r in rows}
    assert [r.label for r in rows] == [v.label for v in exp.variants]
    assert all(r.ours is not None for r in rows)
    assert by_label["step at K (paper): S2 senders, mean rate"].verdict == "ok"
    assert by_label["step at K (paper): Jain's index, lowest group"].verdict == "ok"
    assert [p.name for p in written] == ["dctcp-rates.png"]


def test_the_kernel_stack_refuses_dctcp_in_one_line(tmp_path):
    """This kernel has no tcp_dctcp (docs/real.md); the UDP stack runs it, with ECN
    (test_real.py::test_udp_stack_carries_ecn_marks_end_to_end)."""
    r = cli("real", "real-web", "--cc", "dctcp", "--out", str(tmp_path))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    message = "--cc: the kernel stack runs reno, cubic, bbr, bbr1 or PATH.bpf.o, got 'dctcp'"
    assert len(lines) == 1 and lines[0].startswith(f"error: {message}"), r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cc", "dctcp:g=0"], "flow.0.cc dctcp: parameter 'g' = 0 is not accepted"),
        (["--cc", "dctcp:alpha_init=2"], "flow.0.cc dctcp: parameter 'alpha_init' = 2 is not"),
        (["--set", 'path.queue={kind="dualpi2", c_protection=1.5}'], "path.queue.c_protection:"),
        (["--set", 'path.queue={kind="dualpi2", step="0ms"}'], "path.queue.step: must be in"),
        (["--set", 'path.queue={kind="red", hard_drop="no"}'], "path.queue.hard_drop: expected"),
    ],
)
def test_each_new_parameter_out_of_bounds_is_one_line_naming_it(tmp_path, args, message):
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'duration = "1s"\n[path]\nrate = "10Mbps"\nrtt = "10ms"\nbuffer = "10pkt"\n'
        '[[flow]]\ncc = "reno"\n'
    )
    r = cli("run", str(scenario), *args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {message}"), r.stderr
