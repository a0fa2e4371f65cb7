"""Scenario loading: a TOML file (or dict) plus overrides → the canonical config for the core.

The canonical config mirrors the serde structs in crates/slowstart-config/src/config.rs: integer
ns, bytes and bits per second. That file owns every default (read here through
slowstart.loading.defaults) and every bound (`load` has the core check the result); this module owns
the scenario's words: units, the `[path]` shorthand, overrides. Every error is a ScenarioError
whose message starts with the dotted field (`flow.0.mss`, `path.rate`) and says what is
accepted.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import re
import tomllib
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.loading import apps, guests
from slowstart.loading.apps import parse_app, parse_program
from slowstart.loading.defaults import (
    canonical_word,
    defaults,
    has_words,
    key_names,
    key_table,
    key_units,
    keys,
    limits,
)
from slowstart.loading.queues import (
    Trace,
    parameter_key,
    parse_gilbert_elliott,
    parse_queue,
    parse_rate_or_trace,
)
from slowstart.paths import read_user_text, scenario_path
from slowstart.units import (
    ScenarioError,
    parse_bool,
    parse_buffer,
    parse_int,
    parse_loss,
    parse_number,
    parse_rate,
    parse_size,
    parse_size_or_inf,
    parse_time,
    parse_window,
    resolve_buffer,
    show,
)

_core = lazy.module("slowstart._core")


# Which keys each table takes, in the order messages list them, and in which unit, are the
# core's (crates/slowstart-config/src/keys.rs, through slowstart.loading.defaults); these names
# are read on first use, so importing the loader does not load the extension.
_KEY_TABLES = {
    "TOP_KEYS": "top",
    "PATH_KEYS": "path",
    "LINK_KEYS": "link",
    "DROP_KEYS": "drop",
    "TRACE_KEYS": "trace",
    "FLOW_KEYS": "flow",
    "SWARM_KEYS": "swarm",
    "SWARM_BITTORRENT_KEYS": "swarm.bittorrent",
    # A swarm transport takes a [[flow]] table's keys but for what the swarm decides itself.
    "SWARM_FLOW_KEYS": "swarm.transport",
}


def __getattr__(name: str) -> Any:
    """TOP_KEYS, PATH_KEYS, ... (each table's keys); CROSS_FIELDS (`[[cross]]`: key → (unit,
    canonical field)); SWARM_TABLES; NOT_WITH_SWARM (top-level keys a swarm must not give)."""
    if name in _KEY_TABLES:
        return keys(_KEY_TABLES[name])
    if name == "CROSS_FIELDS":
        return key_units("cross")
    if name in ("SWARM_TABLES", "NOT_WITH_SWARM"):
        return key_names(name.lower())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


PATH_NODES = ["sender", "router", "receiver"]


def _at(field: str, key: str | int) -> str:
    return f"{field}.{key}" if field else str(key)


def check_table(value: object, field: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScenarioError(f"{field or 'scenario'}: expected a table, got {show(value)}")
    for key in value:
        if key not in keys:
            raise ScenarioError(f"{_at(field, key)}: unknown key (accepted: {', '.join(keys)})")
    return value


def require(table: dict[str, Any], field: str, key: str, what: str) -> Any:
    if key not in table:
        raise ScenarioError(f"{_at(field, key)}: missing (expected {what})")
    return table[key]


def parse_str(value: object, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise ScenarioError(f"{field}: expected a non-empty string, got {show(value)}")
    return value


# --- congestion control specs -------------------------------------------------------------


def _check_params(field: str, params: dict[str, Any]) -> None:
    """A table's parameter values the core can read: finite numbers (JSON has no NaN or
    infinity; a string's are checked by the core's grammar)."""
    for key, value in params.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ScenarioError(f"{field}: parameter {key} must be a finite number, got {value}")


def _guest_spec(ref: str | type, params: dict[str, Any], field: str) -> dict[str, Any]:
    """A user's controller, loaded: its canonical name (with the content's hash) and source."""
    try:
        spec = guests.resolve(ref, field)
    except guests.GuestError as e:
        raise ScenarioError(str(e)) from None
    return {"name": spec["name"], "params": params, "guest": spec["guest"]}


def parse_cc(value: object, field: str) -> dict[str, Any]:
    """`"name:key=value,..."` (the core's grammar, `_core.parse_cc`) or `{name = ..., key =
    value}` → {"name": ..., "params": {...}}; a user's controller (`x.py:Class`, `x.wasm`, or
    a Controller subclass) also gets "guest", where it came from (loading/guests.py)."""
    if isinstance(value, type):
        return _guest_spec(value, {}, field)
    if isinstance(value, str):
        if not guests.is_reference(value):
            _own_without_suffix(value, field)
        try:
            spec = _core.parse_cc(value, field)
        except UnicodeEncodeError:  # a lone surrogate (from argv) is no text the core reads
            raise ScenarioError(f"{field}: expected {_core.CC_HELP}, got {show(value)}") from None
        except ValueError as e:
            raise ScenarioError(str(e)) from None
        if spec["guest"] is not None:
            return _guest_spec(spec["name"], spec["params"], field)
        return {"name": spec["name"], "params": spec["params"]}
    if not isinstance(value, dict):
        raise ScenarioError(f"{field}: expected {_core.CC_HELP}, got {show(value)}")
    if "name" not in value:
        raise ScenarioError(f"{field}.name: missing (expected {_core.CC_HELP})")
    name = value["name"]
    params = {k: v for k, v in value.items() if k != "name"}
    for key, v in params.items():
        if not isinstance(v, bool | int | float | str):
            raise ScenarioError(
                f"{field}.{key}: expected a number, true/false or a word, got {show(v)}"
            )
    _check_params(field, params)
    if isinstance(name, type):
        return _guest_spec(name, params, field)
    if not isinstance(name, str) or not name.strip():
        raise ScenarioError(f"{field}: expected {_core.CC_HELP}, got {show(value)}")
    # The name is read by the same grammar as a string, so `{name = "x.py:C:g=2"}` keeps g=2.
    spec = parse_cc(name, f"{field}.name")
    twice = sorted(params.keys() & spec["params"].keys())
    if twice:
        raise ScenarioError(f"{field}.{twice[0]}: given both in name and as a key; give it once")
    return {**spec, "params": {**spec["params"], **params}}


def _own_without_suffix(value: str, field: str) -> None:
    """A user's controller written without its file's suffix (`delay_start:DelayStart`) is
    named as one, not read by the built-ins' grammar."""
    name, colon, rest = value.strip().partition(":")
    for suffix in (".py", ".wasm"):
        if name and Path(name + suffix).expanduser().is_file():
            fix = f"{name}{suffix}{colon}{rest}"
            raise ScenarioError(
                f"{field}: {show(value)} names no algorithm; your own controller is written "
                f"PATH.py:CLASS or PATH.wasm: did you mean {show(fix)}?"
            )
    if "/" in name:
        raise ScenarioError(
            f"{field}: {show(value)} names no algorithm; your own controller is written with "
            f"its file's suffix: PATH.py:CLASS or PATH.wasm"
        )


def check_cc(spec: dict[str, Any], field: str, algorithms: list[dict[str, Any]]) -> None:
    """Name and parameter names against the core's registry (values are checked there); a
    user's controller checks its own when it is built."""
    if "guest" in spec:
        return
    by_name = {a["name"]: a for a in algorithms}
    algo = by_name.get(spec["name"])
    if algo is None:
        raise ScenarioError(
            f"{field}: unknown algorithm {show(spec['name'])} "
            f"(accepted: {', '.join(by_name)}; or {guests.HELP})"
        )
    accepted = [p["name"] for p in algo["params"]]
    for key in spec["params"]:
        if key not in accepted:
            raise ScenarioError(
                f"{field}: {algo['name']} has no parameter {show(key)} "
                f"(accepted: {', '.join(accepted) or 'none'})"
            )


def core_algorithms() -> list[dict[str, Any]] | None:
    """The core's algorithm registry, or None when the extension is not built. A fresh copy
    each call, parsed from the registry's JSON read once per process (a sweep loads thousands
    of configs)."""
    text = _core_algorithms_json()
    return None if text is None else json.loads(text)


@functools.cache
def _core_algorithms_json() -> str | None:
    try:
        return _core.algorithms()
    except ImportError:
        return None


# --- reading and overriding ---------------------------------------------------------------


def read_scenario(source: str | os.PathLike[str] | dict[str, Any]) -> dict[str, Any]:
    """The raw scenario: a TOML file (named after its stem unless it says) or a copy of a dict."""
    if isinstance(source, dict):
        return copy.deepcopy(source)
    if not isinstance(source, str | os.PathLike):
        raise ScenarioError(
            f"scenario: expected a .toml path, a scenario name or a dict, got {show(source)}"
        )
    path = scenario_path(os.fspath(source))  # "satellite" finds scenarios/satellite.toml
    raw = read_toml(path, "scenario")
    raw.setdefault("name", path.stem)
    _controllers_from(raw, path.parent)
    return raw


def _controllers_from(raw: dict[str, Any], folder: Path) -> None:
    """Users' controllers the file names are found from its folder (guests.from_folder)."""
    flows = raw.get("flow") if isinstance(raw.get("flow"), list) else []
    swarm = raw.get("swarm") if isinstance(raw.get("swarm"), dict) else {}
    tables = [*flows, *(swarm.get(k) for k in ("tcp", "utp"))]
    for table in tables:
        if not isinstance(table, dict):
            continue
        holder = table["cc"] if isinstance(table.get("cc"), dict) else table
        key = "name" if holder is not table else "cc"
        if key in holder:
            holder[key] = guests.from_folder(holder[key], folder)


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """A TOML file's table (a scenario, a suite): a regular file within the core's bound on
    scenario files, read once; one ScenarioError naming the file when it cannot be read."""
    text = read_user_text(path, f"a .toml {what}", limits()["scenario_file_bytes"])
    return loads_toml(text, str(path))


def loads_toml(text: str, where: str) -> dict[str, Any]:
    """TOML text's table; one ScenarioError naming `where` if it is not TOML, or is nested
    deeper than Python's parser recurses (`x = [[[...]]]`)."""
    try:
        return tomllib.loads(text, parse_float=toml_float)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{where}: invalid TOML: {e}") from None
    except RecursionError:
        raise ScenarioError(f"{where}: invalid TOML: nested too deeply") from None


def toml_float(text: str) -> float | str:
    """A TOML float; one too large for a float (`1e400`) stays its text, for the unit parsers
    to refuse as too large, rather than becoming `inf` (which a size reads as unbounded); one
    too small (`1e-400`, nonzero but 0.0 as a float) stays its text too, for them to refuse
    rather than run as 0 (`path.loss = 1e-400` ran lossless)."""
    x = float(text)
    if math.isinf(x) and "inf" not in text:
        return text
    if x == 0 and any(c in "123456789" for c in text.lower().partition("e")[0]):
        return text
    return x


def parse_set_value(text: str) -> Any:
    """A TOML value (`8960`, `"1Gbps"`, `false`, `[...]`, `{...}`); anything else is a string."""
    try:
        return tomllib.loads(f"v = {text}", parse_float=toml_float)["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()


class _Cc:
    """A `cc` value in the override schema: `KEY.cc.PARAM=VALUE` edits the algorithm's
    parameters, starting from the default of `table` (the core's) where it names none."""

    def __init__(self, table: str) -> None:
        self.table = table

    @property
    def default(self) -> Any:
        return defaults(self.table)["cc"]


@functools.cache
def _schema() -> dict[str, Any]:
    """The override schema: every table's keys (None a value, a dict a table, a list of one
    dict a list of tables, _Cc an algorithm)."""
    drops = [dict.fromkeys(keys("drop"))]
    return {
        **dict.fromkeys(keys("top")),
        "path": {**dict.fromkeys(keys("path")), "drop": drops},
        "link": [{**dict.fromkeys(keys("link")), "drop": drops}],
        "flow": [
            {
                **dict.fromkeys(keys("flow")),
                "cc": _Cc("flow"),
                "app": dict.fromkeys(apps.ALL_KEYS),
                "program": dict.fromkeys(keys("program")),
            }
        ],
        "cross": [dict.fromkeys(keys("cross"))],
        "trace": dict.fromkeys(keys("trace")),
        "swarm": {
            **dict.fromkeys(keys("swarm")),
            "bittorrent": dict.fromkeys(keys("swarm.bittorrent")),
            **{
                kind: {**dict.fromkeys(keys("swarm.transport")), "cc": _Cc(f"swarm.{kind}")}
                for kind in ("tcp", "utp")
            },
        },
    }


def _creatable() -> tuple[str, ...]:
    """Tables `--set` may add where the scenario has none."""
    return ("trace", "app", "program", *key_names("swarm_tables"))


def _set_in(node: Any, parts: list[str], value: Any, schema: Any, done: str, item: str) -> None:
    head, rest = parts[0], parts[1:]
    here = _at(done, head)
    if isinstance(schema, list):
        if not isinstance(node, list):
            raise ScenarioError(f"--set {item}: {done} is not a list in this scenario")
        if head == "*":
            indices = list(range(len(node)))
        elif head.isdigit() and int(head) < len(node):
            indices = [int(head)]
        else:
            named = [i for i, x in enumerate(node) if isinstance(x, dict) and x.get("name") == head]
            if not named and isinstance(schema[0], dict) and head in schema[0]:
                tail = ".".join(parts)
                raise ScenarioError(
                    f"--set {item}: {done} is a list of tables; give {done}.0.{tail} (the "
                    f"first) or {done}.*.{tail} (every one)"
                )
            if not named:
                raise ScenarioError(
                    f"--set {item}: no {here} (the scenario has {len(node)} {done} entries, "
                    f"indexed from 0)"
                )
            indices = named
        for i in indices:
            if rest:
                _set_in(node[i], rest, value, schema[0], _at(done, i), item)
            else:
                node[i] = copy.deepcopy(value)
        return
    if not isinstance(node, dict):
        raise ScenarioError(f"--set {item}: {done} is not a table in this scenario")
    if head not in schema:
        raise ScenarioError(
            f"--set {item}: unknown key {show(head)} in {done or 'the scenario'} "
            f"(accepted: {', '.join(schema)})"
        )
    child = schema[head]
    if not rest:
        node[head] = copy.deepcopy(value)
        return
    if isinstance(child, _Cc):
        spec = parse_cc(node.get(head, child.default), here)
        if len(rest) != 1:
            raise ScenarioError(f"--set {item}: expected {here}.PARAM=VALUE")
        node[head] = {"name": spec["name"], **spec["params"], rest[0]: copy.deepcopy(value)}
        return
    if child is None:
        raise ScenarioError(f"--set {item}: {here} is a value, not a table")
    if head not in node:
        if head not in _creatable():
            raise ScenarioError(f"--set {item}: the scenario has no {here}")
        node[head] = {} if isinstance(child, dict) else []
    _set_in(node[head], rest, value, child, here, item)


def apply_set(raw: dict[str, Any], item: str) -> None:
    """One `KEY=VALUE` override, KEY a dotted path such as `flow.0.mss` or `path.rate`."""
    key, eq, text = item.partition("=")
    key = key.strip()
    if not eq or not key:
        raise ScenarioError(f"--set {item}: expected KEY=VALUE such as flow.0.mss=8960")
    parts = key.split(".")
    if any(not p for p in parts):
        raise ScenarioError(f"--set {item}: empty part in the key {show(key)}")
    try:
        value = parse_set_value(text)
    except RecursionError:
        raise ScenarioError(f"--set {key}: the value is nested too deeply") from None
    if parts[0] == "app":
        # `app.N.KEY` addresses flow N's application, and messages name it so (`app.0.foo`).
        if len(parts) < 2:
            raise ScenarioError(f"--set {item}: expected app.N.KEY=VALUE, N a flow index")
        flows = raw.get("flow")
        count = len(flows) if isinstance(flows, list) else 0
        if not parts[1].isdigit() or int(parts[1]) >= count:
            raise ScenarioError(
                f"--set {item}: no app.{parts[1]} (N in app.N is a flow's index from 0; "
                f"[[flow]] tables in the scenario: {count})"
            )
        index = int(parts[1])
        flow = flows[index]
        if isinstance(flow, dict) and parts[2:]:
            app = flow.setdefault("app", {})
            if isinstance(app, str):
                flow["app"] = {"kind": app}
            schema = _schema()["flow"][0]["app"]
            _set_in(flow["app"], parts[2:], value, schema, f"app.{index}", item)
            return
        parts = ["flow", str(index), "app", *parts[2:]]
    _set_in(raw, parts, value, _schema(), "", item)


def apply_overrides(
    raw: dict[str, Any],
    *,
    cc: str | dict[str, Any] | None = None,
    set: list[str] | tuple[str, ...] | str = (),  # noqa: A002 - the documented keyword
    seed: int | None = None,
    duration: str | int | float | None = None,
) -> dict[str, Any]:
    """Apply `cc` (every flow), then each `set` item, then `seed` and `duration`. In place."""
    if cc is not None and "swarm" in raw:
        raise ScenarioError(
            "--cc: a swarm has no [[flow]] tables; set swarm.tcp.cc or swarm.utp.cc instead"
        )
    if cc is not None:
        flows = raw.get("flow")
        if isinstance(flows, list):
            for flow in flows:
                if isinstance(flow, dict):
                    flow["cc"] = copy.deepcopy(cc)
    items = [set] if isinstance(set, str) else set
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
        raise ScenarioError(
            f'set: expected a list of "key=value" strings such as ["flow.0.initcwnd=20"], '
            f"got {show(set)}"
        )
    for item in items:
        apply_set(raw, item)
    if seed is not None:
        raw["seed"] = seed
    if duration is not None:
        raw["duration"] = duration
    return raw


# --- building the canonical config --------------------------------------------------------


def _direction(
    rate_bps: int,
    delay_ns: int,
    queue: dict[str, int],
    loss: float = 0.0,
    jitter_ns: int = 0,
    drops: list[dict[str, int]] | None = None,
    discipline: dict[str, Any] | None = None,
    ecn: bool = False,
    gilbert_elliott: dict[str, float] | None = None,
    trace: Trace | None = None,
) -> dict[str, Any]:
    d = {
        "rate_bps": rate_bps,
        "delay_ns": delay_ns,
        "queue": queue,
        "loss": loss,
        "jitter_ns": jitter_ns,
        "drops": drops or [],
    }
    if gilbert_elliott is not None:
        d["gilbert_elliott"] = gilbert_elliott
    if trace is not None:
        d["rate_trace_ms"] = trace.times
    # Written only when used, so drop-tail scenarios keep their canonical form.
    if discipline is not None:
        d["discipline"] = discipline
    if ecn:
        d["ecn"] = True
    return d


def _loss(value: object, field: str) -> dict[str, Any]:
    """`loss = 0.01` (independent) or `loss = {p = ..., r = ...}` (Gilbert-Elliott)."""
    if isinstance(value, dict):
        return {"gilbert_elliott": parse_gilbert_elliott(value, field)}
    return {"loss": parse_loss(value, field)}


def _queues(
    table: dict[str, Any], at: str
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, bool]:
    """(forward discipline, reverse discipline, ecn) of a `[path]` or `[[link]]` table; the
    reverse direction runs the forward's discipline unless `reverse_queue` says otherwise."""
    forward = parse_queue(table.get("queue", "droptail"), f"{at}.queue")
    reverse = (
        parse_queue(table["reverse_queue"], f"{at}.reverse_queue")
        if "reverse_queue" in table
        else forward
    )
    ecn = parse_bool(table.get("ecn", False), f"{at}.ecn")
    return forward, reverse, ecn


def _drops(value: object, field: str) -> list[dict[str, int]]:
    """Scheduled drops; which flows and segments exist is the core's to check."""
    if not isinstance(value, list):
        raise ScenarioError(f"{field}: expected a list of {{flow = N, seq = N}}, got {show(value)}")
    drops = []
    for j, item in enumerate(value):
        at = _at(field, j)
        check_table(item, at, keys("drop"))
        flow = parse_int(require(item, at, "flow", "a flow index"), f"{at}.flow")
        seq = require(item, at, "seq", "a data segment number")
        drops.append({"flow": flow, "seq": parse_int(seq, f"{at}.seq", "a positive integer")})
    return drops


def _buffer(value: object, field: str, rate_bps: int, bdp: Fraction | None) -> dict[str, int]:
    return resolve_buffer(parse_buffer(value, field), field, value, rate_bps, bdp)


def expand_path(path: object) -> tuple[list[str], list[dict[str, Any]]]:
    """`[path]` → sender —access— router —bottleneck— receiver."""
    p = {**defaults("path"), **check_table(path, "path", keys("path"))}
    rate, trace = parse_rate_or_trace(
        require(p, "path", "rate", 'a rate such as "250Mbps"'), "path.rate"
    )
    rtt = parse_time(require(p, "path", "rtt", 'a time such as "80ms"'), "path.rtt")
    if rtt == 0:  # the core sees only the two one-way delays, and 0 is a valid delay
        raise ScenarioError("path.rtt: must be positive, got 0")
    bdp = Fraction(rate * rtt, 8 * 10**9)
    reverse_field = "path.reverse_rate" if "reverse_rate" in p else "path.rate"
    reverse_rate, reverse_trace = parse_rate_or_trace(
        p.get("reverse_rate", p["rate"]), reverse_field
    )
    forward_queue = _buffer(p["buffer"], "path.buffer", rate, bdp)
    reverse_field = "path.reverse_buffer" if "reverse_buffer" in p else "path.buffer"
    reverse_queue = _buffer(p.get("reverse_buffer", p["buffer"]), reverse_field, reverse_rate, bdp)
    access_rate = parse_rate(p["access_rate"], "path.access_rate")
    access_queue = defaults("path_access_queue")
    discipline, reverse_discipline, ecn = _queues(p, "path")
    forward = _direction(
        rate,
        rtt // 2,
        forward_queue,
        **_loss(p["loss"], "path.loss"),
        jitter_ns=parse_time(p["jitter"], "path.jitter"),
        drops=_drops(p.get("drop", []), "path.drop"),
        discipline=discipline,
        ecn=ecn,
        trace=trace,
    )
    links = [
        {
            "name": "access",
            "a": "sender",
            "b": "router",
            "forward": _direction(access_rate, 0, access_queue),
            "reverse": _direction(access_rate, 0, dict(access_queue)),
        },
        {
            "name": "bottleneck",
            "a": "router",
            "b": "receiver",
            "forward": forward,
            "reverse": _direction(
                reverse_rate,
                rtt - rtt // 2,
                reverse_queue,
                discipline=reverse_discipline,
                ecn=ecn,
                trace=reverse_trace,
            ),
        },
    ]
    return list(PATH_NODES), links


def _nodes(value: object) -> list[str]:
    if not isinstance(value, list) or not value:
        raise ScenarioError(
            f'nodes: expected a list of node names such as ["a", "b"], got {show(value)}'
        )
    nodes: dict[str, None] = {}  # ordered, and a set: a long list is checked in linear time
    for i, name in enumerate(value):
        name = parse_str(name, f"nodes.{i}")
        if name in nodes:
            raise ScenarioError(f"nodes.{i}: {show(name)} is listed twice")
        nodes[name] = None
    if len(nodes) < 2:
        raise ScenarioError("nodes: at least two nodes are needed")
    return list(nodes)


def _node_list(nodes: list[str]) -> str:
    """Node names for a message: the first few of many."""
    more = len(nodes) - 8
    return ", ".join(nodes[:8]) + (f", and {more} more" if more > 0 else "")


def _node_ref(value: object, field: str, nodes: list[str], known: set[str]) -> str:
    if not isinstance(value, str) or value not in known:
        raise ScenarioError(f"{field}: unknown node {show(value)} (nodes: {_node_list(nodes)})")
    return value


def expand_links(raw: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """The general form: `nodes = [...]` and `[[link]]` tables."""
    nodes = _nodes(require(raw, "", "nodes", "a list of node names"))
    items = require(raw, "", "link", "[[link]] tables")
    if not isinstance(items, list) or not items:
        raise ScenarioError(f"link: expected one or more [[link]] tables, got {show(items)}")
    links = []
    known, names = set(nodes), set()
    for i, item in enumerate(items):
        at = f"link.{i}"
        check_table(item, at, keys("link"))
        a = _node_ref(require(item, at, "a", "a node name"), f"{at}.a", nodes, known)
        b = _node_ref(require(item, at, "b", "a node name"), f"{at}.b", nodes, known)
        if a == b:
            raise ScenarioError(f"{at}.b: a link needs two different nodes, got {show(b)} twice")
        name = parse_str(item.get("name", f"{a}-{b}"), f"{at}.name")
        if name in names:
            raise ScenarioError(f"{at}.name: {show(name)} is used by another link")
        names.add(name)
        rate, trace = parse_rate_or_trace(
            require(item, at, "rate", 'a rate such as "1Gbps"'), f"{at}.rate"
        )
        delay = parse_time(
            require(item, at, "delay", 'a one-way delay such as "10ms"'), f"{at}.delay"
        )
        buffer = require(item, at, "buffer", 'a buffer such as "200pkt", "1MB" or "50ms"')
        reverse_rate, reverse_trace = parse_rate_or_trace(
            item.get("reverse_rate", item["rate"]), f"{at}.reverse_rate"
        )
        reverse_delay = parse_time(item.get("reverse_delay", item["delay"]), f"{at}.reverse_delay")
        reverse_field = f"{at}.reverse_buffer" if "reverse_buffer" in item else f"{at}.buffer"
        discipline, reverse_discipline, ecn = _queues(item, at)
        links.append(
            {
                "name": name,
                "a": a,
                "b": b,
                "forward": _direction(
                    rate,
                    delay,
                    _buffer(buffer, f"{at}.buffer", rate, None),
                    **_loss(item.get("loss", 0), f"{at}.loss"),
                    jitter_ns=parse_time(item.get("jitter", 0), f"{at}.jitter"),
                    drops=_drops(item.get("drop", []), f"{at}.drop"),
                    discipline=discipline,
                    ecn=ecn,
                    trace=trace,
                ),
                "reverse": _direction(
                    reverse_rate,
                    reverse_delay,
                    _buffer(item.get("reverse_buffer", buffer), reverse_field, reverse_rate, None),
                    discipline=reverse_discipline,
                    ecn=ecn,
                    trace=reverse_trace,
                ),
            }
        )
    return nodes, links


def build_flow(
    item: object,
    i: int,
    nodes: list[str],
    known: set[str],
    default_ends: tuple[str, str] | None,
    algorithms: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    """Flow `i`; `known` is the set of `nodes`."""
    at = f"flow.{i}"
    f = {**defaults("flow"), "src": None, "dst": None, **check_table(item, at, keys("flow"))}
    ends = []
    for end, default in zip(("src", "dst"), default_ends or (None, None), strict=True):
        value = f[end] if f[end] is not None else default
        if value is None:
            raise ScenarioError(
                f"{at}.{end}: missing (with nodes and [[link]], every flow names its {end}; "
                f"nodes: {_node_list(nodes)})"
            )
        ends.append(_node_ref(value, f"{at}.{end}", nodes, known))
    src, dst = ends
    return {
        **transport("flow", f, at, algorithms, {"src": lambda *_: src, "dst": lambda *_: dst}),
        "app": parse_app(f["app"], i),
        **({} if f["program"] is None else {"program": parse_program(f["program"], i)}),
    }


def transport(
    table: str,
    f: dict[str, Any],
    at: str,
    algorithms: list[dict[str, Any]] | None,
    by_hand: dict[str, Reader] | None = None,
) -> dict[str, Any]:
    """A flow's keys but its application (`table` "flow", or "swarm.transport" for all of
    FlowConfig but its ends, size, start and app); `f` holds every key of `table`, errors are
    named `at.KEY`. Ranges and choices (`recovery`, `pacer`, ...) are the core's to check; by
    hand here only the algorithm and the windows, which may be given in segments of the MSS."""

    def cc(value: object, field: str, _: dict[str, Any]) -> dict[str, Any]:
        spec = parse_cc(value, field)
        if algorithms is not None:
            check_cc(spec, field, algorithms)
        return spec

    def window(value: object, field: str, done: dict[str, Any]) -> int | None:
        return parse_window(value, field, filled(done, table, "mss"))

    windows = {key: window for key, k in key_table(table).items() if k.unit == "window"}
    return read_keys(table, f, at, {"cc": cc, **windows, **(by_hand or {})})


# A key read by hand: its value, its field's name for messages, and what is read so far.
Reader = Callable[[object, str, dict[str, Any]], Any]


def _delay_range(value: object, field: str) -> tuple[int, int]:
    """`["1ms", "25ms"]` (uniform between) or one time (every link the same)."""
    if not isinstance(value, list):
        one = parse_time(value, field)
        return one, one
    if len(value) != 2:
        raise ScenarioError(
            f'{field}: expected a time or a [min, max] pair such as ["1ms", "25ms"], '
            f"got {len(value)} values"
        )
    low, high = (parse_time(v, f"{field}.{k}") for k, v in enumerate(value))
    return low, high


# How a key reads its value where the key alone says how, by its unit kind (keys.rs `Unit`);
# a key of another kind (an algorithm, a window, a buffer) is read by hand where its table is.
_READ: dict[str, Callable[[object, str], Any]] = {
    "time": parse_time,
    "rate": parse_rate,
    "size": parse_size,
    "size_or_inf": parse_size_or_inf,
    "count": parse_int,
    "positive": lambda value, field: parse_int(value, field, "a positive integer"),
    "number": lambda value, field: parse_number(value, field, "a number >= 0"),
    "bool": parse_bool,
    "time_range": _delay_range,
}


def read_keys(
    table: str, given: dict[str, Any], at: str, by_hand: dict[str, Reader] | None = None
) -> dict[str, Any]:
    """The canonical fields `table`'s keys in `given` fill, in the table's order: each value
    read as its unit kind says, a word as the core lists its words (else as a name), `by_hand`
    given what is read so far; errors are named `at.KEY`. A key of a table is left to the
    caller. A field the core writes only when set (keys.rs `unwritten`) is left out at the
    value it is not written at, so that the config keeps its canonical form."""
    out: dict[str, Any] = {}
    by_hand = by_hand or {}
    for key, k in key_table(table).items():
        if key not in given:
            continue
        value, field = given[key], f"{at}.{key}"
        if key in by_hand:
            value = by_hand[key](value, field, out)
        elif k.unit == "word":
            value = canonical_word(key, value) if has_words(key) else parse_str(value, field)
        elif k.unit in _READ:
            value = _READ[k.unit](value, field)
        elif k.unit in ("table", "tables"):
            continue
        else:  # the loader's own mistake, never the user's
            raise TypeError(f"{field}: no reader for unit {k.unit!r} (scenario.py `read_keys`)")
        if k.unwritten and value == k.unwritten[0]:
            continue
        for (name, _), v in zip(k.fields, value if len(k.fields) > 1 else (value,), strict=True):
            node = out
            *parents, last = name.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[last] = v
    return out


def filled(done: dict[str, Any], table: str, key: str) -> Any:
    """The value `table`'s `key` filled in `done` (read by `read_keys`)."""
    (field, _), *_ = key_table(table)[key].fields
    for part in field.split("."):
        done = done[part]
    return done


def build_cross(item: object, i: int) -> dict[str, Any]:
    """A `[[cross]]` table → the canonical CrossConfig: units resolved, nothing else decided
    here (what is left out takes config.rs's default; the core checks the values)."""
    at = f"cross.{i}"
    return read_keys("cross", check_table(item, at, keys("cross")), at)


# --- the [swarm] table --------------------------------------------------------------------


def _stop_after(value: object, field: str) -> int | None:
    if isinstance(value, str) and value.strip() == "none":
        return None
    what = 'a number of completions (a positive integer) or "none"'
    return parse_int(value, field, what)


def _swarm_transport(
    kind: str, value: object, algorithms: list[dict[str, Any]] | None
) -> dict[str, Any]:
    at = f"swarm.{kind}"
    f = {**defaults(at), **check_table(value, at, keys("swarm.transport"))}
    return {
        "src": "uploader",
        "dst": "downloader",
        "size_bytes": None,
        "start_ns": 0,
        **transport("swarm.transport", f, at, algorithms),
        "app": {"kind": "bulk"},
    }


def _swarm_bittorrent(value: object) -> dict[str, Any]:
    at = "swarm.bittorrent"
    return read_keys(at, {**defaults(at), **check_table(value, at, keys(at))}, at)


def build_swarm(value: object, algorithms: list[dict[str, Any]] | None) -> dict[str, Any]:
    """`[swarm]` → the canonical SwarmConfig (crates/slowstart-config/src/config.rs); by hand
    only what a key's value does not say alone: the access buffers at their rates."""
    w = {**defaults("swarm"), "bittorrent": {}, "tcp": {}, "utp": {}}
    w.update(check_table(value, "swarm", keys("swarm")))

    def buffer(rate: str) -> Reader:
        return lambda value, field, done: _buffer(value, field, filled(done, "swarm", rate), None)

    by_hand = {
        "stop_after": lambda value, field, _: _stop_after(value, field),
        "buffer": buffer("up"),
        "down_buffer": buffer("down"),
    }
    return {
        **read_keys("swarm", w, "swarm", by_hand),
        "bittorrent": _swarm_bittorrent(w["bittorrent"]),
        "tcp": _swarm_transport("tcp", w["tcp"], algorithms),
        "utp": _swarm_transport("utp", w["utp"], algorithms),
    }


def build_trace(value: object) -> dict[str, int]:
    t = {**defaults("trace"), **check_table(value, "trace", keys("trace"))}
    return read_keys("trace", t, "trace")


def build_config(
    raw: dict[str, Any], algorithms: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Validate a raw scenario and resolve it to the canonical config."""
    check_table(raw, "", keys("top"))
    name = parse_str(raw.get("name", "scenario"), "name")
    if "description" in raw and not isinstance(raw["description"], str):
        raise ScenarioError(f"description: expected a string, got {show(raw['description'])}")
    duration = parse_time(require(raw, "", "duration", 'a time such as "60s"'), "duration")
    seed = parse_int(raw.get("seed", 0), "seed")
    if "swarm" in raw:
        for key in key_names("not_with_swarm"):
            if key in raw:
                raise ScenarioError(
                    f"{key}: a scenario with [swarm] builds its own peers, links and "
                    f"connections; remove {key}"
                )
        return {
            "name": name,
            "seed": seed,
            "duration_ns": duration,
            "nodes": [],
            "links": [],
            "flows": [],
            "trace": build_trace(raw.get("trace", {})),
            "swarm": build_swarm(raw["swarm"], algorithms),
        }
    flows = raw.get("flow")
    if not isinstance(flows, list) or not flows:
        raise ScenarioError("flow: at least one [[flow]] table is needed")
    if "path" in raw:
        if "nodes" in raw or "link" in raw:
            raise ScenarioError("path: give either [path] or nodes and [[link]], not both")
        nodes, links = expand_path(raw["path"])
        default_ends: tuple[str, str] | None = ("sender", "receiver")
    elif "nodes" in raw or "link" in raw:
        nodes, links = expand_links(raw)
        default_ends = None
    else:
        raise ScenarioError(
            "path: missing (give a [path] table, or nodes = [...] with [[link]] tables)"
        )
    known = set(nodes)
    config = {
        "name": name,
        "seed": seed,
        "duration_ns": duration,
        "nodes": nodes,
        "links": links,
        "flows": [
            build_flow(f, i, nodes, known, default_ends, algorithms) for i, f in enumerate(flows)
        ],
        "trace": build_trace(raw.get("trace", {})),
    }
    # Written only when given, so scenarios without cross traffic keep their canonical form.
    if "cross" in raw:
        cross = raw["cross"]
        if not isinstance(cross, list):
            raise ScenarioError(f"cross: expected [[cross]] tables, got {show(cross)}")
        config["cross"] = [build_cross(c, i) for i, c in enumerate(cross)]
    return config


def load(
    source: str | os.PathLike[str] | dict[str, Any],
    *,
    cc: str | dict[str, Any] | None = None,
    set: list[str] | tuple[str, ...] | str = (),  # noqa: A002 - the documented keyword
    seed: int | None = None,
    duration: str | int | float | None = None,
    algorithms: list[dict[str, Any]] | None | str = "core",
) -> dict[str, Any]:
    """A scenario file or dict with overrides → the canonical config (not yet run), checked
    by the core's own rules (crates/slowstart-config/src/config.rs `validate`) when it is built."""
    raw = apply_overrides(read_scenario(source), cc=cc, set=set, seed=seed, duration=duration)
    if algorithms == "core":
        algorithms = core_algorithms()
    assert not isinstance(algorithms, str)
    config = build_config(raw, algorithms)
    if algorithms is not None:
        try:
            guests.register(config)
        except guests.GuestError as e:
            raise ScenarioError(str(e)) from None
        try:
            _core.validate(json.dumps(config))
        except ValueError as e:
            raise ScenarioError(scenario_field(str(e), "path" in raw)) from None
    return config


_LINK_FIELD = re.compile(r"links\.(\d+)\.(.+)")


def scenario_field(message: str, path: bool) -> str:
    """The core's message with a link's canonical field named as the scenario wrote it: the
    core says `links.1.forward.queue`, a `[path]` scenario `path.buffer`, the general form
    `link.1.buffer`, the key that fills the field (crates/slowstart-config/src/keys.rs)."""
    field, colon, why = message.partition(": ")
    m = _LINK_FIELD.fullmatch(field)
    if not colon or m is None:
        return message
    index, below = m.groups()
    table, at, canonical = ("path", "path", field) if path else ("link", f"link.{index}", below)
    for key, k in key_table(table).items():
        for name, part in k.fields:
            rest = canonical.removeprefix(name)
            if rest != canonical and (not rest or rest.startswith(".")):
                if k.unit == "queue" and rest:  # a discipline's parameter, as the scenario names it
                    name, dot, deeper = rest[1:].partition(".")
                    rest = f".{parameter_key(name)}{dot}{deeper}"
                return f"{at}.{key}{'.' + part if part else ''}{rest}: {why}"
    return message
