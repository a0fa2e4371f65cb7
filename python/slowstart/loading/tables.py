"""Reading a scenario's TOML and its tables: unknown and missing keys named, and each key's value
read into the canonical fields keys.rs says it fills, by its unit kind."""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from slowstart.loading.defaults import (
    canonical_word,
    has_words,
    key_table,
    limits,
)
from slowstart.paths import read_user_text
from slowstart.units import (
    ScenarioError,
    parse_bool,
    parse_int,
    parse_number,
    parse_rate,
    parse_size,
    parse_size_or_inf,
    parse_time,
    show,
)


def field_at(field: str, key: str | int) -> str:
    return f"{field}.{key}" if field else str(key)


def check_table(value: object, field: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScenarioError(f"{field or 'scenario'}: expected a table, got {show(value)}")
    for key in value:
        if key not in keys:
            raise ScenarioError(
                f"{field_at(field, key)}: unknown key (accepted: {', '.join(keys)})"
            )
    return value


def require(table: dict[str, Any], field: str, key: str, what: str) -> Any:
    if key not in table:
        raise ScenarioError(f"{field_at(field, key)}: missing (expected {what})")
    return table[key]


def parse_str(value: object, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise ScenarioError(f"{field}: expected a non-empty string, got {show(value)}")
    return value


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
