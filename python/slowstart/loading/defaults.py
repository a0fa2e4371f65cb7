"""The core's defaults, as a scenario file would write them.

crates/slowstart-config owns every default (config/, exported by schema.rs `defaults_json`,
read once per process through `_core.defaults()`) and every key (keys.rs): which keys a scenario
table takes, in which order messages list them, in which unit, which canonical fields they
fill, what each means, which key a left-out one falls back to and which words it accepts
(`keys`, `key_units`, `key_table`, `key_names`), an application's, a program's, a
Gilbert-Elliott table's and a queue discipline's included. The defaults as a scenario writes
them (`defaults`: times as "40ms", sizes as "1514B", "inf" for none, rates as "1Gbps", queue
limits as "200pkt", an algorithm as {name = ..., param = ...}) are the core loader's, which
reads a left-out key as if its default had been written (scenario/tables.rs); the CLI and the
reference pages show them from here.
"""

from __future__ import annotations

import functools
import json
from typing import Any, NamedTuple

from slowstart import lazy

_core = lazy.module("slowstart._core")


def written(unit: str, value: Any) -> Any:
    """A canonical value as a scenario writes a key of kind `unit` (keys.rs `Unit`): 40_000_000
    ns "40ms", {"packets": 200} "200pkt", an algorithm as {name = ..., param = ...}; None is
    "inf" or "none" where the unit says. The core's (scenario/tables.rs `written`)."""
    return json.loads(_core.written(unit, json.dumps(value)))


def time_text(ns: int) -> str:
    """Nanoseconds as a scenario time: 40_000_000 → "40ms"."""
    return written("time", ns)  # type: ignore[no-any-return]


def size_text(n: int) -> str:
    """Bytes in the largest scenario unit that divides them: 33_554_432 → "32MiB"."""
    return written("size", n)  # type: ignore[no-any-return]


def rate_text(bps: int) -> str:
    """Bits per second in the largest unit that divides them: 10**13 → "10Tbps"."""
    return written("rate", bps)  # type: ignore[no-any-return]


@functools.cache
def _core_defaults() -> dict[str, Any]:
    try:
        text = _core.defaults()
    except ImportError:
        raise RuntimeError(
            "the slowstart._core extension is not built (run `make setup`)"
        ) from None
    return json.loads(text)


@functools.cache
def _tables() -> dict[str, dict[str, Any]]:
    """Every table's defaults as a scenario writes them, the core's loader's
    (scenario/tables.rs `written_defaults`)."""
    return json.loads(_core.scenario_defaults())  # type: ignore[no-any-return]


def swarm_decided() -> dict[str, Any]:
    """A swarm transport's canonical fields the swarm decides itself (its ends, size, start
    and application), as the core lists them, in the order of their keys."""
    decided = _core_defaults()["swarm_decided"]
    flow = key_table("flow")
    fields = [field for key in key_names("not_in_swarm_flow") for field, _ in flow[key].fields]
    return {field: decided[field] for field in fields if field in decided}


def fallback(table: str, given: dict[str, Any], key: str, at: str) -> tuple[Any, str]:
    """The value of `table`'s `key` in `given` and the field to name it by, `at.KEY`; left
    out, the value of the key it falls back to (keys.rs: `reverse_rate` takes `rate`'s), named
    by that key."""
    if key not in given:
        key = key_table(table)[key].fallback
    return given[key], f"{at}.{key}"


def has_words(choice: str) -> bool:
    """Whether the core lists words for `choice` (`canonical_word`)."""
    return choice in _core_defaults()["words"]


def canonical_word(choice: str, value: object) -> object:
    """The canonical value a choice's word stands for (`population` "50-50" is "mixed"), as
    the core lists them; any other value is left for the core to refuse, naming what it
    accepts."""
    words = _core_defaults()["words"][choice]
    return words.get(value, value) if isinstance(value, str) else value


def choices(choice: str) -> tuple[str, ...]:
    """The canonical values of a choice, in the order the core lists its words: `population`
    is ("tcp", "utp", "mixed")."""
    pairs = _core_defaults()["word_lists"][choice]
    return tuple(dict.fromkeys(value for _, value in pairs))


def spellings() -> dict[str, str]:
    """Canonical values a scenario spells otherwise ("mixed" is "50-50", "never_leave"
    "never-leave"): the first of the core's words for each, where it differs."""
    out: dict[str, str] = {}
    for pairs in _core_defaults()["word_lists"].values():
        for word, value in pairs:
            if word != value:
                out.setdefault(value, word)
    return out


def defaults(table: str) -> dict[str, Any]:
    """The defaults of `table` ("flow", "web", "bittorrent", "trace", "path", "swarm",
    "swarm.bittorrent", "swarm.tcp", "swarm.utp"; "queue.codel", "queue.fq_codel", "queue.pie",
    "queue.red": a queue discipline's parameters; "cross": a source's `src` and `dst`;
    "path_access_queue": the canonical queue of the `[path]` access link; "program": a
    `[flow.program]`'s but its commands), a fresh copy."""
    return json.loads(json.dumps(_tables()[table]))


@functools.cache
def keys(table: str) -> tuple[str, ...]:
    """The TOML keys `table` takes, in the order messages list them: "top", "path", "link",
    "drop" (a `drop` list's tables), "cross", "trace", "flow", "swarm", "swarm.bittorrent",
    "swarm.transport" (`swarm.tcp` and `swarm.utp`), "app.bulk", "app.web", "app.bittorrent"
    (a flow's application by kind), "program" (`[flow.program]`), "loss" (a Gilbert-Elliott
    `loss` table), "queue.droptail", "queue.codel", ... (a queue discipline's parameters by
    kind, `key_names("queue_kinds")`)."""
    return tuple(k["key"] for k in _core_defaults()["keys"]["tables"][table])


def key_units(table: str) -> dict[str, tuple[str, str | None]]:
    """Each of `table`'s keys → (its unit kind: "time", "rate", "size", "count", "word",
    "bool", ...; the canonical field it fills, None where it fills several or the loader
    expands it)."""
    return {k["key"]: (k["unit"], k["field"]) for k in _core_defaults()["keys"]["tables"][table]}


class Key(NamedTuple):
    """One key of a scenario table as the core lists it (keys.rs `Key`)."""

    unit: str
    # The canonical fields it fills, each with the key of the value's table it is read from (""
    # where from the whole value): `[path]`'s `rate` fills ("links.1.forward.rate_bps", "") and
    # ("links.1.forward.rate_trace_ms", "trace").
    fields: tuple[tuple[str, str], ...]
    # The value at which a config leaves its field out (the core serializes it only when
    # set), as a 1-tuple; () where the field is always written.
    unwritten: tuple[Any, ...]
    # One line on what it means.
    doc: str
    # The key whose value it takes when left out ("" for none).
    fallback: str
    # The words it accepts, where the core lists them.
    words: tuple[str, ...]


@functools.cache
def key_table(table: str) -> dict[str, Key]:
    """Each of `table`'s keys (see `keys`) → its unit kind, fields, unwritten value, meaning,
    fallback and words."""
    return {
        k["key"]: Key(
            k["unit"],
            tuple((f["field"], f["from"]) for f in k["fields"]),
            (k["unwritten"],) if "unwritten" in k else (),
            k["doc"],
            k.get("fallback", ""),
            tuple(k.get("words", ())),
        )
        for k in _core_defaults()["keys"]["tables"][table]
    }


@functools.cache
def key_names(name: str) -> tuple[str, ...]:
    """A list of keys the core names: "not_with_swarm" (top-level keys a `[swarm]` scenario
    must not give), "swarm_tables" (the tables in `[swarm]`), "not_in_swarm_flow" (`[[flow]]`
    keys a swarm transport does not take), "queue_kinds" (the queue disciplines, in the order
    messages list them: the tables `queue.KIND`)."""
    return tuple(_core_defaults()["keys"][name])


def default_parameters(kind: str) -> str:
    """A queue discipline's defaults as a scenario writes them, in the order of its keys:
    `target = "5ms", interval = "100ms", mtu = "1514B"` (config/queue.rs owns the values)."""
    params = key_table(f"queue.{kind}")
    if not params:
        return ""
    given = defaults(f"queue.{kind}")
    return ", ".join(f"{key} = {json.dumps(given[key])}" for key in params)


def limits() -> dict[str, int]:
    """Bounds the loader applies before the core sees a config (schema.rs `defaults_json`):
    `trace_ms` (a trace's largest time), `scenario_file_bytes`, `trace_file_bytes` and
    `controller_file_bytes` (the largest files read; the last is the core's largest
    WebAssembly module, slowstart-wasm `MODULE_LIMIT`), `sweep_points` (the most runs in one
    sweep)."""
    return dict(_core_defaults()["limits"])
