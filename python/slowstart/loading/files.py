"""What a scenario reads from the user's files: TOML (a scenario, a suite, a sweep plan) and
Mahimahi trace files. The rest of loading is the core's (crates/slowstart-config/src/scenario/),
which asks for a trace through the host in slowstart.loading.scenario."""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

from slowstart import lazy
from slowstart.loading.defaults import limits
from slowstart.paths import REPO, read_user_bytes, read_user_text
from slowstart.units import ScenarioError, show

np = lazy.module("numpy")


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
    rather than run as 0 (`path.loss = 1e-400` ran lossless). The core's TOML reader does the
    same (scenario/toml_text.rs)."""
    x = float(text)
    if math.isinf(x) and "inf" not in text:
        return text
    if x == 0 and any(c in "123456789" for c in text.lower().partition("e")[0]):
        return text
    return x


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
