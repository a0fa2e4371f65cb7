"""Link directions beyond drop-tail at a fixed rate: queue disciplines, Gilbert-Elliott loss
and trace-driven capacity.

`queue = "codel"` or `queue = {kind = "codel", target = "5ms"}` becomes the canonical
`discipline` table of crates/slowstart-sim/src/config.rs. Parameters left out take the defaults
of the algorithm's document, which live there alone (`slowstart list` shows them, read through
`_core.defaults()`); which keys a discipline takes, and their units, stay here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from slowstart.defaults import defaults, limits, size_text
from slowstart.paths import read_user_text
from slowstart.units import U64_MAX, ScenarioError, parse_rate, parse_size, parse_time, show

# name → {parameter: (kind, canonical field)}
PARAMETERS: dict[str, dict[str, tuple[str, str]]] = {
    "droptail": {},
    "codel": {
        "target": ("time", "target_ns"),
        "interval": ("time", "interval_ns"),
        "mtu": ("size", "mtu_bytes"),
    },
    "fq_codel": {
        "flows": ("count", "flows"),
        "quantum": ("size", "quantum_bytes"),
        "target": ("time", "target_ns"),
        "interval": ("time", "interval_ns"),
        "memory_limit": ("size", "memory_limit_bytes"),
    },
    "pie": {
        "target": ("time", "target_ns"),
        "t_update": ("time", "t_update_ns"),
        "alpha": ("gain", "alpha"),
        "beta": ("gain", "beta"),
        "max_burst": ("time", "max_burst_ns"),
    },
    "red": {
        "min_th": ("packets", "min_th"),
        "max_th": ("packets", "max_th"),
        "max_p": ("probability", "max_p"),
        "w_q": ("probability", "w_q"),
        "gentle": ("bool", "gentle"),
        "hard_drop": ("bool", "hard_drop"),
    },
    "dualpi2": {
        "target": ("time", "target_ns"),
        "t_update": ("time", "t_update_ns"),
        "alpha": ("gain", "alpha"),
        "beta": ("gain", "beta"),
        "step": ("time", "step_ns"),
        "coupling": ("gain", "coupling"),
        "c_protection": ("probability", "c_protection"),
        "drop_overload": ("bool", "drop_overload"),
    },
}

KINDS = tuple(PARAMETERS)


def default_parameters(kind: str) -> str:
    """A discipline's defaults as a scenario writes them, in the order of PARAMETERS:
    `target = "5ms", interval = "100ms", mtu = 1514` (config.rs owns the values)."""
    if not PARAMETERS[kind]:
        return ""
    given = defaults(f"queue.{kind}")
    written = {
        key: size_text(given[key]) if unit == "size" else given[key]
        for key, (unit, _) in PARAMETERS[kind].items()
    }
    return ", ".join(f"{key} = {json.dumps(value)}" for key, value in written.items())


def _number(value: object, field: str, what: str) -> float:
    """A finite number (JSON has no NaN or infinity)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ScenarioError(f"{field}: expected {what}, got {show(value)}")
    return float(value)


def _parameter(kind: str, value: object, field: str) -> Any:
    """A parameter in canonical units; its range is the core's (config.rs
    `Discipline::validate`)."""
    if kind == "time":
        return parse_time(value, field)
    if kind == "size":
        return parse_size(value, field)
    if kind == "count":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U64_MAX:
            raise ScenarioError(f"{field}: expected a positive integer, got {show(value)}")
        return value
    if kind == "gain":
        return _number(value, field, "a number (Hz)")
    if kind == "packets":
        return _number(value, field, "a number of packets")
    if kind == "probability":
        return _number(value, field, "a probability (a number)")
    if not isinstance(value, bool):
        raise ScenarioError(f"{field}: expected true or false, got {show(value)}")
    return value


def parse_queue(value: object, field: str) -> dict[str, Any] | None:
    """The canonical discipline, or None for drop-tail (the canonical default)."""
    if isinstance(value, str):
        table: dict[str, Any] = {"kind": value}
    elif isinstance(value, dict):
        table = dict(value)
    else:
        raise ScenarioError(
            f"{field}: expected one of {', '.join(KINDS)} or a table such as "
            f'{{kind = "codel", target = "5ms"}}, got {show(value)}'
        )
    kind = table.pop("kind", None)
    if kind not in PARAMETERS:
        raise ScenarioError(f"{field}.kind: expected one of {', '.join(KINDS)}, got {show(kind)}")
    params = PARAMETERS[kind]
    out: dict[str, Any] = {"kind": kind}
    for key, raw in table.items():
        if key not in params:
            accepted = ", ".join(params) or "no parameters"
            raise ScenarioError(f"{field}.{key}: unknown {kind} parameter (accepted: {accepted})")
        what, canonical = params[key]
        out[canonical] = _parameter(what, raw, f"{field}.{key}")
    return None if kind == "droptail" else out


GE_KEYS = ("p", "r", "loss_bad", "loss_good")
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
    for key in value:
        if key not in GE_KEYS:
            raise ScenarioError(
                f"{field}.{key}: unknown key (accepted: {', '.join(GE_KEYS)}: a Gilbert-Elliott "
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


REPO = Path(__file__).resolve().parents[2]


def read_trace(name: str, field: str) -> list[int]:
    """A Mahimahi trace: one delivery opportunity per line, its time in ms. Found as given
    (relative to the current folder), else relative to the repository root."""
    path = Path(name)
    if not path.is_absolute() and not path.exists():
        path = REPO / name
    bounds = limits()
    what = "a trace (a time in ms per line)"
    text = read_user_text(path, what, bounds["trace_file_bytes"], field, name)
    times = []
    for n, line in enumerate(text.split(), start=1):
        # Short before int() (which refuses 4300 digits), bounded after: beyond u64 the core
        # could only name its own field.
        digits = line.isascii() and line.isdigit() and len(line) <= 20
        if not digits or int(line) > bounds["trace_ms"]:
            raise ScenarioError(
                f"{field}: {name} line {n}: expected a time in ms, an integer in "
                f"0..={bounds['trace_ms']}, got {show(line[:40])}"
            )
        times.append(int(line))
    # The mean rate divides by the last time; their order is the core's to check (config.rs).
    if not times or times[-1] == 0:
        raise ScenarioError(f"{field}: {name}: no delivery opportunities after 0 ms")
    return times


def trace_rate(times: list[int]) -> int:
    """Mean capacity of a trace, bits per second: 1500 bytes per opportunity over the period."""
    return len(times) * 1500 * 8 * 1000 // times[-1]


def parse_rate_or_trace(value: object, field: str) -> tuple[int, list[int] | None]:
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
        times = read_trace(name, f"{field}.trace")
        return trace_rate(times), times
    return parse_rate(value, field), None
