"""The loader takes exactly the scenario keys the core lists (crates/slowstart-config/src/keys.rs,
through `_core.defaults()`), and each key it reads one by one reaches the canonical field the
core names for it."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from slowstart import _core
from slowstart.loading.defaults import (
    canonical_word,
    defaults,
    key_names,
    key_table,
    key_units,
    keys,
)
from slowstart.loading.scenario import build_config
from slowstart.units import ScenarioError, parse_rate, parse_size, parse_time

# The choices the core lists words for (config.rs `words_json`).
WORDS = json.loads(_core.defaults())["words"]

PATH_SCENARIO: dict[str, Any] = {
    "duration": "1s",
    "path": {"rate": "10Mbps", "rtt": "20ms"},
    "flow": [{}],
    "cross": [{}],
    "trace": {},
}
LINK_SCENARIO: dict[str, Any] = {
    "duration": "1s",
    "nodes": ["a", "b"],
    "link": [{"a": "a", "b": "b", "rate": "10Mbps", "delay": "10ms", "buffer": "100pkt"}],
    "flow": [{"src": "a", "dst": "b"}],
}
SWARM_SCENARIO: dict[str, Any] = {
    "duration": "1s",
    "swarm": {"bittorrent": {}, "tcp": {}, "utp": {}},
}

# (table in keys.rs, its defaults' table, the scenario, the table's place in it and in the
# canonical config)
TABLES = [
    ("flow", "flow", PATH_SCENARIO, ("flow", 0), ("flows", 0)),
    ("cross", "cross", PATH_SCENARIO, ("cross", 0), ("cross", 0)),
    ("trace", "trace", PATH_SCENARIO, ("trace",), ("trace",)),
    ("link", None, LINK_SCENARIO, ("link", 0), ("links", 0)),
    ("swarm", "swarm", SWARM_SCENARIO, ("swarm",), ("swarm",)),
    (
        "swarm.bittorrent",
        "swarm.bittorrent",
        SWARM_SCENARIO,
        ("swarm", "bittorrent"),
        ("swarm", "bittorrent"),
    ),
    ("swarm.transport", "swarm.tcp", SWARM_SCENARIO, ("swarm", "tcp"), ("swarm", "tcp")),
]

# The unit kinds the test gives another value of (and "word", from WORDS), and how it reads one.
PARSERS = {
    "time": parse_time,
    "rate": parse_rate,
    "size": parse_size,
    "count": lambda value, field: value,
    "positive": lambda value, field: value,
    "bool": lambda value, field: value,
}


def other_value(unit: str, given: Any, key: str) -> tuple[Any, Any]:
    """A scenario value of `unit` other than `given` (None: nothing given), and its canonical
    value."""
    if unit == "word":
        default = canonical_word(key, given)
        word = next(w for w, value in WORDS[key].items() if value != default)
        return word, WORDS[key][word]
    if unit == "bool":
        return (not given, not given) if given is not None else (True, True)
    if unit in ("count", "positive"):
        value = 3 if given is None else given + 1
        return value, value
    base = 0 if given is None else PARSERS[unit](given, "")
    step = {"time": 1000, "rate": 1000, "size": 1}[unit]
    value = base + step
    suffix = {"time": "ns", "rate": "bps", "size": "B"}[unit]
    return f"{value}{suffix}", value


def place(node: Any, where: tuple[str | int, ...]) -> Any:
    for part in where:
        node = node[part]
    return node


def field_value(table: dict[str, Any], field: str) -> Any:
    for part in field.split("."):
        table = table[part]
    return table


def reachable_keys() -> list[tuple[str, str]]:
    return [
        (table, key)
        for table, *_ in TABLES
        for key, (unit, field) in key_units(table).items()
        if (unit in PARSERS or (unit == "word" and key in WORDS)) and field is not None
    ]


def test_the_core_lists_keys_the_loader_reads_one_by_one():
    # Guards the test below: it sees the flow's, the swarm's and the link's keys.
    tables = {table for table, _ in reachable_keys()}
    assert tables == {table for table, *_ in TABLES}
    assert ("flow", "initcwnd") in reachable_keys()
    assert ("swarm", "up") in reachable_keys()
    assert ("swarm.bittorrent", "piece_picker") in reachable_keys()


@pytest.mark.parametrize(("table", "key"), reachable_keys())
def test_every_key_reaches_the_canonical_field_the_core_names(table: str, key: str) -> None:
    """A value other than the default, given under the key, is what the canonical config holds
    in the field keys.rs names: a key the core lists is never accepted and dropped."""
    _, defaults_of, scenario, raw_at, config_at = next(t for t in TABLES if t[0] == table)
    unit, field = key_units(table)[key]
    raw = copy.deepcopy(scenario)
    item = place(raw, raw_at)
    given = item.get(key, defaults(defaults_of).get(key) if defaults_of else None)
    value, expected = other_value(unit, given, key)
    item[key] = value
    config = build_config(raw)  # units only; the core's bounds are not the point here
    assert field_value(place(config, config_at), field) == expected


@pytest.mark.parametrize(("table", "where"), [("top", ()), *((t[0], t[3]) for t in TABLES)])
def test_a_key_the_core_does_not_list_is_refused_naming_those_it_does(
    table: str, where: tuple[str | int, ...]
) -> None:
    scenario = next((t[2] for t in TABLES if t[0] == table), PATH_SCENARIO)
    raw = copy.deepcopy(scenario)
    place(raw, where)["no_such_key"] = 1
    field = ".".join(str(p) for p in (*where, "no_such_key"))
    accepted = ", ".join(keys(table))
    with pytest.raises(ScenarioError) as e:
        build_config(raw)
    assert str(e.value) == f"{field}: unknown key (accepted: {accepted})"


# Every `[path]` and `[[link]]` key given (buffers in packets, so that no other key moves them),
# and another value of each that changes every field it fills.
TRACE = {"trace": "traces/steps.txt"}
PATH_GIVEN: dict[str, tuple[Any, Any]] = {
    "rate": ("10Mbps", TRACE),
    "rtt": ("20ms", "30ms"),
    "buffer": ("100pkt", "200pkt"),
    "loss": (0.01, {"p": 0.01}),
    "access_rate": ("1Gbps", "2Gbps"),
    "reverse_rate": ("5Mbps", TRACE),
    "reverse_buffer": ("50pkt", "60pkt"),
    "jitter": ("1ms", "2ms"),
    "drop": ([{"flow": 0, "seq": 3}], [{"flow": 0, "seq": 4}]),
    "queue": ("codel", "pie"),
    "reverse_queue": ("pie", "codel"),
    "ecn": (False, True),
}
LINK_GIVEN: dict[str, tuple[Any, Any]] = {
    "name": ("ab", "ba"),
    "a": ("a", "c"),
    "b": ("b", "c"),
    "delay": ("10ms", "11ms"),
    "reverse_delay": ("12ms", "13ms"),
    **{k: v for k, v in PATH_GIVEN.items() if k not in ("rtt", "access_rate")},
}
SHORTHANDS = [
    ("path", PATH_GIVEN, {"path": {}, "flow": [{}]}, ("path",), ""),
    (
        "link",
        LINK_GIVEN,
        {"nodes": ["a", "b", "c"], "link": [{}], "flow": [{"src": "a", "dst": "b"}]},
        ("link", 0),
        "links.0.",
    ),
]


def leaves(node: Any, at: str = "") -> dict[str, Any]:
    """Every value below `node` by its dotted place (an empty table or list is one)."""
    if isinstance(node, dict | list) and node:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        return {k: v for key, child in items for k, v in leaves(child, f"{at}{key}.").items()}
    return {at.rstrip("."): node}


@pytest.mark.parametrize(("table", "key"), [(t[0], key) for t in SHORTHANDS for key in t[1]])
def test_a_link_key_changes_exactly_the_canonical_fields_the_core_lists(table, key):
    """The fields keys.rs lists for a `[path]` or `[[link]]` key are the ones its value
    reaches: the loader names the core's messages about them after it (`scenario_field`)."""
    _, given, scenario, where, below = next(t for t in SHORTHANDS if t[0] == table)
    raw = copy.deepcopy({"duration": "1s", **scenario})
    place(raw, where).update({k: before for k, (before, _) in given.items()})
    before = leaves(build_config(copy.deepcopy(raw)))
    place(raw, where)[key] = given[key][1]
    after = leaves(build_config(raw))
    changed = {f for f in before.keys() | after.keys() if before.get(f, ()) != after.get(f, ())}
    listed = [below + field for field, _ in key_table(table)[key].fields]

    def under(place: str, field: str) -> bool:
        return place == field or place.startswith(field + ".")

    assert {f for f in changed if not any(under(f, field) for field in listed)} == set()
    assert [field for field in listed if not any(under(f, field) for f in changed)] == []


def test_every_link_key_is_tried():
    assert set(PATH_GIVEN) == set(keys("path"))
    assert set(LINK_GIVEN) == set(keys("link"))


@pytest.mark.parametrize(
    "key", [key for key, k in key_table("flow").items() if k.unwritten and k.unit != "table"]
)
def test_a_field_written_only_when_set_is_left_out_at_the_value_the_core_names(key):
    """As config.rs serializes a flow, so the loader writes it: a scenario without ECN keeps
    its canonical form."""
    k = key_table("flow")[key]
    (field, _), *_ = k.fields
    other, _ = other_value(k.unit, k.unwritten[0], key)
    for value, written in [(k.unwritten[0], False), (other, True)]:
        raw = copy.deepcopy(PATH_SCENARIO)
        raw["flow"][0][key] = value
        flow = build_config(raw)["flows"][0]
        assert (field in flow) == written, (value, flow.get(field))


APP_SCENARIOS = [
    ("app.web", "web", {"kind": "web", "response": "17kB"}),
    ("app.bittorrent", "bittorrent", {"kind": "bittorrent"}),
]


@pytest.mark.parametrize(
    ("table", "key"),
    [
        (table, key)
        for table, *_ in APP_SCENARIOS
        for key, (unit, field) in key_units(table).items()
        if unit in PARSERS and field is not None
    ],
)
def test_every_application_key_reaches_the_canonical_field_the_core_names(table, key):
    """An application's keys are the core's too (keys.rs `app.KIND`), and each reaches its
    field of the canonical app."""
    _, defaults_of, app = next(a for a in APP_SCENARIOS if a[0] == table)
    unit, field = key_units(table)[key]
    raw = copy.deepcopy(PATH_SCENARIO)
    raw["flow"][0]["app"] = {**app}
    value, expected = other_value(unit, defaults(defaults_of).get(key), key)
    raw["flow"][0]["app"][key] = value
    assert build_config(raw)["flows"][0]["app"][field] == expected


@pytest.mark.parametrize(
    ("kind", "key"),
    [(kind, key) for kind in key_names("queue_kinds") for key in keys(f"queue.{kind}")],
)
def test_every_queue_parameter_reaches_the_canonical_field_the_core_names(kind, key):
    """A queue discipline's parameters are the core's too (keys.rs `queue.KIND`), and each
    reaches its field of the canonical discipline."""
    unit, field = key_units(f"queue.{kind}")[key]
    given = defaults(f"queue.{kind}")[key]
    if unit in ("gain", "packets", "fraction"):  # a number: half the default stays in range
        value = expected = given / 2
    else:
        value, expected = other_value(unit, given, key)
    raw = copy.deepcopy(PATH_SCENARIO)
    raw["path"]["queue"] = {"kind": kind, key: value}
    discipline = build_config(raw)["links"][1]["forward"]["discipline"]
    assert discipline[field] == expected
