"""TCP Prague end to end (draft-briscoe-iccrg-prague-congestion-control-04): its ECT(1) packets
take DualPI2's L queue, its flow turns on Accurate ECN, and `reproduce prague` (picoquic PR
#1378's L4S test) runs with the comparison the PR makes."""

from __future__ import annotations

import pytest

from conftest import cli
from slowstart import load, run
from slowstart.reproductions.reproduce import EXPERIMENTS, run_experiment

DUALPI2 = {
    "duration": "10s",
    "path": {"rate": "20Mbps", "rtt": "20ms", "buffer": "1000pkt", "queue": "dualpi2", "ecn": True},
}


def test_prague_waits_in_the_l_queue_where_dctcp_waits_in_the_classic_one():
    """DualPI2 (RFC 9332) steers ECT(1) into its L queue, marked at the 1 ms step; DCTCP sends
    ECT(0), so it is served by the classic queue, whose PI2 marks with p' squared, sized for a
    classic response: DCTCP's cut of alpha / 2 is too small for it and its queue grows past the
    15 ms target (why an L4S sender must identify itself, RFC 9331)."""
    prague = run({**DUALPI2, "flow": [{"cc": "prague", "pacing": True}]}).summary
    dctcp = run({**DUALPI2, "flow": [{"cc": "dctcp", "pacing": True}]}).summary
    for s in (prague, dctcp):
        assert s["flows"][0]["retransmits"] == 0 and s["links"][2]["marks"] > 0
    assert prague["links"][2]["mean_queue_delay_s"] < 0.002
    assert dctcp["links"][2]["mean_queue_delay_s"] > 0.015


def test_a_prague_flow_turns_on_accurate_ecn_and_refuses_dctcp_feedback(tmp_path):
    config = load({**DUALPI2, "flow": [{"cc": "prague"}]})
    assert "ecn" not in config["flows"][0]  # the transport turns it on, as for dctcp
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'duration = "1s"\n[path]\nrate = "10Mbps"\nrtt = "10ms"\nbuffer = "10pkt"\n'
        '[[flow]]\ncc = "prague"\necn = true\necn_feedback = "dctcp"\n'
    )
    r = cli("run", str(scenario))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        'error: flow.0.ecn_feedback: cc prague reads accurate feedback, got "dctcp"'
    ]


def test_prague_against_a_receiver_without_accurate_ecn_falls_back_to_reno():
    """RFC 9768 §3.1.1: an RFC 3168 receiver answers Prague's AccECN SYN with classic ECN,
    which Prague does not take (Linux TCP_CONG_NO_FALLBACK_RFC3168): the flow runs without ECN
    and Prague as Reno (`prague_reno`). Without ECN its packets are Not-ECT, so DualPI2 drops
    them in its classic queue where it marked the full Prague's in its L queue; on drop-tail
    the fallback is Reno to the byte (`ecn_reductions` aside: a column of ECN flows)."""
    droptail = {"rate": "20Mbps", "rtt": "20ms", "buffer": "100pkt"}
    for receiver in ("classic", "none"):
        fallback = run(
            {
                "duration": "5s",
                "path": droptail,
                "flow": [{"cc": "prague", "receiver_ecn": receiver}],
            }
        ).summary["flows"][0]
        reno = run({"duration": "5s", "path": droptail, "flow": [{"cc": "reno"}]}).summary
        assert fallback["retransmits"] > 0 and fallback.pop("ecn_reductions") == 0
        assert {**fallback, "cc": "reno"} == reno["flows"][0]
    dualpi2 = {"flow": [{"cc": "prague", "pacing": True}]}
    accecn = run({**DUALPI2, **dualpi2}).summary
    classic = {"flow": [{"cc": "prague", "pacing": True, "receiver_ecn": "classic"}]}
    classic = run({**DUALPI2, **classic}).summary
    assert accecn["links"][2]["marks"] > 0 and accecn["flows"][0]["retransmits"] == 0
    assert classic["links"][2]["marks"] == 0 and classic["links"][2]["drops"] > 0
    assert classic["flows"][0]["ecn_reductions"] == 0 and classic["flows"][0]["retransmits"] > 0
    # An AccECN receiver gives Prague what it asks: the same run as the default.
    same = {"flow": [{"cc": "prague", "pacing": True, "receiver_ecn": "accurate"}]}
    assert run({**DUALPI2, **same}).summary["flows"] == accecn["flows"]


@pytest.mark.parametrize(
    ("flow", "message"),
    [
        (
            'receiver_ecn = "l4s"',
            'flow.0.receiver_ecn: expected one of same, accurate, classic, none, got "l4s"',
        ),
        (
            'cc = "reno"\nreceiver_ecn = "classic"',
            "flow.0.receiver_ecn: a receiver's ECN support matters only to a sender with "
            "ecn = true (or a cc that needs ECN)",
        ),
    ],
)
def test_a_bad_receiver_ecn_is_one_line_naming_it(tmp_path, flow, message):
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'duration = "1s"\n[path]\nrate = "10Mbps"\nrtt = "10ms"\nbuffer = "10pkt"\n'
        f"[[flow]]\n{flow}\n"
    )
    r = cli("run", str(scenario))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [f"error: {message}"], r.stderr


def test_reproduce_prague_shows_the_prs_comparison(tmp_path):
    """Prague behind the step loses less than Reno on drop-tail and holds the RTT lower, once
    slow start is over; both take about the line's time for the 4 MB (3.29 s at best)."""
    exp = EXPERIMENTS["prague"]
    rows, written = run_experiment(exp, tmp_path)
    ours = {r.label: r.ours for r in rows}
    assert [r.label for r in rows] == [v.label for v in exp.variants]
    p, r = "prague, CE step at 5 ms", "reno, drop-tail"
    assert ours[f"{p}: losses (retransmissions)"] < ours[f"{r}: losses (retransmissions)"]
    rise = "RTT peak above the minimum, responses 2-4"
    assert ours[f"{p}: {rise}"] < 10 < ours[f"{r}: {rise}"] <= 20
    for who in (p, r):
        assert 3.29 < ours[f"{who}: the four responses complete"] < 4.0
    assert [w.name for w in written] == ["prague-verdicts.png", "prague-l4s.png"]


def test_the_kernel_stack_refuses_prague_in_one_line(tmp_path):
    """This kernel has no tcp_prague (docs/real.md); the UDP stack runs it, with ECN
    (test_real.py::test_udp_stack_carries_ecn_marks_end_to_end)."""
    r = cli("real", "real-web", "--cc", "prague", "--out", str(tmp_path))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    message = "--cc: the kernel stack runs reno, cubic, bbr, bbr1 or PATH.bpf.o, got 'prague'"
    assert len(lines) == 1 and lines[0].startswith(f"error: {message}"), r.stderr
