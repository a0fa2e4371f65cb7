"""Overrides: `--cc`, `--set KEY=VALUE` (a dotted path through the scenario's tables, as the
core lists their keys), `--seed` and `--duration`, applied to a raw scenario."""

from __future__ import annotations

import copy
import functools
import tomllib
from typing import Any

from slowstart.loading import apps
from slowstart.loading.cc import parse_cc
from slowstart.loading.defaults import (
    defaults,
    key_names,
    keys,
)
from slowstart.loading.tables import field_at, toml_float
from slowstart.units import (
    ScenarioError,
    show,
)


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
    here = field_at(done, head)
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
                _set_in(node[i], rest, value, schema[0], field_at(done, i), item)
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
