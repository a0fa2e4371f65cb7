import copy
import json

import pytest

from conftest import ROOT, SMALL
from slowstart import _core
from slowstart.loading.scenario import build_config, load, read_scenario
from slowstart.units import ScenarioError


def build(raw: dict) -> dict:
    return build_config(raw)


def with_changes(**changes) -> dict:
    """SMALL with dotted keys replaced, e.g. with_changes(**{"flow.0.mss": 0})."""
    raw = copy.deepcopy(SMALL)
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = raw
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
        key = int(last) if isinstance(node, list) else last
        if value is DELETE:
            del node[key]
        else:
            node[key] = value
    return raw


DELETE = object()


# --- cc specs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "spec"),
    [
        ("reno", {"name": "reno", "params": {}}),
        ("lss:max_ssthresh=100", {"name": "lss", "params": {"max_ssthresh": 100}}),
        ("aimd:a=15,b=0.3", {"name": "aimd", "params": {"a": 15, "b": 0.3}}),
        (
            "aimd:rate_limited_growth=true,mode=fast",
            {"name": "aimd", "params": {"rate_limited_growth": True, "mode": "fast"}},
        ),
        ({"name": "lss", "max_ssthresh": 100}, {"name": "lss", "params": {"max_ssthresh": 100}}),
        ({"name": "aimd", "b": 0.3}, {"name": "aimd", "params": {"b": 0.3}}),
        # A table's name is read by the string's grammar: its parameters are kept.
        ({"name": "aimd:a=15", "b": 0.3}, {"name": "aimd", "params": {"a": 15, "b": 0.3}}),
    ],
)
def test_cc_specs(value, spec):
    assert build_config(read_scenario(SMALL) | {"flow": [{"cc": value}]})["flows"][0]["cc"] == spec


def test_cc_param_types_are_kept():
    raw = read_scenario(SMALL) | {"flow": [{"cc": "aimd:a=15,b=0.3,mode=slow"}]}
    params = build_config(raw)["flows"][0]["cc"]["params"]
    assert type(params["a"]) is int and type(params["b"]) is float and params["mode"] == "slow"


@pytest.mark.parametrize(
    "value",
    [
        "",
        ":a=1",
        "lss:max_ssthresh",
        "lss:=3",
        5,
        {"max_ssthresh": 1},
        {"name": "x", "y": [1]},
        {"name": "lss:max_ssthresh="},
        {"name": "aimd:b=0.3", "b": 0.5},
    ],
)
def test_bad_cc_specs(value):
    with pytest.raises(ScenarioError, match=r"^flow\.0\.cc"):
        load(SMALL, cc=value)


def test_cc_checked_against_the_registry():
    load(SMALL, cc={"name": "lss", "max_ssthresh": 50})
    names = ", ".join(a["name"] for a in json.loads(_core.algorithms()))
    with pytest.raises(ScenarioError) as err:
        load(SMALL, cc="warp")
    assert str(err.value) == (
        f'flow.0.cc: unknown algorithm "warp" (accepted: {names}; or your own '
        "controller: PATH.py:CLASS, PATH.wasm or PATH.bpf.o, each optionally followed by "
        ":key=value,...)"
    )
    with pytest.raises(ScenarioError) as err:
        load(SMALL, cc="reno:beta=0.7")
    assert str(err.value).startswith(
        'flow.0.cc: reno has no parameter "beta" (accepted: rate_limited_growth, slow_start, '
    )
    with pytest.raises(ScenarioError, match=r"accepted: a, b, mode, "):
        load(SMALL, cc="aimd:c=1")


# --- [path] expansion ---------------------------------------------------------------------


def test_satellite_expands_to_exact_canonical_values():
    config = load(ROOT / "scenarios" / "satellite.toml")
    assert config["name"] == "satellite"
    assert config["duration_ns"] == 60_000_000_000
    assert config["nodes"] == ["sender", "router", "receiver"]
    access, bottleneck = config["links"]
    assert (access["name"], access["a"], access["b"]) == ("access", "sender", "router")
    for d in (access["forward"], access["reverse"]):
        assert d["rate_bps"] == 10_000_000_000 and d["delay_ns"] == 0
        assert d["queue"] == {"bytes": 100_000_000}
    assert (bottleneck["name"], bottleneck["a"], bottleneck["b"]) == (
        "bottleneck",
        "router",
        "receiver",
    )
    for d in (bottleneck["forward"], bottleneck["reverse"]):
        assert d["rate_bps"] == 250_000_000
        assert d["delay_ns"] == 300_000_000  # rtt / 2
        assert d["queue"] == {"bytes": 18_750_000}  # 1 bdp = 250 Mbps × 600 ms / 8
        assert d["loss"] == 0.0 and d["jitter_ns"] == 0 and d["drops"] == []
    (flow,) = config["flows"]
    assert flow == {
        "src": "sender",
        "dst": "receiver",
        "cc": {"name": "reno", "params": {}},
        "size_bytes": 100_000_000,
        "start_ns": 0,
        "mss": 1460,
        "header_bytes": 40,
        "initcwnd": 10,
        "initrwnd": 10,
        "max_rwnd_bytes": None,
        "max_window_bytes": None,
        "handshake": True,
        "delayed_ack": True,
        "delack_timeout_ns": 40_000_000,
        "ack_every": 2,
        "quickack": False,
        "abc": True,
        "min_rto_ns": 200_000_000,
        "max_rto_ns": 120_000_000_000,
        "pacing": False,
        "recovery": "prr",
        "loss_detection": "rack",
        "app": {"kind": "bulk"},
    }
    assert config["trace"] == {
        "flow_interval_ns": 1_000_000,
        "queue_interval_ns": 1_000_000,
        "max_rows": 2_000_000,
    }


def test_lfn_early_loss_is_floyds_path():
    config = load(ROOT / "scenarios" / "lfn-early-loss.toml")
    fwd = config["links"][1]["forward"]
    assert fwd["rate_bps"] == 500_000_000
    assert fwd["delay_ns"] + config["links"][1]["reverse"]["delay_ns"] == 80_000_000
    assert fwd["queue"] == {"bytes": 10_000_000}  # 2 bdp = 2 × 500 Mbps × 80 ms / 8
    assert fwd["drops"] == [{"flow": 0, "seq": 40}]
    (flow,) = config["flows"]
    assert flow["max_window_bytes"] == 3500 * 1460
    assert (flow["initcwnd"], flow["mss"], flow["abc"]) == (2, 1460, False)
    assert (flow["delayed_ack"], flow["handshake"]) == (False, False)
    assert config["duration_ns"] == 600_000_000_000
    assert config["trace"]["flow_interval_ns"] == 10_000_000


def test_path_options():
    raw = with_changes(
        **{
            "path.rtt": "41ms",  # odd: the two halves still add up
            "path.buffer": "50ms",
            "path.reverse_rate": "10Mbps",
            "path.reverse_buffer": "20pkt",
            "path.access_rate": "1Gbps",
            "path.loss": "1%",
            "path.jitter": "2ms",
            "path.drop": [{"flow": 0, "seq": 7}],
        }
    )
    access, bottleneck = build(raw)["links"]
    assert access["forward"]["rate_bps"] == access["reverse"]["rate_bps"] == 1_000_000_000
    fwd, rev = bottleneck["forward"], bottleneck["reverse"]
    assert (fwd["delay_ns"], rev["delay_ns"]) == (20_500_000, 20_500_000)
    assert fwd["queue"] == {"bytes": 625_000}  # 50 ms at 100 Mbps
    assert rev["queue"] == {"packets": 20}
    assert rev["rate_bps"] == 10_000_000
    assert fwd["loss"] == pytest.approx(0.01) and rev["loss"] == 0.0
    assert (fwd["jitter_ns"], rev["jitter_ns"]) == (2_000_000, 0)
    assert fwd["drops"] == [{"flow": 0, "seq": 7}] and rev["drops"] == []


def test_time_buffer_on_the_reverse_uses_the_reverse_rate():
    raw = with_changes(**{"path.buffer": "10ms", "path.reverse_rate": "1Mbps"})
    bottleneck = build(raw)["links"][1]
    assert bottleneck["forward"]["queue"] == {"bytes": 125_000}
    assert bottleneck["reverse"]["queue"] == {"bytes": 1_250}


def test_default_path_buffer_is_one_bdp():
    assert build(SMALL)["links"][1]["forward"]["queue"] == {"bytes": 500_000}


def test_flow_values_resolve():
    raw = with_changes(
        **{
            "flow.0.cc": {"name": "lss", "max_ssthresh": 100},
            "flow.0.mss": 8960,
            "flow.0.max_window": "100seg",
            "flow.0.max_rwnd": "2MB",
            "flow.0.start": "1.5s",
            "flow.0.size": "inf",
            "flow.0.recovery": "rfc6675",
            "flow.0.delack_timeout": "200ms",
            "flow.0.src": "receiver",
            "flow.0.dst": "sender",
        }
    )
    (flow,) = build(raw)["flows"]
    assert flow["cc"] == {"name": "lss", "params": {"max_ssthresh": 100}}
    assert flow["max_window_bytes"] == 896_000
    assert flow["max_rwnd_bytes"] == 2_000_000
    assert flow["start_ns"] == 1_500_000_000
    assert flow["size_bytes"] is None
    assert flow["recovery"] == "rfc6675"
    assert flow["delack_timeout_ns"] == 200_000_000
    assert (flow["src"], flow["dst"]) == ("receiver", "sender")


def test_name_defaults_to_file_stem(tmp_path):
    path = tmp_path / "my-test.toml"
    path.write_text('duration = "1s"\n[path]\nrate = "10Mbps"\nrtt = "10ms"\n[[flow]]\n')
    assert load(path)["name"] == "my-test"


# --- general form -------------------------------------------------------------------------

GENERAL = {
    "name": "dumbbell",
    "duration": "5s",
    "nodes": ["a", "r1", "r2", "b"],
    "link": [
        {"name": "left", "a": "a", "b": "r1", "rate": "1Gbps", "delay": "1ms", "buffer": "1MB"},
        {
            "name": "middle",
            "a": "r1",
            "b": "r2",
            "rate": "100Mbps",
            "delay": "20ms",
            "buffer": "100pkt",
            "reverse_rate": "10Mbps",
            "reverse_delay": "30ms",
            "reverse_buffer": "5ms",
            "loss": 0.001,
            "jitter": "1ms",
            "drop": [{"flow": 1, "seq": 3}],
        },
        {"a": "r2", "b": "b", "rate": "1Gbps", "delay": "1ms", "buffer": "2ms"},
    ],
    "flow": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "a", "cc": "reno"}],
}


def test_general_form():
    config = build(GENERAL)
    assert config["nodes"] == ["a", "r1", "r2", "b"]
    left, middle, right = config["links"]
    assert right["name"] == "r2-b"
    assert right["forward"]["queue"] == {"bytes": 250_000}  # 2 ms at 1 Gbps
    assert left["forward"]["delay_ns"] == 1_000_000
    assert left["reverse"] == left["forward"]  # reverse_* default to the forward values
    assert middle["forward"] == {
        "rate_bps": 100_000_000,
        "delay_ns": 20_000_000,
        "queue": {"packets": 100},
        "loss": 0.001,
        "jitter_ns": 1_000_000,
        "drops": [{"flow": 1, "seq": 3}],
    }
    assert middle["reverse"] == {
        "rate_bps": 10_000_000,
        "delay_ns": 30_000_000,
        "queue": {"bytes": 6_250},  # 5 ms at 10 Mbps
        "loss": 0.0,
        "jitter_ns": 0,
        "drops": [],
    }
    assert [(f["src"], f["dst"]) for f in config["flows"]] == [("a", "b"), ("b", "a")]


# --- every loader error: one line, naming the field ---------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"flow.0.mss": "abc"}, 'flow.0.mss: expected a positive integer, got "abc"'),
        ({"flow.0.mss": True}, "flow.0.mss: expected a positive integer, got true"),
        ({"flow.0.initrwnd": 1.5}, "flow.0.initrwnd: expected a positive integer, got 1.5"),
        ({"flow.0.header_bytes": -1}, "flow.0.header_bytes: expected an integer >= 0, got -1"),
        ({"flow.0.bogus": 1}, "flow.0.bogus: unknown key (accepted: cc, size, start, mss,"),
        ({"flow.0.cc": "warp"}, 'flow.0.cc: unknown algorithm "warp" (accepted: reno, lss, cubic,'),
        ({"flow.0.cc": "reno:beta=0.7"}, 'flow.0.cc: reno has no parameter "beta"'),
        ({"flow.0.cc": "lss:max_ssthresh"}, 'flow.0.cc: expected "name" or "name:key=value,...",'),
        ({"flow.0.size": "lots"}, 'flow.0.size: expected a size such as "100MB"'),
        ({"flow.0.delayed_ack": "yes"}, 'flow.0.delayed_ack: expected true or false, got "yes"'),
        ({"flow.0.pacing": 1}, "flow.0.pacing: expected true or false, got 1"),
        ({"flow.0.max_window": "-1seg"}, 'flow.0.max_window: must not be negative, got "-1seg"'),
        ({"flow.0.max_rwnd": "many"}, 'flow.0.max_rwnd: expected a window such as "3500seg"'),
        ({"flow.0.start": "-1s"}, 'flow.0.start: must not be negative, got "-1s"'),
        ({"flow.0.delack_timeout": "soon"}, "flow.0.delack_timeout: expected a time such as"),
        (
            {"flow.0.src": "mars"},
            'flow.0.src: unknown node "mars" (nodes: sender, router, receiver)',
        ),
        ({"flow": []}, "flow: at least one [[flow]] table is needed"),
        ({"flow": DELETE}, "flow: at least one [[flow]] table is needed"),
        ({"flow.0": "reno"}, 'flow.0: expected a table, got "reno"'),
        ({"path.rate": "-5Mbps"}, 'path.rate: must not be negative, got "-5Mbps"'),
        ({"path.rate": "fast"}, 'path.rate: expected a rate such as "250Mbps"'),
        ({"path.rate": DELETE}, 'path.rate: missing (expected a rate such as "250Mbps")'),
        ({"path.rtt": DELETE}, "path.rtt: missing"),
        ({"path.rtt": 0}, "path.rtt: must be positive, got 0"),
        ({"path.buffer": "1bdpx"}, 'path.buffer: expected a buffer such as "200pkt"'),
        ({"path.buffer": "x"}, 'path.buffer: expected a buffer such as "200pkt"'),
        ({"path.reverse_buffer": "x"}, "path.reverse_buffer: expected a buffer"),
        ({"path.access_rate": "x"}, 'path.access_rate: expected a rate such as "250Mbps"'),
        ({"path.jitter": "-2ms"}, "path.jitter: must not be negative"),
        ({"path.foo": 1}, "path.foo: unknown key (accepted: rate, rtt, buffer, loss,"),
        ({"path.drop": {"flow": 0}}, "path.drop: expected a list of {flow = N, seq = N}"),
        ({"path.drop": [{"flow": 0}]}, "path.drop.0.seq: missing"),
        (
            {"path.drop": [{"flow": 0, "seq": 1, "at": 2}]},
            "path.drop.0.at: unknown key (accepted: flow, seq)",
        ),
        ({"path": "fast"}, 'path: expected a table, got "fast"'),
        ({"path": DELETE}, "path: missing (give a [path] table, or nodes = [...] with [[link]]"),
        ({"nodes": ["a", "b"]}, "path: give either [path] or nodes and [[link]], not both"),
        ({"duration": DELETE}, 'duration: missing (expected a time such as "60s")'),
        ({"duration": "forever"}, "duration: expected a time"),
        ({"seed": -1}, "seed: expected an integer >= 0, got -1"),
        ({"seed": "x"}, 'seed: expected an integer >= 0, got "x"'),
        ({"name": ""}, 'name: expected a non-empty string, got ""'),
        ({"description": 3}, "description: expected a string, got 3"),
        ({"colour": "red"}, "colour: unknown key (accepted: name, description, duration, seed,"),
        ({"trace.max_rows": -1}, "trace.max_rows: expected an integer >= 0, got -1"),
        ({"trace.flow_interval": "often"}, "trace.flow_interval: expected a time"),
        (
            {"trace.every": 1},
            "trace.every: unknown key (accepted: flow_interval, queue_interval, max_rows)",
        ),
    ],
)
def test_loader_errors(changes, message):
    with pytest.raises(ScenarioError) as err:
        build(with_changes(**changes))
    text = str(err.value)
    assert text.startswith(message), text
    assert "\n" not in text


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"flow.0.size": 0}, 'flow.0.size: must be > 0 bytes or "inf"'),
        (
            {"flow.0.max_window": "100B"},
            "flow.0.max_window: must be at least one MSS (1460 bytes), got 100",
        ),
        (
            {"flow.0.min_rto": "0ms"},
            "flow.0.min_rto: must be in 1..=max_rto (120000000000) ns, got 0",
        ),
        (
            {"flow.0.max_rto": "1ms"},
            "flow.0.min_rto: must be in 1..=max_rto (1000000) ns, got 200000000",
        ),
        ({"flow.0.src": "receiver"}, "flow.0.dst: src and dst must differ, both are 'receiver'"),
        ({"duration": "0s"}, "duration: must be in 1..=1000000000000000000, got 0"),
        ({"flow.0.mss": 0}, "flow.0.mss: must be in 1..=65000, got 0"),
        ({"flow.0.initcwnd": 0}, "flow.0.initcwnd: must be in 1..=100000, got 0"),
        ({"flow.0.initrwnd": 0}, "flow.0.initrwnd: must be in 1..=100000, got 0"),
        ({"flow.0.ack_every": 0}, "flow.0.ack_every: must be in 1..=10000, got 0"),
        ({"flow.0.recovery": "sack"}, 'flow.0.recovery: expected one of prr, rfc6675, got "sack"'),
        ({"flow.0.recovery": 3}, "flow.0.recovery: expected one of prr, rfc6675, got 3"),
        ({"path.loss": 1.5}, "path.loss: must be in [0, 1), got 1.5"),
        ({"path.loss": "-1%"}, "path.loss: must be in [0, 1), got -0.01"),
        (
            {"path.drop": [{"flow": 3, "seq": 1}]},
            "path.drop.0.flow: no flow 3 (flows are numbered 0 to 0 in file order)",
        ),
        (
            {"path.drop": [{"flow": 0, "seq": 0}]},
            "path.drop.0.seq: must be >= 1 (segments count from 1), got 0",
        ),
        # Zero rates, windows and buffers: the loader resolves the units, the core refuses.
        (
            {"flow.0.max_window": "0seg"},
            "flow.0.max_window: must be at least one MSS (1460 bytes), got 0",
        ),
        ({"path.rate": "0Mbps"}, "path.rate: must be in 1..=10000000000000, got 0"),
        ({"path.access_rate": 0}, "path.access_rate: must be in 1..=10000000000000, got 0"),
        ({"path.reverse_rate": 0}, "path.reverse_rate: must be in 1..=10000000000000, got 0"),
        ({"path.buffer": "0pkt"}, "path.buffer: must be in 1..=1000000000, got 0"),
        ({"path.reverse_buffer": "0pkt"}, "path.reverse_buffer: must be in 1..=1000000000, got 0"),
        ({"path.rtt": "14400s"}, "path.rtt: must be in 0..=3600000000000, got 7200000000000"),
        (
            {"path.reverse_queue": {"kind": "red", "max_p": 2}},
            "path.reverse_queue.max_p: must be in (0, 1], got 2",
        ),
        (
            {"path.loss": {"p": 0.5, "r": 0.0}},
            "path.loss.loss_bad: with p = 0.5, r = 0, loss_bad = 1 and loss_good = 0 every "
            "packet is lost (as loss = 1); lower it",
        ),
        (
            {"path.buffer": "1ns"},
            "path.buffer: 0 bytes hold no full-size packet (1500 bytes with headers)",
        ),
    ],
)
def test_the_cores_checks_on_load(changes, message):
    """Ranges and relations between settings are the core's (config.rs, the transport's
    settings); `load` has it check what the loader built."""
    with pytest.raises(ScenarioError) as err:
        load(with_changes(**changes))
    assert str(err.value) == message


def general_with(**changes) -> dict:
    raw = copy.deepcopy(GENERAL)
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = raw
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if value is DELETE:
            del node[last]
        else:
            node[last] = value
    return raw


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"link.0.buffer": "1bdp"},
            'link.0.buffer: "1bdp": bdp is only accepted in the [path] form',
        ),
        ({"link.0.buffer": DELETE}, "link.0.buffer: missing"),
        ({"link.0.rate": DELETE}, "link.0.rate: missing"),
        ({"link.0.delay": "far"}, "link.0.delay: expected a time"),
        ({"link.0.a": "z"}, 'link.0.a: unknown node "z" (nodes: a, r1, r2, b)'),
        ({"link.0.b": "a"}, 'link.0.b: a link needs two different nodes, got "a" twice'),
        ({"link.1.name": "left"}, 'link.1.name: "left" is used by another link'),
        ({"link.1.reverse_loss": 0.1}, "link.1.reverse_loss: unknown key (accepted: name, a, b,"),
        ({"link": []}, "link: expected one or more [[link]] tables"),
        ({"link": DELETE}, "link: missing"),
        ({"nodes": DELETE}, "nodes: missing"),
        ({"nodes": ["a", "a"]}, 'nodes.1: "a" is listed twice'),
        ({"nodes": ["a"]}, "nodes: at least two nodes are needed"),
        ({"nodes": "a,b"}, 'nodes: expected a list of node names such as ["a", "b"], got "a,b"'),
        ({"flow.0.src": DELETE}, "flow.0.src: missing (with nodes and [[link]], every flow names"),
        ({"flow.1.dst": "c"}, 'flow.1.dst: unknown node "c"'),
    ],
)
def test_general_form_errors(changes, message):
    with pytest.raises(ScenarioError) as err:
        build(general_with(**changes))
    assert str(err.value).startswith(message), str(err.value)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"link.1.drop": [{"flow": 2, "seq": 1}]},
            "link.1.drop.0.flow: no flow 2 (flows are numbered 0 to 1 in file order)",
        ),
        ({"link.1.loss": 1}, "link.1.loss: must be in [0, 1), got 1"),
        ({"link.1.reverse_rate": 0}, "link.1.reverse_rate: must be in 1..=10000000000000, got 0"),
        ({"link.0.buffer": "0pkt"}, "link.0.buffer: must be in 1..=1000000000, got 0"),
        # The core names the canonical field (`links.1.reverse.queue`); the key that fills it
        # in keys.rs is what the scenario wrote.
        (
            {"link.1.reverse_buffer": "0pkt"},
            "link.1.reverse_buffer: must be in 1..=1000000000, got 0",
        ),
        (
            {"link.1.queue": {"kind": "codel", "target": "0ms"}},
            "link.1.queue.target: must be in 1..=3600000000000, got 0",
        ),
        (
            {"link.1.reverse_queue": {"kind": "fq_codel", "memory_limit": "1000B"}},
            "link.1.reverse_queue.memory_limit: 1000 bytes hold no full-size packet "
            "(1500 bytes with headers)",
        ),
        ({"link.1.loss": {"p": 2}}, "link.1.loss.p: must be in [0, 1], got 2"),
        (
            {"link.1.reverse_delay": "7200s"},
            "link.1.reverse_delay: must be in 0..=3600000000000, got 7200000000000",
        ),
        (
            {"link.1.jitter": "7200s"},
            "link.1.jitter: must be in 0..=3600000000000, got 7200000000000",
        ),
    ],
)
def test_general_form_names_the_cores_errors_as_written(changes, message):
    with pytest.raises(ScenarioError) as err:
        load(general_with(**changes))
    assert str(err.value) == message


def test_file_errors(tmp_path):
    with pytest.raises(ScenarioError, match=r"nope\.toml: no such file$"):
        read_scenario(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("duration = \n")
    with pytest.raises(ScenarioError, match=r"bad\.toml: invalid TOML: .*line 1"):
        read_scenario(bad)
    with pytest.raises(ScenarioError, match="is a directory"):
        read_scenario(tmp_path)


def test_dict_scenarios_are_not_mutated(small):
    before = copy.deepcopy(small)
    load(small, cc="lss:max_ssthresh=5", set=["flow.0.mss=9000"])
    assert small == before


def test_loss_detection_is_validated():
    sc = {"duration": "1s", "path": {"rate": "10Mbps", "rtt": "10ms"}, "flow": [{}]}
    assert load(sc)["flows"][0]["loss_detection"] == "rack"
    sc["flow"][0]["loss_detection"] = "dupthresh"
    assert load(sc)["flows"][0]["loss_detection"] == "dupthresh"
    sc["flow"][0]["loss_detection"] = "psychic"
    with pytest.raises(
        ScenarioError, match=r"flow\.0\.loss_detection: expected one of rack, dupthresh"
    ):
        load(sc)


def test_scenario_comments_cite_files_that_exist():
    import re

    from conftest import ROOT

    cited = {
        (path.name, m.group(0).rstrip(".,;:)"))
        for path in (ROOT / "scenarios").glob("*.toml")
        for m in re.finditer(
            r"\b(?:scenarios|python|crates|docs|tests|bench|fuzz)/[\w./-]+", path.read_text()
        )
    }
    missing = [(name, ref) for name, ref in sorted(cited) if not (ROOT / ref).exists()]
    assert not missing, missing
