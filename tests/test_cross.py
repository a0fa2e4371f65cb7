"""Cross traffic (`[[cross]]`) through the loader, the CLI and the two net100 reproductions that
use it or parallel streams (`reproduce blast`, `reproduce parallel`)."""

from __future__ import annotations

import json

import pytest

from conftest import cli
from slowstart import load, run
from slowstart.reproductions.net100_cross import run_blast, run_parallel
from slowstart.reproductions.reproduce import EXPERIMENTS

PATH = {"rate": "10Mbps", "rtt": "50ms", "buffer": "50pkt"}


def test_loader_resolves_units_and_leaves_defaults_to_the_core():
    raw = {
        "duration": "2s",
        "path": PATH,
        "flow": [{"max_window": "10seg"}],
        "cross": [{"kind": "onoff", "rate": "3Mbps", "start": "0.5s", "on": "100ms"}],
    }
    config = load(raw)
    assert config["cross"] == [
        {"kind": "onoff", "rate_bps": 3_000_000, "start_ns": 500_000_000, "on_ns": 100_000_000}
    ]
    del raw["cross"]
    assert "cross" not in load(raw), "no [[cross]]: the canonical form is unchanged"


def test_cbr_beside_a_flow_is_counted_per_source():
    raw = {
        "duration": "3s",
        "path": PATH,
        "flow": [{"max_window": "10seg"}],
        "cross": [{"rate": "3Mbps", "start": "1s", "stop": "2s"}],
    }
    c = run(raw).summary["cross"][0]
    # Not full (3 Mbps beside about 2.3): every packet delivered, 1 s of 3 Mbps in 1500-byte
    # packets.
    assert c["packets_sent"] == c["packets_delivered"] == 250 and c["packets_dropped"] == 0
    assert c["kind"] == "cbr" and c["packet_bytes"] == 1500


def test_cli_prints_a_row_per_source_and_set_reaches_it():
    out = cli("run", "net100-blast", "--duration", "4s", "--set", "cross.0.rate=2Gbps", "--json")
    c = json.loads(out.stdout)["cross"][0]
    assert c["rate_bps"] == 2_000_000_000
    # The blast stopped at 3.5 s and its last packets have arrived or been dropped by 4 s.
    assert c["packets_sent"] == c["packets_delivered"] + c["packets_dropped"]
    table = cli("run", "net100-blast", "--duration", "4s").stdout
    assert "cross  kind  path" in table and "sender->receiver" in table


@pytest.mark.parametrize(("rule", "most"), [("strict", 1001), ("linux", 2000)])
def test_cwnd_limited_rule_holds_cwnd_at_the_window(rule, most):
    s = run("net100-blast", set=[f'flow.0.cwnd_limited="{rule}"', "duration=3.1s"]).summary
    assert s["flows"][0]["max_cwnd_bytes"] // 1460 == most


@pytest.fixture(scope="module")
def blast():
    return run_blast(EXPERIMENTS["blast"])


def test_blast_recoveries_in_the_notes_order(blast):
    """Scalable recovers faster than HighSpeed, HighSpeed faster than standard TCP."""
    rows, _ = blast
    standard, highspeed, scalable = (r.ours for r in rows[:3])
    assert standard > highspeed > scalable > 0
    assert [r.verdict for r in rows[3:]] == ["ok", "ok"]


def test_blast_cuts_each_window_by_its_own_decrease():
    """After the blast each flow's ssthresh is its controller's decrease of the 1000-segment
    window: 1/2 (Reno), b(1000) = 0.33 (HighSpeed, RFC 3649), 1/8 (Scalable)."""
    for cc, kept in (("reno", 0.5), ("hstcp", 0.67), ("scalable", 0.875)):
        r = run("net100-blast", set=[f'flow.0.cc="{cc}"', "duration=8s"])
        ssthresh = r.flows["ssthresh_bytes"].dropna().iloc[-1] / 1460
        assert ssthresh == pytest.approx(1000 * kept, abs=2), cc


def test_parallel_ordering_as_published(tmp_path):
    """4 streams (82 Mbps) > one AIMD (0.125, 4) stream (38) > the same with LSS (29)."""
    rows, written = run_parallel(EXPERIMENTS["parallel"], tmp_path)
    assert [p.name for p in written] == ["parallel-cwnd.png", "parallel-throughput.png"]
    assert all(p.exists() for p in written)
    four, aimd, lss = (r.ours for r in rows[:3])
    assert four > aimd > lss
    # The single streams within ±25%, LSS's cost too (29/38 = 0.76 published); the four
    # streams are not (see the README).
    assert [r.verdict for r in rows] == ["off", "ok", "ok", "ok", "off"]


def test_real_runs_send_the_blast_through_the_emulated_link():
    """The emulator plays the blast itself, on the bottleneck's forward direction (the real
    runs are tests/test_real.py's)."""
    from slowstart.real.testbed import bottleneck, cross_directions

    blast = load("net100-blast")
    assert bottleneck(blast)["forward"]["rate_bps"] == 622_000_000
    assert cross_directions(blast) == ["forward"]
