"""Link directions beyond drop-tail at a fixed rate: queue disciplines, Gilbert-Elliott loss
and trace-driven capacity.

`queue = "codel"` or `queue = {kind = "codel", target = "5ms"}` becomes the canonical
`discipline` table of crates/slowstart-config/src/config/queue.rs. Parameters left out take the
defaults of the algorithm's document, which live there alone (`slowstart list` shows them, read
through `_core.defaults()`). Which keys a discipline takes, their unit kinds and the canonical
fields they fill are the core's too (crates/slowstart-config/src/keys.rs, tables `queue.KIND`);
how a value of each unit kind is read stays here.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

from slowstart import lazy
from slowstart.loading.defaults import defaults, key_names, key_table, keys, limits
from slowstart.paths import REPO, read_user_bytes
from slowstart.units import (
    U64_MAX,
    ScenarioError,
    parse_bool,
    parse_number,
    parse_rate,
    parse_size,
    parse_time,
    show,
)

np = lazy.module("numpy")


def __getattr__(name: str) -> Any:
    """KINDS: the disciplines' kinds in the order messages list them, the core's
    (crates/slowstart-config/src/keys.rs, tables `queue.KIND`), read on first use, so importing
    this does not load the extension."""
    if name == "KINDS":
        return key_names("queue_kinds")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parameter_key(field: str) -> str:
    """The scenario's key of a discipline's canonical field (`target_ns` is `target`); any
    other name as it is."""
    for kind in key_names("queue_kinds"):
        for key, k in key_table(f"queue.{kind}").items():
            if any(canonical == field for canonical, _ in k.fields):
                return key
    return field


def default_parameters(kind: str) -> str:
    """A discipline's defaults as a scenario writes them, in the order of its keys:
    `target = "5ms", interval = "100ms", mtu = "1514B"` (config/queue.rs owns the values)."""
    params = key_table(f"queue.{kind}")
    if not params:
        return ""
    given = defaults(f"queue.{kind}")
    written = {key: given[key] for key in params}
    return ", ".join(f"{key} = {json.dumps(value)}" for key, value in written.items())


def _parameter(unit: str, value: object, field: str) -> Any:
    """A parameter in canonical units, read as its unit kind says (keys.rs `Unit`); its range
    is the core's (config/queue.rs `Discipline::validate`)."""
    if unit == "time":
        return parse_time(value, field)
    if unit == "size":
        return parse_size(value, field)
    if unit == "positive":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U64_MAX:
            raise ScenarioError(f"{field}: expected a positive integer, got {show(value)}")
        return value
    if unit == "gain":
        return parse_number(value, field, "a number (Hz)")
    if unit == "packets":
        return parse_number(value, field, "a number of packets")
    if unit == "fraction":
        return parse_number(value, field, "a probability (a number)")
    if unit == "bool":
        return parse_bool(value, field)
    # The loader's own mistake, never the user's.
    raise TypeError(f"{field}: no reader for unit {unit!r} (queues.py `_parameter`)")


def parse_queue(value: object, field: str) -> dict[str, Any] | None:
    """The canonical discipline, or None for drop-tail (the canonical default)."""
    kinds = key_names("queue_kinds")
    if isinstance(value, str):
        table: dict[str, Any] = {"kind": value}
    elif isinstance(value, dict):
        table = dict(value)
    else:
        raise ScenarioError(
            f"{field}: expected one of {', '.join(kinds)} or a table such as "
            f'{{kind = "codel", target = "5ms"}}, got {show(value)}'
        )
    kind = table.pop("kind", None)
    if kind not in kinds:
        raise ScenarioError(f"{field}.kind: expected one of {', '.join(kinds)}, got {show(kind)}")
    params = key_table(f"queue.{kind}")
    out: dict[str, Any] = {"kind": kind}
    for key, raw in table.items():
        if key not in params:
            accepted = ", ".join(params) or "no parameters"
            raise ScenarioError(f"{field}.{key}: unknown {kind} parameter (accepted: {accepted})")
        k = params[key]
        ((canonical, _),) = k.fields
        out[canonical] = _parameter(k.unit, raw, f"{field}.{key}")
    return None if kind == "droptail" else out


GE_HELP = (
    'a probability in [0, 1] such as 0.25 or "25%" (netem gemodel: p, r, loss_bad = 1-h, '
    "loss_good = 1-k)"
)


def _probability(value: object, field: str) -> float:
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            x = float(value.strip()[:-1]) / 100
        except ValueError:
            raise ScenarioError(f"{field}: expected {GE_HELP}, got {show(value)}") from None
    elif isinstance(value, int | float) and not isinstance(value, bool):
        x = float(value)
    else:
        raise ScenarioError(f"{field}: expected {GE_HELP}, got {show(value)}")
    if not math.isfinite(x):  # JSON has no NaN or infinity; the range is the core's
        raise ScenarioError(f"{field}: expected {GE_HELP}, got {show(value)}")
    return x


def parse_gilbert_elliott(value: dict[str, Any], field: str) -> dict[str, float]:
    """`loss = {p = "1%", r = "25%", loss_bad = 1, loss_good = 0}`: netem's `loss gemodel
    p r 1-h 1-k`, with netem's defaults r = 1 - p, loss_bad (1-h) = 1, loss_good (1-k) = 0."""
    accepted = keys("loss")  # the core's (keys.rs)
    for key in value:
        if key not in accepted:
            raise ScenarioError(
                f"{field}.{key}: unknown key (accepted: {', '.join(accepted)}: a Gilbert-Elliott "
                "model as netem's gemodel)"
            )
    if "p" not in value:
        raise ScenarioError(f"{field}.p: missing (the good-to-bad transition probability)")
    p = _probability(value["p"], f"{field}.p")
    return {
        "p": p,
        "r": _probability(value.get("r", 1.0 - p), f"{field}.r"),
        "loss_bad": _probability(value.get("loss_bad", 1.0), f"{field}.loss_bad"),
        "loss_good": _probability(value.get("loss_good", 0.0), f"{field}.loss_good"),
    }


class Trace(NamedTuple):
    """A Mahimahi trace as the canonical config carries it: its times (ms) as one line of
    text, separated by spaces, which the core reads into integers (config/link.rs,
    `rate_trace_ms`); `count` and `last_ms` for its mean rate."""

    times: str
    count: int
    last_ms: int


# Bytes that may appear in a trace: digits and the whitespace between them.
_TRACE_BYTES = b"0123456789 \t\r\n"
_SPACES = bytes.maketrans(b"\t\r\n", b"   ")
# The trace read last, by (file, modification time, size): both directions of a link, and each
# point of a sweep, share one copy of it.
_LAST_TRACE: dict[tuple[str, int, int], Trace] = {}
_TOKEN = re.compile(rb"\S{0,40}")


def _refuse_trace_line(data: bytes, at: int, field: str, name: str) -> NoReturn:
    """The line of `data` holding byte `at`, refused with the word there."""
    line = data.count(b"\n", 0, at) + 1
    start = max(data.rfind(b" ", 0, at), data.rfind(b"\n", 0, at), data.rfind(b"\t", 0, at)) + 1
    token = _TOKEN.match(data, start).group().decode("latin-1")  # type: ignore[union-attr]
    raise ScenarioError(
        f"{field}: {name} line {line}: expected a time in ms, an integer in "
        f"0..={limits()['trace_ms']}, got {show(token)}"
    )


def read_trace(name: str, field: str) -> Trace:
    """A Mahimahi trace: one delivery opportunity per line, its time in ms. Found as given
    (relative to the current folder), else relative to the repository root. Parsed by numpy,
    never as a Python list: a trace file within its bound costs a few times its size, not the
    tens a list of ints would (#31)."""
    path = Path(name)
    if not path.is_absolute() and not path.exists():
        path = REPO / name
    try:
        info = path.stat()
        key = (str(path.resolve()), info.st_mtime_ns, info.st_size)
    except OSError:
        key = None  # read_user_bytes names what is wrong with it
    if key is not None and key in _LAST_TRACE:  # a link's reverse direction, or a sweep's
        return _LAST_TRACE[key]
    bounds = limits()
    what = "a trace (a time in ms per line)"
    data = read_user_bytes(path, what, bounds["trace_file_bytes"], field, name)

    bad = data.translate(None, _TRACE_BYTES)
    if bad:
        _refuse_trace_line(data, data.index(bad[:1]), field, name)
    # One copy with spaces between the times (no regex: re.sub keeps every piece, 34x the file).
    spaced = data.translate(_SPACES).strip()
    # A token of more than 20 digits saturates at u64's top, beyond the bound, and is refused.
    times = np.fromstring(spaced, dtype=np.uint64, sep=" ") if spaced else np.empty(0, np.uint64)
    over = np.flatnonzero(times > bounds["trace_ms"])
    if over.size:
        digit = np.frombuffer(data, np.uint8)
        digit = (digit >= ord("0")) & (digit <= ord("9"))
        starts = np.flatnonzero(digit & ~np.concatenate(([False], digit[:-1])))
        _refuse_trace_line(data, int(starts[over[0]]), field, name)
    del data
    # The mean rate divides by the last time; their order is the core's to check (config/link.rs).
    if not times.size or times[-1] == 0:
        raise ScenarioError(f"{field}: {name}: no delivery opportunities after 0 ms")
    count, last_ms = int(times.size), int(times[-1])
    del times
    trace = Trace(spaced.decode("ascii"), count, last_ms)
    _LAST_TRACE.clear()
    if key is not None:
        _LAST_TRACE[key] = trace
    return trace


def trace_rate(trace: Trace) -> int:
    """Mean capacity of a trace, bits per second: 1500 bytes per opportunity over the period."""
    return trace.count * 1500 * 8 * 1000 // trace.last_ms


def parse_rate_or_trace(value: object, field: str) -> tuple[int, Trace | None]:
    """`"20Mbps"`, or `{trace = "traces/steps.txt"}`: (rate in bit/s, trace or None)."""
    if isinstance(value, dict):
        if set(value) != {"trace"}:
            raise ScenarioError(
                f'{field}: expected a rate such as "20Mbps" or {{trace = "file"}}, '
                f"got {show(value)}"
            )
        name = value["trace"]
        if not isinstance(name, str) or not name:
            raise ScenarioError(f"{field}.trace: expected a file name, got {show(name)}")
        trace = read_trace(name, f"{field}.trace")
        return trace_rate(trace), trace
    return parse_rate(value, field), None
