"""The generated reference pages of the documentation (docs/hooks.py writes them into the
site at build time): every scenario key, every algorithm and every queue discipline.

Nothing here restates a fact the code owns. Which keys a table takes, each key's unit and its
one line of meaning are the core's (crates/slowstart-config/src/keys.rs, read through
`slowstart.loading.defaults`); each default is the core's too (config/, as a scenario writes
it); each bound is what the core says when a value is out of range (the loader asks it, through
`load`, with a huge value); algorithms and their parameters are the registry's
(`_core.algorithms()`). What is written here is which tables the page shows, in which order,
and a scenario each loads in.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slowstart import lazy
from slowstart.loading.defaults import (
    _core_defaults,
    defaults,
    key_names,
    key_table,
    rate_text,
    spellings,
    time_text,
)
from slowstart.loading.scenario import load
from slowstart.units import ScenarioError

_core = lazy.module("slowstart._core")


# By a key's unit kind (keys.rs `Unit`): a value of it (to probe the loader with), a huge one
# (to make the core state its bound) and how its bound reads ("time", "rate", "size",
# "buffer", or "" for a number). None: a value that has no bound to probe (a word, a table).
_TIME = ("7ms", "5000000h", "time")
_RATE = ("7Mbps", "10000000Tbps", "rate")
_SIZE = ("7kB", "10000000TB", "size")
_COUNT = (7, 10**19, "")
_NUMBER = (0.5, 1e300, "")
_PROBABILITY = (0.01, 2.0, "")
UNITS: dict[str, tuple[Any, Any, str]] = {
    "time": _TIME,
    "rate": _RATE,
    "rate_or_trace": _RATE,
    "size": _SIZE,
    "size_or_inf": _SIZE,
    "sizes": _SIZE,
    "window": ("7seg", "10000000TB", ""),
    "buffer": ("70pkt", "10000000000pkt", "buffer"),
    "count": _COUNT,
    "positive": _COUNT,
    "count_or_none": _COUNT,
    "number": _NUMBER,
    "gain": _NUMBER,
    "fraction": _NUMBER,
    "packets": _NUMBER,
    "probability": _PROBABILITY,
    "loss": _PROBABILITY,
    "bool": (True, None, ""),
    "cc": ("reno", None, ""),
    "text": ("x", None, ""),
}
_UNPROBED = (None, None, "")


@dataclass(frozen=True)
class Table:
    """A table of a scenario as the page shows it: its title, its name in keys.rs, where
    `--set` reaches it, where its defaults are and a scenario it loads in."""

    title: str
    name: str
    at: str
    defaults: Callable[[], dict[str, Any]]
    base: dict[str, Any]

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys the page lists: the table's in the core's order (the top level's values,
        its tables have their own)."""
        table = key_table(self.name)
        return tuple(k for k in table if self.at or table[k].unit not in _TABLES)

    def unit(self, key: str) -> str:
        return key_table(self.name)[key].unit

    def meaning(self, key: str) -> str:
        k = key_table(self.name)[key]
        return k.doc + (f" (default: {k.fallback})" if k.fallback else "")


_TABLES = ("table", "tables", "list")
_PATH = {"rate": "10Mbps", "rtt": "20ms"}
_FLOWS = {"duration": "1s", "path": _PATH, "flow": [{}]}
_SWARM = {"duration": "1s", "swarm": {}}

TABLES: tuple[Table, ...] = (
    Table("Top level", "top", "", lambda: {}, _FLOWS),
    Table(
        "[path]: one sender, one bottleneck, one receiver",
        "path",
        "path",
        lambda: defaults("path"),
        _FLOWS,
    ),
    Table(
        "[[link]]: the general form",
        "link",
        "link.0",
        lambda: {},
        {
            "duration": "1s",
            "nodes": ["a", "b"],
            "link": [{"a": "a", "b": "b", "rate": "10Mbps", "delay": "5ms", "buffer": "10pkt"}],
            "flow": [{"src": "a", "dst": "b"}],
        },
    ),
    Table("[[flow]]", "flow", "flow.0", lambda: defaults("flow"), _FLOWS),
    Table(
        '[flow.app], kind = "web"',
        "app.web",
        "app.0",
        lambda: {"kind": "bulk", **defaults("web")},
        {**_FLOWS, "flow": [{"app": {"kind": "web", "response": "17kB"}}]},
    ),
    Table(
        '[flow.app], kind = "bittorrent"',
        "app.bittorrent",
        "app.0",
        lambda: {"kind": "bulk", **defaults("bittorrent")},
        {**_FLOWS, "flow": [{"app": {"kind": "bittorrent"}}]},
    ),
    Table(
        "[flow.program]: a real program pair (slowstart real only)",
        "program",
        "flow.0.program",
        lambda: defaults("program"),
        {**_FLOWS, "flow": [{"program": {"server": "srv", "client": "cli"}}]},
    ),
    Table(
        "[[cross]]: traffic without congestion control",
        "cross",
        "cross.0",
        lambda: defaults("cross"),
        {**_FLOWS, "cross": [{"rate": "1Mbps", "kind": "onoff"}]},
    ),
    Table("[trace]", "trace", "trace", lambda: defaults("trace"), _FLOWS),
    Table("[swarm]", "swarm", "swarm", lambda: defaults("swarm"), _SWARM),
    Table(
        "[swarm.bittorrent]",
        "swarm.bittorrent",
        "swarm.bittorrent",
        lambda: defaults("swarm.bittorrent"),
        _SWARM,
    ),
    Table(
        "[swarm.tcp] (and [swarm.utp], whose defaults differ as the next table says)",
        "swarm.transport",
        "swarm.tcp",
        lambda: defaults("swarm.tcp"),
        _SWARM,
    ),
)


def _value(value: Any) -> str:
    """A default as a scenario writes it; none (the key's meaning says what then) is blank."""
    if value is None:
        return ""
    if isinstance(value, dict):
        if set(value) == {"name"}:
            return f'`"{value["name"]}"`'
        inner = ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items())
        return f"`{{{inner}}}`"
    if isinstance(value, str):
        value = spellings().get(value, value)
    return f"`{json.dumps(value)}`"


def _bound(table: Table, key: str, unit: str) -> str:
    at = f"{table.at}.{key}" if table.at else key
    return _probe(lambda huge: (table.base, [f"{at}={json.dumps(huge)}"]), at, unit)


def _probe(scenario: Callable[[Any], tuple[dict[str, Any], list[str]]], at: str, unit: str) -> str:
    """What the core says the value at `at` must be: its message for a huge one, in the
    scenario (and overrides) `scenario(huge)` makes. "" for a unit with no bound or a message
    about another field, "none" when the huge value is taken."""
    _, huge, reads = UNITS.get(unit, _UNPROBED)
    if huge is None:
        return ""
    base, overrides = scenario(huge)
    try:
        load(base, set=overrides)
    except ScenarioError as e:
        field, _, said = str(e).partition(": ")
        if field != at:
            return ""
    else:
        return "none"
    if "the run ends" in said:
        return "before the run ends"
    # Bounds that depend on another value name it; the value they found is left out.
    said = re.sub(r" \([^)]*\)", "", said.rpartition(", got")[0])
    lo_hi = re.fullmatch(r"must be in (\d+)\.\.=(\d+)(.*)", said)
    if not lo_hi:
        return said.removeprefix("must be ")
    lo, hi, rest = int(lo_hi[1]), int(lo_hi[2]), lo_hi[3]
    if reads == "time":
        # A time bounded by the run's duration (the base scenarios' 1 s) says so.
        end = "before the run ends" if hi == 10**9 - 1 else time_text(hi)
        return f"{time_text(lo)} to {end}"
    if reads == "rate":
        return f"{rate_text(lo)} to {rate_text(hi)}"
    rest = rest or {"size": " bytes", "buffer": " packets"}.get(reads, "")
    return f"{lo:,} to {hi:,}{rest}".replace(",", " ")


def scenario_keys() -> str:
    """Every table of a scenario: per key its unit, default, bound and meaning."""
    out = []
    for table in TABLES:
        given = table.defaults()
        rows = ["| key | unit | default | bound | meaning |", "| --- | --- | --- | --- | --- |"]
        for key in table.keys:
            unit = table.unit(key)
            default = _value(given[key]) if key in given else ""
            rows.append(
                f"| `{key}` | {_unit_text(unit)} | {default} | {_bound(table, key, unit)} "
                f"| {_cell(table.meaning(key))} |"
            )
        out += [f"## {table.title}", "", *rows, ""]
    out += ["## [swarm.utp]: where the transports differ from a flow", "", swarm_transports()]
    return "\n".join(out)


def swarm_transports() -> str:
    """The keys whose defaults differ between `[swarm.tcp]`, `[swarm.utp]` and a `[[flow]]`."""
    tcp, utp, flow = defaults("swarm.tcp"), defaults("swarm.utp"), defaults("flow")
    rows = ["| key | `[swarm.tcp]` | `[swarm.utp]` | a `[[flow]]`'s |", "| --- | --- | --- | --- |"]
    for key in key_table("swarm.transport"):
        values = [_value(d[key]) for d in (tcp, utp, flow)]
        if len(set(values)) > 1:
            rows.append(f"| `{key}` | " + " | ".join(values) + " |")
    return "\n".join(rows) + "\n"


def _algorithms() -> list[dict[str, Any]]:
    return json.loads(_core.algorithms())


def algorithms() -> str:
    """Every registered algorithm: summary, source, and its parameters; the slow-start rules'
    parameters, which every loss-based algorithm takes, once at the end."""
    found = _algorithms()
    with_rule = [a for a in found if a["slow_start"]]
    shared = set.intersection(*({p["name"] for p in a["params"]} for a in with_rule))
    out = []
    for a in found:
        out += [f"## `{a['name']}`", "", f"{a['summary']}.", "", f"Source: {a['source']}.", ""]
        if a["slow_start"]:
            rule = f"`{a['slow_start']}`"
            out += [f"Slow start: {rule} by default (see [the rules](#slow-start-rules)).", ""]
        out += _params([p for p in a["params"] if p["name"] not in shared]) or ["No parameters."]
        out.append("")
    rules = [p for p in with_rule[0]["params"] if p["name"] in shared]
    out += ["## Slow-start rules", "", "Every algorithm above with a slow-start rule takes these."]
    out += ["", *_params(rules), ""]
    return "\n".join(out)


def _params(params: list[dict[str, Any]]) -> list[str]:
    """A table of parameters: name, default, accepted values, meaning ([] for none)."""
    if not params:
        return []
    return [
        "| parameter | default | accepted | meaning |",
        "| --- | --- | --- | --- |",
        *(
            f"| `{p['name']}` | `{p['default']}` | {_cell(p['accepted'])} | {_cell(p['doc'])} |"
            for p in params
        ),
    ]


def queues() -> str:
    """Every queue discipline with its parameters, defaults and bounds."""
    docs = _core_defaults()["queue_docs"]
    out = []
    for kind in key_names("queue_kinds"):
        out += [f"## `{kind}`", "", f"{docs[kind]}.", ""]
        if not key_table(f"queue.{kind}"):
            out += ["No parameters.", ""]
            continue
        out += ["| parameter | default | bound | meaning |", "| --- | --- | --- | --- |"]
        given = defaults(f"queue.{kind}")
        for key, k in key_table(f"queue.{kind}").items():
            made = functools.partial(_queued, kind, key)
            bound = _probe(made, f"path.queue.{key}", k.unit)
            out.append(f"| `{key}` | {_value(given[key])} | {bound} | {_cell(k.doc)} |")
        out.append("")
    return "\n".join(out)


def _queued(kind: str, key: str, value: Any) -> tuple[dict[str, Any], list[str]]:
    return {**_FLOWS, "path": {**_PATH, "queue": {"kind": kind, key: value}}}, []


def _unit_text(unit: str) -> str:
    """A unit kind as the page writes it: "size_or_inf" is "size or inf"."""
    return unit.replace("_", " ")


def _cell(text: str) -> str:
    """Text in a Markdown table cell: its pipes escaped."""
    return text.replace("|", "\\|")


def program_placeholders() -> str:
    """The `{name}`s a program's arguments may hold and what each is replaced by."""
    rows = ["| placeholder | replaced by |", "| --- | --- |"]
    for name, meaning in _core_defaults()["program_placeholders"].items():
        rows.append(f"| `{{{name}}}` | {meaning} |")
    return "\n".join(rows) + "\n"


GENERATED: dict[str, Callable[[], str]] = {
    "scenario-keys": scenario_keys,
    "program-placeholders": program_placeholders,
    "algorithms": algorithms,
    "queues": queues,
    "swarm-transports": swarm_transports,
}
