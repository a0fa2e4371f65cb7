"""Applications on a flow: `app = {kind = "web", ...}` (or an `[flow.app]` table) → the
canonical `app` of crates/slowstart-config/src/config/app.rs; and the real programs that may carry a
flow in `slowstart real` (`[flow.program]`, `parse_program`).

`kind` is "bulk" (the default: `size` bytes written at once), "web" (an HTTP/1.1-like client
at `dst` fetching objects from `src`) or "bittorrent" (a downloader at `dst` requesting blocks
from a seed at `src`, with libtorrent's request-queue policy). Errors name the field as
`app.N.key`, N the flow's index. Defaults and value ranges are the core's, with the same names.
"""

from __future__ import annotations

import shlex
from typing import Any

from slowstart.loading.defaults import canonical_word, defaults, keys
from slowstart.units import ScenarioError, parse_bool, parse_int, parse_size, parse_time, show

APP_KINDS = ("bulk", "web", "bittorrent")


def __getattr__(name: str) -> Any:
    """KEYS (each kind's keys), ALL_KEYS (every kind's, for `--set app.N.KEY=VALUE`) and
    PROGRAM_KEYS (`[flow.program]`'s): the core's (crates/slowstart-config/src/keys.rs, tables
    `app.KIND` and `program`), read on first use, so importing this does not load the
    extension."""
    if name == "KEYS":
        return {kind: keys(f"app.{kind}") for kind in APP_KINDS}
    if name == "ALL_KEYS":
        return tuple(dict.fromkeys(k for kind in APP_KINDS for k in keys(f"app.{kind}")))
    if name == "PROGRAM_KEYS":
        return keys("program")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


APP_HELP = 'an application such as {kind = "web", response = "17kB"} or "bulk"'


def _sizes(value: object, field: str) -> list[int]:
    """One size or a list of sizes (the core checks there is one and each is > 0)."""
    items = value if isinstance(value, list) else [value]
    return [
        parse_size(item, f"{field}.{k}" if isinstance(value, list) else field)
        for k, item in enumerate(items)
    ]


def parse_app(value: object, i: int) -> dict[str, Any]:
    """A flow's `app` value → {"kind": ..., ...} in canonical units."""
    at = f"app.{i}"
    if isinstance(value, str):
        value = {"kind": value}
    if not isinstance(value, dict):
        raise ScenarioError(f"{at}: expected {APP_HELP}, got {show(value)}")
    kind = value.get("kind", "bulk")
    if kind not in APP_KINDS:
        raise ScenarioError(f"{at}.kind: expected one of {', '.join(APP_KINDS)}, got {show(kind)}")
    accepted = keys(f"app.{kind}")
    for key in value:
        if key not in accepted:
            raise ScenarioError(
                f"{at}.{key}: unknown key for a {kind} app (accepted: {', '.join(accepted)})"
            )
    if kind == "bulk":
        return {"kind": "bulk"}
    if kind == "web":
        w = {**defaults("web"), "response": None, **value}
        if w["response"] is None:
            raise ScenarioError(f'{at}.response: missing (expected a size such as "17kB")')
        out: dict[str, Any] = {
            "kind": "web",
            "request_bytes": parse_size(w["request"], f"{at}.request"),
            "response_bytes": _sizes(w["response"], f"{at}.response"),
            "keep_alive": parse_bool(w["keep_alive"], f"{at}.keep_alive"),
        }
        if w["objects"] is not None:
            out["objects"] = parse_int(w["objects"], f"{at}.objects")
        return out
    b = {**defaults("bittorrent"), **value}
    out = {
        "kind": "bittorrent",
        "block_bytes": parse_size(b["block"], f"{at}.block"),
        "queue_time_ns": parse_time(b["queue_time"], f"{at}.queue_time"),
        "min_queue": parse_int(b["min_queue"], f"{at}.min_queue"),
        "max_queue": parse_int(b["max_queue"], f"{at}.max_queue"),
        "app_slow_start": parse_bool(b["app_slow_start"], f"{at}.app_slow_start"),
        "slow_start_threshold_bytes": parse_size(
            b["slow_start_threshold"], f"{at}.slow_start_threshold"
        ),
    }
    if b["blocks"] is not None:
        out["blocks"] = parse_int(b["blocks"], f"{at}.blocks")
    return out


# `[flow.program]`: a server and a client command run in the two namespaces of a real run
# (crates/slowstart-config/src/config/program.rs `ProgramConfig`, which checks the placeholders).
COMMAND_HELP = 'a command line such as "curl -o {dir}/got http://{peer}:{port}/data" or a list'


def _command(value: object, field: str) -> list[str]:
    """A command line (split as a POSIX shell would, but run without one) or a list of
    arguments → the argument list."""
    if isinstance(value, str):
        try:
            argv = shlex.split(value)
        except ValueError as e:  # an unclosed quote
            raise ScenarioError(f"{field}: {e} in {show(value)}") from None
    elif isinstance(value, list) and all(isinstance(a, str) for a in value):
        argv = list(value)
    else:
        raise ScenarioError(f"{field}: expected {COMMAND_HELP}, got {show(value)}")
    if not argv:
        raise ScenarioError(f"{field}: expected {COMMAND_HELP}, got an empty command")
    return argv


def parse_program(value: object, i: int) -> dict[str, Any]:
    """Flow `i`'s `program` table → the canonical program (errors name `flow.N.program.KEY`)."""
    at = f"flow.{i}.program"
    if not isinstance(value, dict):
        raise ScenarioError(
            f"{at}: expected a table such as {{server = ..., client = ...}}, got {show(value)}"
        )
    accepted = keys("program")
    for key in value:
        if key not in accepted:
            raise ScenarioError(f"{at}.{key}: unknown key (accepted: {', '.join(accepted)})")
    out: dict[str, Any] = {}
    for end in ("server", "client"):
        if end not in value:
            raise ScenarioError(f"{at}.{end}: missing (expected {COMMAND_HELP})")
        out[end] = _command(value[end], f"{at}.{end}")
    for word in ("sends", "ends"):
        if word in value:
            out[word] = canonical_word(word, value[word])
    if "port" in value:
        out["port"] = parse_int(value["port"], f"{at}.port", "a port in 1..=65535")
        if out["port"] > 65535:
            raise ScenarioError(f"{at}.port: must be in 1..=65535, got {out['port']}")
    return out
