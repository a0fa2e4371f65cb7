"""The core's defaults, as a scenario file would write them.

crates/slowstart-config/src/config.rs owns every default (`defaults_json`, read once per process
through `_core.defaults()`); this turns its canonical values back into scenario values, so the
loader parses a left-out key exactly as if the user had written its default: `*_ns` times as
"40ms", `*_bytes` sizes as "1514B" ("inf" for none), rates as "1Gbps", queue limits
as "200pkt" or "N B", an algorithm as {name = ..., param = ...}. Which keys a scenario table
takes, in which order messages list them, in which unit and which canonical fields they fill,
is the core's too (crates/slowstart-config/src/keys.rs: `keys`, `key_units`, `key_table`,
`key_names`), an application's, a program's, a Gilbert-Elliott table's and a queue
discipline's included.
"""

from __future__ import annotations

import functools
import json
from typing import Any, NamedTuple

from slowstart import lazy
from slowstart.units import SIZE_UNITS

_core = lazy.module("slowstart._core")


# Times are written in the largest of these that divides them (120 s stays "120s").
_TIME_UNITS = (("s", 10**9), ("ms", 10**6), ("us", 10**3))


def time_text(ns: int) -> str:
    """Nanoseconds as a scenario time: 40_000_000 → "40ms"."""
    for unit, scale in _TIME_UNITS:
        if ns % scale == 0:
            return f"{ns // scale}{unit}"
    return f"{ns}ns"


# Sizes are written in the largest scenario unit that divides them (1514 stays bytes).
_SIZE_UNITS = sorted(((u, n) for u, n in SIZE_UNITS.items() if n > 1), key=lambda u: -u[1])


def size_text(n: int) -> str:
    """Bytes as a scenario size: 33_554_432 → "32MiB", 1514 → "1514B"."""
    for unit, scale in _SIZE_UNITS:
        if n and n % scale == 0:
            return f"{n // scale}{unit}"
    return f"{n}B"


def rate_text(bps: int) -> str:
    """Bits per second in the largest unit that divides them: 10**13 → "10Tbps"."""
    for unit, scale in (("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3)):
        if bps and bps % scale == 0:
            return f"{bps // scale}{unit}"
    return f"{bps}bps"


def _queue_text(limit: dict[str, int]) -> str:
    """{"packets": 200} → "200pkt"; {"bytes": N} → "N B"."""
    return f"{limit['packets']}pkt" if "packets" in limit else size_text(limit["bytes"])


# Keys a scenario spells as the canonical config does, unit suffix and all.
_SAME = ("header_bytes",)


def as_written(canonical: dict[str, Any]) -> dict[str, Any]:
    """A canonical table's defaults under the scenario's keys and in its units."""
    out: dict[str, Any] = {}
    for key, value in canonical.items():
        if key in _SAME:
            out[key] = value
        elif key.endswith("_ns"):
            out[key[: -len("_ns")]] = time_text(value)
        elif key.endswith("_bytes"):
            out[key[: -len("_bytes")]] = "inf" if value is None else size_text(value)
        elif key == "cc":
            out[key] = {"name": value["name"], **value["params"]}
        else:
            out[key] = value
    return out


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
    core = _core_defaults()
    path, swarm = core["path"], core["swarm"]
    access = swarm["access"]
    rest = {k: v for k, v in swarm.items() if k not in ("access", "bittorrent", "tcp", "utp")}
    written = as_written(rest)
    stop = written.pop("stop_after_completions")
    return {
        "flow": as_written(core["flow"]),
        "web": as_written(core["web"]),
        "bittorrent": as_written(core["bittorrent"]),
        "trace": as_written(core["trace"]),
        "path": {
            "buffer": f"{path['buffer_bdp']}bdp",
            "loss": path["loss"],
            "access_rate": rate_text(path["access_rate_bps"]),
            "jitter": time_text(path["jitter_ns"]),
        },
        "path_access_queue": {"bytes": path["access_buffer_bytes"]},
        "cross": {"src": core["cross"]["src"], "dst": core["cross"]["dst"]},
        "program": as_written(core["program"]),
        "swarm": {
            **written,
            "stop_after": "none" if stop is None else stop,
            "up": rate_text(access["up_bps"]),
            "down": rate_text(access["down_bps"]),
            "buffer": _queue_text(access["up_queue"]),
            "down_buffer": _queue_text(access["down_queue"]),
            "delay": [time_text(access["delay_min_ns"]), time_text(access["delay_max_ns"])],
        },
        "swarm.bittorrent": as_written(swarm["bittorrent"]),
        "swarm.tcp": as_written(swarm["tcp"]),
        "swarm.utp": as_written(swarm["utp"]),
        **{f"queue.{kind}": as_written(params) for kind, params in core["queue"].items()},
    }


def has_words(choice: str) -> bool:
    """Whether the core lists words for `choice` (`canonical_word`)."""
    return choice in _core_defaults()["words"]


def canonical_word(choice: str, value: object) -> object:
    """The canonical value a choice's word stands for (`population` "50-50" is "mixed"), as
    the core lists them; any other value is left for the core to refuse, naming what it
    accepts."""
    words = _core_defaults()["words"][choice]
    return words.get(value, value) if isinstance(value, str) else value


def spellings() -> dict[str, str]:
    """Canonical values a scenario spells otherwise ("mixed" is "50-50", "never_leave"
    "never-leave"): the first of the core's words for each, where it differs."""
    out: dict[str, str] = {}
    for words in _core_defaults()["words"].values():
        for word, value in words.items():
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
    # The value at which a config leaves its field out (config.rs serializes it only when
    # set), as a 1-tuple; () where the field is always written.
    unwritten: tuple[Any, ...]


@functools.cache
def key_table(table: str) -> dict[str, Key]:
    """Each of `table`'s keys (see `keys`) → its unit kind, fields and unwritten value."""
    return {
        k["key"]: Key(
            k["unit"],
            tuple((f["field"], f["from"]) for f in k["fields"]),
            (k["unwritten"],) if "unwritten" in k else (),
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


def limits() -> dict[str, int]:
    """Bounds the loader applies before the core sees a config (config.rs `defaults_json`):
    `trace_ms` (a trace's largest time), `scenario_file_bytes`, `trace_file_bytes` and
    `controller_file_bytes` (the largest files read; the last is the core's largest
    WebAssembly module, slowstart-wasm `MODULE_LIMIT`), `sweep_points` (the most runs in one
    sweep)."""
    return dict(_core_defaults()["limits"])
