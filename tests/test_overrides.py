import copy

import pytest

from conftest import SMALL
from slowstart.loading.scenario import apply_overrides, apply_set, load, parse_set_value
from slowstart.units import ScenarioError


def two_flows() -> dict:
    raw = copy.deepcopy(SMALL)
    raw["flow"].append({"cc": "lss:max_ssthresh=50"})
    return raw


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("8960", 8960),
        ("0.25", 0.25),
        ("false", False),
        ('"1Gbps"', "1Gbps"),
        ("1Gbps", "1Gbps"),
        ("lss:max_ssthresh=100", "lss:max_ssthresh=100"),
        ("[{flow = 0, seq = 5}]", [{"flow": 0, "seq": 5}]),
        ('{name = "lss", max_ssthresh = 7}', {"name": "lss", "max_ssthresh": 7}),
        (" 5s ", "5s"),
    ],
)
def test_set_values_are_toml_else_strings(text, value):
    assert parse_set_value(text) == value


def test_set_indexes_into_flows():
    raw = two_flows()
    apply_set(raw, "flow.1.mss=8960")
    apply_set(raw, "flow.0.delayed_ack=false")
    assert raw["flow"][1]["mss"] == 8960 and "mss" not in raw["flow"][0]
    assert raw["flow"][0]["delayed_ack"] is False


def test_set_star_reaches_every_flow():
    raw = two_flows()
    apply_set(raw, "flow.*.initcwnd=4")
    assert [f["initcwnd"] for f in raw["flow"]] == [4, 4]


def test_set_bare_and_quoted_strings():
    raw = copy.deepcopy(SMALL)
    apply_set(raw, "path.rate=1Gbps")
    assert raw["path"]["rate"] == "1Gbps"
    apply_set(raw, 'path.rate="2Gbps"')
    assert load(raw)["links"][1]["forward"]["rate_bps"] == 2_000_000_000


def test_set_a_cc_parameter_keeps_the_algorithm():
    raw = two_flows()
    apply_set(raw, "flow.1.cc.max_ssthresh=100")
    assert raw["flow"][1]["cc"] == {"name": "lss", "max_ssthresh": 100}
    config = load(raw)
    assert config["flows"][1]["cc"] == {"name": "lss", "params": {"max_ssthresh": 100}}


def test_set_whole_cc_with_equals_in_the_value():
    raw = copy.deepcopy(SMALL)
    apply_set(raw, "flow.0.cc=lss:max_ssthresh=100")
    assert raw["flow"][0]["cc"] == "lss:max_ssthresh=100"


def test_set_creates_trace_table():
    raw = copy.deepcopy(SMALL)
    apply_set(raw, "trace.flow_interval=5ms")
    assert load(raw)["trace"]["flow_interval_ns"] == 5_000_000


def test_set_list_items_and_top_level():
    raw = copy.deepcopy(SMALL)
    raw["path"]["drop"] = [{"flow": 0, "seq": 5}]
    apply_set(raw, "path.drop.0.seq=9")
    apply_set(raw, "duration=3s")
    apply_set(raw, "seed=42")
    config = load(raw)
    assert config["links"][1]["forward"]["drops"] == [{"flow": 0, "seq": 9}]
    assert (config["duration_ns"], config["seed"]) == (3_000_000_000, 42)


def test_set_link_by_name_in_general_form():
    raw = {
        "duration": "1s",
        "nodes": ["a", "b"],
        "link": [
            {"name": "wire", "a": "a", "b": "b", "rate": "1Mbps", "delay": "1ms", "buffer": "10pkt"}
        ],
        "flow": [{"src": "a", "dst": "b"}],
    }
    apply_set(raw, "link.wire.rate=5Mbps")
    assert raw["link"][0]["rate"] == "5Mbps"
    with pytest.raises(ScenarioError, match=r"^--set path\.rate=1: the scenario has no path$"):
        apply_set(raw, "path.rate=1")


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("flow.0.mss", "--set flow.0.mss: expected KEY=VALUE such as flow.0.mss=8960"),
        ("=5", "--set =5: expected KEY=VALUE"),
        ("flow..mss=1", '--set flow..mss=1: empty part in the key "flow..mss"'),
        ("flow.3.mss=1", "--set flow.3.mss=1: no flow.3 (the scenario has 1 flow entries"),
        ("flow.0.foo=1", '--set flow.0.foo=1: unknown key "foo" in flow.0 (accepted: cc, size,'),
        ("bogus=1", '--set bogus=1: unknown key "bogus" in the scenario (accepted: name,'),
        ("path.speed=1", '--set path.speed=1: unknown key "speed" in path'),
        ("duration.x=1", "--set duration.x=1: duration is a value, not a table"),
        ("flow.0.cc.a.b=1", "--set flow.0.cc.a.b=1: expected flow.0.cc.PARAM=VALUE"),
        ("path.drop.0.seq=1", "--set path.drop.0.seq=1: the scenario has no path.drop"),
    ],
)
def test_bad_set_paths(item, message):
    raw = copy.deepcopy(SMALL)
    with pytest.raises(ScenarioError) as err:
        apply_set(raw, item)
    assert str(err.value).startswith(message), str(err.value)


def test_set_value_is_still_validated():
    with pytest.raises(
        ScenarioError, match=r'^flow\.0\.mss: expected a positive integer, got "abc"$'
    ):
        load(SMALL, set=["flow.0.mss=abc"])


def test_override_order_cc_then_set_then_seed_and_duration():
    raw = apply_overrides(
        two_flows(),
        cc="aimd:a=15,b=0.3",
        set=["flow.1.cc=reno", "seed=1"],
        seed=9,
        duration="7s",
    )
    assert [f["cc"] for f in raw["flow"]] == ["aimd:a=15,b=0.3", "reno"]
    config = load(raw)
    assert config["flows"][0]["cc"] == {"name": "aimd", "params": {"a": 15, "b": 0.3}}
    assert (config["seed"], config["duration_ns"]) == (9, 7_000_000_000)


def test_set_accepts_a_single_string():
    config = load(SMALL, set="flow.0.mss=1000")
    assert config["flows"][0]["mss"] == 1000
