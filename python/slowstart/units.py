"""Units in scenario files, resolved to exact integers: ns, bytes, bits per second.

Numbers are read as exact decimals, so "1.5Mbps" is 1_500_000 and "0.08" seconds is
80_000_000 ns; a value that is not a whole number of the base unit is an error. The grammar is
the core's loader's (crates/slowstart-config/src/scenario/units.rs): `parse_time`, `parse_rate`,
... read a value outside a scenario (a sweep's axes, a plan) through it. `split_quantity` is
the number-and-unit split a sweep plan's own ranges use.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from fractions import Fraction
from typing import Any

from slowstart import lazy

_core = lazy.module("slowstart._core")

U64_MAX = 2**64 - 1


# ASCII digits only: Python reads "５" (fullwidth) as 5, a user would not mean it.
_QUANTITY = re.compile(
    r"^\s*([+-]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(\S*?)\s*$", re.ASCII
)


class ScenarioError(ValueError):
    """A bad scenario value; the message starts with the dotted field it concerns."""


def show(value: object) -> str:
    """A value as the user wrote it, for error messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return str(value)


def _read(unit: str, value: object, field: str, **kw: Any) -> Any:
    """`value` read by the core's loader as a key of unit kind `unit` reads it
    (crates/slowstart-config/src/scenario/units.rs, one grammar for every front end)."""
    try:
        return _core.parse_value(unit, value, field, **kw)
    except ValueError as e:
        raise ScenarioError(str(e)) from None


def parse_int(value: object, field: str, what: str = "an integer >= 0") -> int:
    """An integer the canonical config can hold (0..=u64::MAX); the setting's own range is
    the core's. `what` names the setting's kind in the message (`"a positive integer"`)."""
    return _read("count", value, field, what=what)  # type: ignore[no-any-return]


def fail(field: str, expected: str, value: object) -> ScenarioError:
    return ScenarioError(f"{field}: expected {expected}, got {show(value)}")


def split_quantity(value: object, field: str, expected: str) -> tuple[Fraction, str]:
    """A number (exact) and its unit suffix ("" for a bare number)."""
    if isinstance(value, bool):
        raise fail(field, expected, value)
    if isinstance(value, numbers.Integral):  # numpy integers too
        return Fraction(int(value)), ""
    if isinstance(value, numbers.Real):
        value = float(value)
        if not math.isfinite(value):
            raise fail(field, expected, value)
        return Fraction(repr(value)), ""
    if not isinstance(value, str):
        raise fail(field, expected, value)
    m = _QUANTITY.match(value)
    if not m:
        raise fail(field, expected, value)
    return Fraction(m.group(1).replace("_", "")), m.group(2)


def parse_rate(value: object, field: str) -> int:
    """Bits per second, >= 0 (the core refuses 0 where it is a link's or source's rate)."""
    return _read("rate", value, field)  # type: ignore[no-any-return]


def parse_time(value: object, field: str) -> int:
    """Nanoseconds, >= 0."""
    return _read("time", value, field)  # type: ignore[no-any-return]


def parse_size(value: object, field: str) -> int:
    """Bytes, >= 0."""
    return _read("size", value, field)  # type: ignore[no-any-return]


def parse_size_or_inf(value: object, field: str) -> int | None:
    """Bytes, or None for "inf"."""
    return _read("size_or_inf", value, field)  # type: ignore[no-any-return]


def parse_window(value: object, field: str, mss: int) -> int | None:
    """Bytes, or None for "inf"; "Nseg" is N × mss. Its range (at least one MSS) is the
    core's."""
    return _read("window", value, field, mss=mss)  # type: ignore[no-any-return]


def parse_loss(value: object, field: str) -> float:
    """A probability, from a number or a percentage; its range is the core's (config.rs)."""
    return _read("loss", value, field)  # type: ignore[no-any-return]


def queue_limit(
    value: object, field: str, rate_bps: int, path: tuple[int, int] | None = None
) -> dict[str, int]:
    """A buffer (`"200pkt"`, `"1MB"`, `"50ms"` at the line rate, `"1bdp"` of a `[path]`'s
    (rate_bps, rtt_ns)) → the canonical queue limit, {"packets": N} or {"bytes": N}."""
    try:
        return _core.buffer_limit(value, field, rate_bps, path)  # type: ignore[no-any-return]
    except ValueError as e:
        raise ScenarioError(str(e)) from None
