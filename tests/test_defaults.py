"""Every default and bound has one owner, crates/slowstart-config/src/config.rs: the loader reads
the defaults from the core (`_core.defaults()`), so a left-out key loads as the core's default,
and `load` applies the core's bounds."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from slowstart import _core
from slowstart.loading.defaults import (
    canonical_word,
    default_parameters,
    defaults,
    key_names,
    keys,
    size_text,
    spellings,
    time_text,
)
from slowstart.loading.scenario import (
    FLOW_KEYS,
    PATH_KEYS,
    SWARM_BITTORRENT_KEYS,
    SWARM_FLOW_KEYS,
    SWARM_KEYS,
    TRACE_KEYS,
    build_config,
    load,
)
from slowstart.units import ScenarioError

CORE = json.loads(_core.defaults())
PATH = {"rate": "10Mbps", "rtt": "10ms"}
# Flow keys the canonical config holds only when not their default, so that scenarios
# without them keep their canonical form (and their results-store keys).
WRITTEN_WHEN_SET = (
    "ecn",
    "ecn_feedback",
    "receiver_ecn",
    "ecn_reduction",
    "cwnd_limited",
    "pacer",
    "program",
)


def test_every_core_default_is_a_key_the_loader_takes():
    assert set(defaults("flow")) == set(FLOW_KEYS) - {"src", "dst"}  # the ends: [path] or given
    assert set(defaults("trace")) == set(TRACE_KEYS)
    assert set(defaults("path")) <= set(PATH_KEYS)
    assert set(defaults("swarm")) == set(SWARM_KEYS) - {"bittorrent", "tcp", "utp"}
    assert set(defaults("swarm.bittorrent")) == set(SWARM_BITTORRENT_KEYS)
    for kind in ("tcp", "utp"):
        assert set(SWARM_FLOW_KEYS) <= set(defaults(f"swarm.{kind}"))
    assert set(defaults("web")) == set(keys("app.web")) - {"kind", "response"}  # response: given
    assert set(defaults("bittorrent")) == set(keys("app.bittorrent")) - {"kind"}
    # drop-tail: no parameters
    assert set(CORE["queue"]) == set(key_names("queue_kinds")) - {"droptail"}
    for kind in CORE["queue"]:
        assert set(defaults(f"queue.{kind}")) == set(keys(f"queue.{kind}")), kind


def test_a_left_out_key_loads_as_the_cores_default():
    web = {"kind": "web", "response": "1kB"}
    cfg = load({"duration": "1s", "path": PATH, "flow": [{}, {"app": web}, {"app": "bittorrent"}]})
    flow = cfg["flows"][0]
    for key, value in CORE["flow"].items():
        if key in WRITTEN_WHEN_SET:
            assert key not in flow
        else:
            assert flow[key] == value, key
    assert cfg["trace"] == CORE["trace"]
    assert {k: cfg["flows"][1]["app"][k] for k in ("request_bytes", "keep_alive")} == {
        "request_bytes": CORE["web"]["request_bytes"],
        "keep_alive": CORE["web"]["keep_alive"],
    }
    bittorrent = {k: v for k, v in CORE["bittorrent"].items() if v is not None}  # blocks: none
    assert cfg["flows"][2]["app"] == {"kind": "bittorrent", **bittorrent}
    access, bottleneck = cfg["links"]
    assert access["forward"]["rate_bps"] == CORE["path"]["access_rate"]
    assert access["forward"]["queue"] == CORE["path_access_queue"]
    # 1 BDP of 10 Mbps x 10 ms.
    assert bottleneck["forward"]["queue"] == {"bytes": 12_500 * CORE["path"]["buffer"]["bdp"]}
    assert bottleneck["forward"]["loss"] == CORE["path"]["loss"]


def test_a_swarm_left_out_loads_as_the_cores():
    swarm = load({"duration": "10s", "swarm": {}})["swarm"]
    core = CORE["swarm"]
    for kind in ("tcp", "utp"):
        got = {k: v for k, v in swarm.pop(kind).items() if k not in ("src", "dst")}
        want = {k: v for k, v in core.pop(kind).items() if k not in WRITTEN_WHEN_SET}
        assert got == want, kind
    assert swarm == core


def test_an_algorithm_parameter_set_alone_starts_from_the_cores_algorithm():
    # `flow.0.cc.PARAM=VALUE` on a flow that names no algorithm edits the core's default (reno).
    with pytest.raises(ValueError, match='flow.0.cc: reno has no parameter "beta"'):
        load({"duration": "1s", "path": PATH, "flow": [{}]}, set=["flow.0.cc.beta=0.5"])
    utp = load({"duration": "1s", "swarm": {}}, set=["swarm.utp.cc.target=0.05"])["swarm"]["utp"]
    assert utp["cc"] == {"name": "ledbat", "params": {"target": 0.05}}


def parse_queue(table: dict) -> dict:
    """A `[path]`'s `queue` table as the loader reads it: the bottleneck's discipline."""
    raw = {"duration": "1s", "path": {**PATH, "queue": table}, "flow": [{}]}
    return build_config(raw)["links"][1]["forward"]["discipline"]


@pytest.mark.parametrize("kind", ["codel", "fq_codel", "pie", "red"])
def test_a_queue_discipline_as_listed_loads_as_the_cores_defaults(kind):
    """`slowstart list` writes each discipline's defaults as a scenario would; given back,
    they are the core's canonical parameters."""
    listed = tomllib.loads(f'q = {{kind = "{kind}", {default_parameters(kind)}}}')["q"]
    assert parse_queue(listed) == {"kind": kind, **CORE["queue"][kind]}


def test_the_scenario_pages_queue_defaults_are_the_cores():
    """docs/scenarios.md's table of queue disciplines (`target = "5ms"`, ...), read as a
    scenario."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "scenarios.md").read_text("utf-8")
    table = page.split("### Queue disciplines", 1)[1].split("\n\n", 2)[1]
    body = table.splitlines()[2:]  # under the header and its rule
    rows = {m[1]: m[2] for m in (re.match(r"\| `(\w+)` \| (.*) \|$", line) for line in body) if m}
    assert set(rows) == set(CORE["queue"]), rows
    for kind, text in rows.items():
        written = dict(re.findall(r"`(\w+) = ([^`]+)`", text))
        assert written, kind
        table = tomllib.loads("\n".join(f"{k} = {v}" for k, v in written.items()))
        canonical = parse_queue({"kind": kind, **table})
        for key, value in canonical.items():
            assert value == CORE["queue"][kind].get(key, kind), (kind, key)


@pytest.mark.parametrize(
    ("n", "text"), [(33_554_432, "32MiB"), (1514, "1514B"), (100_000_000, "100MB"), (0, "0B")]
)
def test_sizes_are_written_in_the_largest_exact_unit(n, text):
    assert size_text(n) == text


@pytest.mark.parametrize(
    ("ns", "text"),
    [(0, "0s"), (120_000_000_000, "120s"), (40_000_000, "40ms"), (1_500, "1500ns"), (7_000, "7us")],
)
def test_times_are_written_in_the_largest_exact_unit(ns, text):
    assert time_text(ns) == text


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("mss", 70_000, "flow.0.mss: must be in 1..=65000, got 70000"),
        ("header_bytes", 65_000, "flow.0.header_bytes: must be in 0..=1024, got 65000"),
        ("initcwnd", 100_001, "flow.0.initcwnd: must be in 1..=100000, got 100001"),
    ],
)
def test_load_checks_the_cores_bounds(key, value, message):
    """The bounds are the core's alone; `load` applies them, naming the field and the range."""
    with pytest.raises(ScenarioError) as err:
        load({"duration": "1s", "path": PATH, "flow": [{key: value}]})
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        (
            {"path": {**PATH, "buffer": "100B"}, "flow": [{}]},
            "path.buffer: 100 bytes hold no full-size packet (1500 bytes with headers)",
        ),
        (
            {"path": {**PATH, "reverse_buffer": "100B"}, "flow": [{}]},
            "path.reverse_buffer: 100 bytes hold no full-size packet",
        ),
        (
            {
                "nodes": ["a", "b"],
                "link": [{"a": "a", "b": "b", "rate": "1Mbps", "delay": "1ms", "buffer": "9B"}],
                "flow": [{"src": "a", "dst": "b"}],
            },
            "link.0.buffer: 9 bytes hold no full-size packet",
        ),
    ],
)
def test_the_cores_link_errors_name_the_scenarios_field(scenario, message):
    with pytest.raises(ScenarioError) as err:
        load({"duration": "1s", **scenario})
    assert str(err.value).startswith(message), err.value


def test_a_bdp_buffer_too_small_for_a_packet_names_the_rate_too():
    """Issue #15: `rate = "1bps"` was blamed on path.buffer alone."""
    with pytest.raises(ScenarioError) as err:
        load({"duration": "1s", "path": {**PATH, "rate": "1bps"}, "flow": [{}]})
    assert str(err.value).startswith('path.buffer: "1bdp" of a 0.00125-byte BDP (path.rate x')


def test_choices_are_the_cores_words():
    """The loader turns a scenario's word into the canonical value the core lists for it and
    leaves any other value to the core, which names the field and every word it accepts."""
    assert canonical_word("population", "50-50") == "mixed"
    assert canonical_word("seeding", "never-leave") == "never_leave"
    assert canonical_word("recovery", "prr") == "prr"
    assert canonical_word("population", "quic") == "quic"
    assert canonical_word("population", 3) == 3
    assert spellings() == {
        "mixed": "50-50",
        "never_leave": "never-leave",
        "random_stay": "random-stay",
    }
    raw = {"duration": "1s", "swarm": {"population": "quic"}}
    with pytest.raises(ScenarioError) as err:
        load(raw)
    assert str(err.value) == 'swarm.population: expected one of tcp, utp, 50-50, mixed, got "quic"'


@pytest.mark.parametrize(
    ("given", "written"), [(None, None), ("linux", None), ("strict", "strict")]
)
def test_cwnd_limited_is_written_only_when_not_the_cores_default(given, written):
    flow = {} if given is None else {"cwnd_limited": given}
    swarm = {"tcp": flow}
    assert (
        load({"duration": "1s", "path": PATH, "flow": [flow]})["flows"][0].get("cwnd_limited")
        == written
    )
    assert load({"duration": "1s", "swarm": swarm})["swarm"]["tcp"].get("cwnd_limited") == written


def test_pacer_is_written_when_set_and_its_words_and_needs_checked():
    flow = {"pacing": True, "pacer": "quinn"}
    assert load({"duration": "1s", "path": PATH, "flow": [flow]})["flows"][0]["pacer"] == "quinn"
    assert "pacer" not in load({"duration": "1s", "path": PATH, "flow": [{}]})["flows"][0]
    for bad, message in (
        ({"pacing": True, "pacer": "fq"}, 'flow.0.pacer: expected one of linux, quinn, got "fq"'),
        ({"pacer": "quinn"}, 'flow.0.pacer: a pacer other than "linux" paces every packet'),
    ):
        with pytest.raises(ScenarioError) as err:
            load({"duration": "1s", "path": PATH, "flow": [bad]})
        assert message in str(err.value)


def test_ecn_reduction_is_written_when_set_and_its_words_and_needs_checked():
    flow = {"cc": "dctcp", "ecn_reduction": "prr"}
    got = load({"duration": "1s", "path": PATH, "flow": [flow]})["flows"][0]
    assert got["ecn_reduction"] == "prr"
    assert "ecn_reduction" not in load({"duration": "1s", "path": PATH, "flow": [{}]})["flows"][0]
    for bad, message in (
        (
            {"ecn": True, "ecn_reduction": "slow"},
            'flow.0.ecn_reduction: expected one of immediate, prr, got "slow"',
        ),
        ({"ecn_reduction": "prr"}, 'flow.0.ecn_reduction: a reduction other than "immediate"'),
    ):
        with pytest.raises(ScenarioError) as err:
            load({"duration": "1s", "path": PATH, "flow": [bad]})
        assert message in str(err.value)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"path": PATH, "flow": [{"cwnd_limited": "loose"}]},
            'flow.0.cwnd_limited: expected one of linux, strict, got "loose"',
        ),
        (
            {"path": PATH, "flow": [{"cwnd_limited": True}]},
            "flow.0.cwnd_limited: expected one of linux, strict, got true",
        ),
        (
            {"swarm": {"utp": {"cwnd_limited": 2}}},
            "swarm.utp.cwnd_limited: expected one of linux, strict, got 2",
        ),
    ],
)
def test_a_bad_cwnd_limited_is_refused_by_the_core_with_its_words(raw, message):
    assert canonical_word("cwnd_limited", "strict") == "strict"
    with pytest.raises(ScenarioError) as err:
        load({"duration": "1s", **raw})
    assert str(err.value) == message
