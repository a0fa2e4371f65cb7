"""Scenario loading: a TOML file (or dict) plus overrides → the canonical config for the core.

The canonical config mirrors the serde structs in crates/slowstart-config/src/config/: integer
ns, bytes and bits per second. The core owns every default, key and word (read here through
slowstart.loading.defaults) and every bound (`load` has the core check the result); the loader
owns how a scenario is written: units, the `[path]` shorthand (links.py), overrides
(overrides.py). This module builds the config from the tables. Every error is a ScenarioError
whose message starts with the dotted field (`flow.0.mss`, `path.rate`) and says what is
accepted.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.loading import guests
from slowstart.loading.apps import parse_app, parse_program
from slowstart.loading.cc import check_cc, core_algorithms, parse_cc
from slowstart.loading.defaults import (
    defaults,
    key_names,
    key_table,
    key_units,
    keys,
)
from slowstart.loading.links import (
    expand_links,
    expand_path,
    node_list,
    node_ref,
    queue_limit,
    scenario_field,
)
from slowstart.loading.overrides import apply_overrides
from slowstart.loading.overrides import apply_set as apply_set  # callers import it from here
from slowstart.loading.overrides import parse_set_value as parse_set_value  # as apply_set
from slowstart.loading.tables import (
    Reader,
    check_table,
    filled,
    parse_str,
    read_keys,
    read_toml,
    require,
)
from slowstart.paths import scenario_path
from slowstart.units import (
    ScenarioError,
    parse_int,
    parse_time,
    parse_window,
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
                f"nodes: {node_list(nodes)})"
            )
        ends.append(node_ref(value, f"{at}.{end}", nodes, known))
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


def build_cross(item: object, i: int) -> dict[str, Any]:
    """A `[[cross]]` table → the canonical CrossConfig: units resolved, nothing else decided
    here (what is left out takes the core's default; the core checks the values)."""
    at = f"cross.{i}"
    return read_keys("cross", check_table(item, at, keys("cross")), at)


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
    """`[swarm]` → the canonical SwarmConfig (crates/slowstart-config/src/config/swarm.rs); by hand
    only what a key's value does not say alone: the access buffers at their rates."""
    w = {**defaults("swarm"), "bittorrent": {}, "tcp": {}, "utp": {}}
    w.update(check_table(value, "swarm", keys("swarm")))

    def buffer(rate: str) -> Reader:
        return lambda value, field, done: queue_limit(
            value, field, filled(done, "swarm", rate), None
        )

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
    by the core's own rules (crates/slowstart-config/src/config/ `validate`) when it is built."""
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
