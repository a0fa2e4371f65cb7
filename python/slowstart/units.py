"""Units in scenario files, resolved to exact integers: ns, bytes, bits per second.

Numbers are parsed as exact decimals, so "1.5Mbps" is 1_500_000 and "0.08" seconds is
80_000_000 ns; a value that is not a whole number of the base unit is an error.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from dataclasses import dataclass
from fractions import Fraction

U64_MAX = 2**64 - 1

RATE_UNITS = {
    "bps": 1,
    "kbps": 10**3,
    "Kbps": 10**3,
    "Mbps": 10**6,
    "mbps": 10**6,
    "Gbps": 10**9,
    "gbps": 10**9,
    "Tbps": 10**12,
}
TIME_UNITS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}
SIZE_UNITS = {
    "B": 1,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}

RATE_FORMS = "bps, kbps, Mbps, Gbps, Tbps"
TIME_FORMS = "ns, us, ms, s, min, h"
SIZE_FORMS = "B, kB, MB, GB, KiB, MiB, GiB"
RATE_HELP = f'a rate such as "250Mbps" ({RATE_FORMS})'
TIME_HELP = f'a time such as "600ms" ({TIME_FORMS})'
SIZE_HELP = f'a size such as "100MB" ({SIZE_FORMS})'
# A bare number's unit is never guessed (`rtt = 600` meant as ms would run as 600 s): the unit
# each kind suggests when one is missing, and the forms it takes. Zero needs none.
_SUGGEST = {"rate": ("Mbps", RATE_FORMS), "time": ("ms", TIME_FORMS), "size": ("B", SIZE_FORMS)}

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


def parse_int(value: object, field: str, what: str = "an integer >= 0") -> int:
    """An integer the canonical config can hold (0..=u64::MAX); the setting's own range is
    the core's. `what` names the setting's kind in the message (`"a positive integer"`)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ScenarioError(f"{field}: expected {what}, got {show(value)}")
    value = int(value)  # numpy integers too
    if value < 0:
        raise ScenarioError(f"{field}: expected {what}, got {show(value)}")
    if value > U64_MAX:
        raise ScenarioError(f"{field}: must be at most {U64_MAX}, got {show(value)}")
    return value


def check_underflow(exact: Fraction, field: str, value: object) -> None:
    """ScenarioError if `exact` is not 0 but is as a float: below about 5e-324 a number
    becomes 0 (IEEE 754 binary64), and `path.loss = 1e-400` ran lossless without a word."""
    if exact != 0 and float(exact) == 0:
        raise ScenarioError(
            f"{field}: {value} is too small to hold (a number below about 5e-324 is 0 "
            "here); write 0 if you mean none"
        )


def _underflowed(value: object, field: str) -> None:
    """A float too small to hold reaches the parsers as its text (scenario.toml_float)."""
    if isinstance(value, str) and (m := _QUANTITY.match(value)) and not m.group(2):
        check_underflow(Fraction(m.group(1).replace("_", "")), field, value)


def parse_number(value: object, field: str, what: str) -> float:
    """A finite number (JSON has no NaN or infinity); `what` names the setting's kind in the
    message (`"a number (Hz)"`), its range is the core's."""
    _underflowed(value, field)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ScenarioError(f"{field}: expected {what}, got {show(value)}")
    return float(value)


def parse_bool(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise ScenarioError(f"{field}: expected true or false, got {show(value)}")
    return value


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


def _whole(x: Fraction, field: str, value: object, what: str) -> int:
    if x.denominator != 1:
        raise ScenarioError(f"{field}: {show(value)} is not a whole number of {what}")
    if x > U64_MAX:
        raise ScenarioError(f"{field}: {show(value)} is too large")
    return int(x)


def no_unit(field: str, value: object, suggest: str, forms: str) -> ScenarioError:
    """A bare number where a quantity is read: one line with the accepted forms."""
    number = value.strip() if isinstance(value, str) else show(value)
    return ScenarioError(
        f'{field}: give a unit, e.g. "{number}{suggest}" ({forms}), got {show(value)}'
    )


def _scaled(value: object, field: str, units: dict[str, int], kind: str, expected: str) -> Fraction:
    number, unit = split_quantity(value, field, expected)
    if number < 0:
        raise ScenarioError(f"{field}: must not be negative, got {show(value)}")
    if unit == "":
        if number != 0:
            raise no_unit(field, value, *_SUGGEST[kind])
        return number
    if unit not in units:
        raise fail(field, expected, value)
    return number * units[unit]


def parse_rate(value: object, field: str) -> int:
    """Bits per second, >= 0 (the core refuses 0 where it is a link's or source's rate)."""
    x = _scaled(value, field, RATE_UNITS, "rate", RATE_HELP)
    return _whole(x, field, value, "bits per second")


def parse_time(value: object, field: str) -> int:
    """Nanoseconds, >= 0."""
    x = _scaled(value, field, TIME_UNITS, "time", TIME_HELP)
    return _whole(x, field, value, "nanoseconds")


def parse_size(value: object, field: str) -> int:
    """Bytes, >= 0."""
    x = _scaled(value, field, SIZE_UNITS, "size", SIZE_HELP)
    return _whole(x, field, value, "bytes")


def _is_inf(value: object) -> bool:
    """ "inf", or TOML's own `inf` (a bare `--set size=inf` reads as the float infinity)."""
    if isinstance(value, str):
        return value.strip() == "inf"
    return isinstance(value, float) and value == math.inf


def parse_size_or_inf(value: object, field: str) -> int | None:
    """Bytes, or None for "inf"."""
    if _is_inf(value):
        return None
    return parse_size(value, field)


WINDOW_HELP = 'a window such as "3500seg" (segments of the flow\'s MSS) or a size such as "5MB"'


def parse_window(value: object, field: str, mss: int) -> int | None:
    """Bytes, or None for "inf"; "Nseg" is N × mss. Its range (at least one MSS) is the
    core's."""
    if _is_inf(value):
        return None
    if isinstance(value, str) and value.strip().endswith("seg"):
        number, unit = split_quantity(value, field, WINDOW_HELP)
        if unit != "seg":
            raise fail(field, WINDOW_HELP, value)
        if number < 0:
            raise ScenarioError(f"{field}: must not be negative, got {show(value)}")
        return _whole(number * mss, field, value, "bytes")
    number, unit = split_quantity(value, field, WINDOW_HELP)
    if unit == "" and number != 0:
        raise no_unit(field, value, "seg", f"seg, {SIZE_FORMS}, inf")
    if unit and unit not in SIZE_UNITS:
        raise fail(field, WINDOW_HELP, value)
    return parse_size(value, field)


BUFFER_HELP = (
    'a buffer such as "200pkt", "1MB", "50ms" (at the line rate) or "1bdp" '
    "(multiples of rate × rtt, [path] only)"
)


@dataclass(frozen=True)
class Buffer:
    """A buffer as written, resolved once the link's rate (and the path's BDP) are known."""

    packets: Fraction | None = None
    bytes: int | None = None
    time_ns: int | None = None
    bdp: Fraction | None = None


def parse_buffer(value: object, field: str) -> Buffer:
    number, unit = split_quantity(value, field, BUFFER_HELP)
    if number < 0:
        raise ScenarioError(f"{field}: must not be negative, got {show(value)}")
    if unit in ("pkt", "pkts"):
        return Buffer(packets=number)
    if unit == "bdp":
        return Buffer(bdp=number)
    if unit in TIME_UNITS:
        return Buffer(time_ns=parse_time(value, field))
    if unit == "" and number != 0:
        raise no_unit(field, value, "pkt", f"pkt, {SIZE_FORMS}, a time at the line rate, bdp")
    if unit == "" or unit in SIZE_UNITS:
        return Buffer(bytes=parse_size(value, field))
    raise fail(field, BUFFER_HELP, value)


def _round(x: Fraction) -> int:
    """Nearest integer, halves up."""
    return int((x + Fraction(1, 2)) // 1)


def resolve_buffer(
    buf: Buffer, field: str, value: object, rate_bps: int, bdp_bytes: Fraction | None
) -> dict[str, int]:
    """The canonical queue limit: {"packets": N} or {"bytes": N}. Whether it holds a packet
    is the core's to check (config.rs), but for a BDP multiple: only the loader knows the BDP."""
    if buf.packets is not None:
        limit = {"packets": _whole(buf.packets, field, value, "packets")}
    elif buf.bytes is not None:
        limit = {"bytes": buf.bytes}
    elif buf.time_ns is not None:
        limit = {"bytes": _round(Fraction(rate_bps * buf.time_ns, 8 * 10**9))}
    else:
        assert buf.bdp is not None
        if bdp_bytes is None:
            raise ScenarioError(
                f"{field}: {show(value)}: bdp is only accepted in the [path] form; "
                'give packets ("200pkt"), bytes ("1MB") or a time at the line rate ("50ms")'
            )
        limit = {"bytes": _round(buf.bdp * bdp_bytes)}
    if buf.bdp and bdp_bytes and limit["bytes"] < 1:
        # A tiny rate or rtt, not the multiple, is what leaves no room (a zero rate is the
        # core's to refuse, naming path.rate).
        raise ScenarioError(
            f"{field}: {show(value)} of a {float(bdp_bytes):.3g}-byte BDP (path.rate x "
            "path.rtt) holds no packet; give a larger rate or rtt, or the buffer in "
            'packets ("10pkt")'
        )
    if next(iter(limit.values())) > U64_MAX:
        raise ScenarioError(f"{field}: {show(value)} is too large")
    return limit


LOSS_HELP = 'a loss probability in [0, 1) such as 0.001 or "0.1%"'


def parse_loss(value: object, field: str) -> float:
    """A probability, from a number or a percentage; its range is the core's (config.rs)."""
    _underflowed(value, field)
    if isinstance(value, str) and value.strip().endswith("%"):
        number, unit = split_quantity(value, field, LOSS_HELP)
        if unit != "%":
            raise fail(field, LOSS_HELP, value)
        check_underflow(number / 100, field, value)
        p = float(number / 100)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        p = float(value)
    else:
        raise fail(field, LOSS_HELP, value)
    if not math.isfinite(p):  # JSON has no NaN or infinity
        raise fail(field, LOSS_HELP, value)
    return p
