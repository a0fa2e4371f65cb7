"""`slowstart real --stack quinn`: the QUIC stack quinn, with slowstart's controller through
crates/slowstart-quinn or with its own, through the emulated link (real/quinn.py).

The transfers need root, /dev/net/tun and iproute2 (network namespaces); elsewhere they are
skipped with the reason `slowstart.real.testbed.unavailable_reason()` gives.
"""

from __future__ import annotations

import json
import os
from argparse import Namespace

import pytest

from conftest import NETWORK, ROOT, built, cli
from slowstart.cli import check_real_cc
from slowstart.real import quinn as real_quinn
from slowstart.real import testbed
from test_real import SMALL, leftovers

pytestmark = NETWORK

REASON = testbed.unavailable_reason()
needs_root = pytest.mark.skipif(REASON is not None, reason=f"skipped: {REASON}")


def test_quinn_stacks_name_the_controllers_they_run():
    assert check_real_cc(Namespace(stack="quinn", cc="hystart-pb")) is None
    assert check_real_cc(Namespace(stack="quinn-native", cc="cubic")) is None
    bad = check_real_cc(Namespace(stack="quinn-native", cc="hystart-pb"))
    assert bad is not None and bad.startswith("--cc: quinn's own controllers are reno, cubic, bbr")


def test_without_cc_each_flow_keeps_the_scenarios_own():
    """`real`/`compare` without --cc run the scenario's controllers (real-satellite's
    hystart-pb), checked flow by flow against the stack."""
    from slowstart.cli import build_parser
    from slowstart.loading.scenario import load
    from slowstart.paths import scenario_path

    args = build_parser().parse_args(["compare", "real-satellite", "--stack", "quinn-native"])
    assert args.cc is None
    config = load(scenario_path("real-satellite"), cc=args.cc)
    assert config["flows"][0]["cc"]["name"] == "hystart-pb"
    bad = check_real_cc(args, config)
    assert bad is not None and bad.startswith("flow.0.cc: quinn's own controllers are")
    assert check_real_cc(Namespace(stack="quinn", cc=None), config) is None


def test_real_runs_are_labelled_by_their_stack():
    from slowstart.real.stacks import STACKS

    assert STACKS["quinn"].who({}) == "quinn"
    assert STACKS["kernel"].who({}) == "Linux"
    program = {"program": {"server": ["gtlsserver", "--quiet"], "client": ["gtlsclient"]}}
    assert STACKS["program"].who({"flows": [program]}) == "gtlsserver"


def test_flows_quinn_cannot_run_are_named():
    from slowstart.loading.scenario import load

    base = {"duration": "5s", "path": {"rate": "10Mbps", "rtt": "50ms"}}
    for flows, path, message in (
        (
            [{"app": {"kind": "web", "response": "17kB"}}],
            {},
            "app.0.kind: the quinn stack runs bulk flows",
        ),
        ([{}], {}, "flow.0.size: a real bulk flow needs a size"),
        (
            [{"size": "1MB"}],
            {"drop": [{"flow": 0, "seq": 3}]},
            "link bottleneck.forward.drops: the quinn stack's packets are encrypted",
        ),
    ):
        config = load({**base, "path": {**base["path"], **path}, "flow": flows})
        with pytest.raises(ValueError, match=message):
            real_quinn.check_flows(config)


def test_the_simulation_sends_quinns_packets():
    from slowstart.loading.scenario import load

    config = load(
        {"duration": "5s", "path": {"rate": "10Mbps", "rtt": "50ms"}, "flow": [{"size": "1MB"}]}
    )
    flow = real_quinn.quic_like(config)["flows"][0]
    # One 1500-byte IP packet: 20 (IP) + 8 (UDP) + the 1472-byte QUIC datagram.
    assert flow["mss"] + flow["header_bytes"] == 1500
    assert flow["handshake"] is False and flow["ack_every"] == 2
    # quinn paces every packet at 1.25 cwnd/srtt, whatever the controller's rate.
    assert flow["pacing"] is True and flow["pacer"] == "quinn"
    # No TCP-like receive window opening per segment: the whole megabyte may be in flight.
    assert flow["initrwnd"] * flow["mss"] >= 1_000_000
    assert real_quinn.cc_args({"cc": {"name": "cubic", "params": {"beta": 0.5}}}, "quinn") == [
        "--cc",
        "cubic:beta=0.5",
    ]
    assert real_quinn.cc_args({"cc": {"name": "reno", "params": {}}}, "quinn-native") == [
        "--quinn-cc",
        "newreno",
    ]


@pytest.fixture(scope="module")
def quinn_built():
    yield from built("slowstart-emu", "slowstart-quinn")


@needs_root
def test_quinn_transfer_through_the_emulator(tmp_path, quinn_built):
    """2 MB over quinn with the core's Reno through the adapter, 20 Mbps / 50 ms: every byte
    arrives, every loss is the emulated link's, and the transfer is as long as simulated within
    10%: one run on a busy machine, so wider than the median-of-3 checks of docs/quinn.md."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="2MB"))
    proc = cli(
        "compare",
        str(scenario),
        "--stack",
        "quinn",
        "--cc",
        "reno",
        "--runs",
        "1",
        "--json",
        "--out",
        str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)
    real = c["real"][0]
    f = real["flows"][0]
    assert real["stack"] == "quinn"
    assert f["bytes_delivered"] == 2_000_000
    assert real["tun_tx_dropped"] == {"sender": 0, "receiver": 0}
    # Slow start overflows the 1-BDP queue: every packet the emulated link dropped, quinn
    # declared lost (and perhaps a few more, spuriously).
    drops = real["links"][0]["drops"]
    assert 0 < drops <= f["retransmits"], (drops, f["retransmits"])
    assert f["loss_events"] >= 1
    assert abs(c["diff"]["completion_s"]) < 0.10, c["diff"]
    assert leftovers(proc.pid) == []


@needs_root
def test_quinn_refuses_what_it_cannot_run(tmp_path, quinn_built):
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="1MB"))
    proc = cli("real", str(scenario), "--stack", "quinn", "--cc", "ledbat")
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "ledbat steers by one-way delay, which QUIC does not carry (no send timestamp "
            "reaches the receiver); quinn runs the loss- and RTT-based algorithms"
        )
    ), proc.stderr
    assert leftovers(proc.pid) == []
    assert leftovers(os.getpid()) == []


@needs_root
def test_ones_own_webassembly_controller_runs_in_quinn(tmp_path, quinn_built):
    """The built-in Reno as a WebAssembly guest (examples/builtin-guest, built by `make
    guests`), registered in the client from its file, runs in quinn as the built-in does: the
    same 2 MB over the same emulated path within 2% (one run each; the controllers are the same
    code, so what differs is the real path's timing)."""
    from slowstart.loading.scenario import load
    from slowstart.real.quinn import run_real_quinn

    wasm = ROOT / "target" / "wasm32-unknown-unknown" / "release" / "builtin_guest.wasm"
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL.format(size="2MB"))
    guest = run_real_quinn(load(scenario, cc=f"{wasm}:algorithm=reno")).summary["flows"][0]
    builtin = run_real_quinn(load(scenario, cc="reno")).summary["flows"][0]
    assert guest["cc"].startswith("builtin_guest.wasm@")
    assert guest["bytes_delivered"] == builtin["bytes_delivered"] == 2_000_000
    assert abs(guest["completion_s"] / builtin["completion_s"] - 1) < 0.02, (guest, builtin)
    assert leftovers(os.getpid()) == []
