"""A flow's `cc`: the core's grammar or a table, a user's controller, and the names checked against
the core's registry."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.loading import guests
from slowstart.units import (
    ScenarioError,
    show,
)

_core = lazy.module("slowstart._core")


def _check_params(field: str, params: dict[str, Any]) -> None:
    """A table's parameter values the core can read: finite numbers (JSON has no NaN or
    infinity; a string's are checked by the core's grammar)."""
    for key, value in params.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ScenarioError(f"{field}: parameter {key} must be a finite number, got {value}")


def _guest_spec(ref: str | type, params: dict[str, Any], field: str) -> dict[str, Any]:
    """A user's controller, loaded: its canonical name (with the content's hash) and source."""
    try:
        spec = guests.resolve(ref, field)
    except guests.GuestError as e:
        raise ScenarioError(str(e)) from None
    return {"name": spec["name"], "params": params, "guest": spec["guest"]}


def parse_cc(value: object, field: str) -> dict[str, Any]:
    """`"name:key=value,..."` (the core's grammar, `_core.parse_cc`) or `{name = ..., key =
    value}` → {"name": ..., "params": {...}}; a user's controller (`x.py:Class`, `x.wasm`, or
    a Controller subclass) also gets "guest", where it came from (loading/guests.py)."""
    if isinstance(value, type):
        return _guest_spec(value, {}, field)
    if isinstance(value, str):
        if not guests.is_reference(value):
            _own_without_suffix(value, field)
        try:
            spec = _core.parse_cc(value, field)
        except UnicodeEncodeError:  # a lone surrogate (from argv) is no text the core reads
            raise ScenarioError(f"{field}: expected {_core.CC_HELP}, got {show(value)}") from None
        except ValueError as e:
            raise ScenarioError(str(e)) from None
        if spec["guest"] is not None:
            return _guest_spec(spec["name"], spec["params"], field)
        return {"name": spec["name"], "params": spec["params"]}
    if not isinstance(value, dict):
        raise ScenarioError(f"{field}: expected {_core.CC_HELP}, got {show(value)}")
    if "name" not in value:
        raise ScenarioError(f"{field}.name: missing (expected {_core.CC_HELP})")
    name = value["name"]
    params = {k: v for k, v in value.items() if k != "name"}
    for key, v in params.items():
        if not isinstance(v, bool | int | float | str):
            raise ScenarioError(
                f"{field}.{key}: expected a number, true/false or a word, got {show(v)}"
            )
    _check_params(field, params)
    if isinstance(name, type):
        return _guest_spec(name, params, field)
    if not isinstance(name, str) or not name.strip():
        raise ScenarioError(f"{field}: expected {_core.CC_HELP}, got {show(value)}")
    # The name is read by the same grammar as a string, so `{name = "x.py:C:g=2"}` keeps g=2.
    spec = parse_cc(name, f"{field}.name")
    twice = sorted(params.keys() & spec["params"].keys())
    if twice:
        raise ScenarioError(f"{field}.{twice[0]}: given both in name and as a key; give it once")
    return {**spec, "params": {**spec["params"], **params}}


def _own_without_suffix(value: str, field: str) -> None:
    """A user's controller written without its file's suffix (`delay_start:DelayStart`) is
    named as one, not read by the built-ins' grammar."""
    name, colon, rest = value.strip().partition(":")
    for suffix in (".py", ".wasm"):
        if name and Path(name + suffix).expanduser().is_file():
            fix = f"{name}{suffix}{colon}{rest}"
            raise ScenarioError(
                f"{field}: {show(value)} names no algorithm; your own controller is written "
                f"PATH.py:CLASS or PATH.wasm: did you mean {show(fix)}?"
            )
    if "/" in name:
        raise ScenarioError(
            f"{field}: {show(value)} names no algorithm; your own controller is written with "
            f"its file's suffix: PATH.py:CLASS or PATH.wasm"
        )


def check_cc(spec: dict[str, Any], field: str, algorithms: list[dict[str, Any]]) -> None:
    """Name and parameter names against the core's registry (values are checked there); a
    user's controller checks its own when it is built."""
    if "guest" in spec:
        return
    by_name = {a["name"]: a for a in algorithms}
    algo = by_name.get(spec["name"])
    if algo is None:
        raise ScenarioError(
            f"{field}: unknown algorithm {show(spec['name'])} "
            f"(accepted: {', '.join(by_name)}; or {guests.HELP})"
        )
    accepted = [p["name"] for p in algo["params"]]
    for key in spec["params"]:
        if key not in accepted:
            raise ScenarioError(
                f"{field}: {algo['name']} has no parameter {show(key)} "
                f"(accepted: {', '.join(accepted) or 'none'})"
            )


def core_algorithms() -> list[dict[str, Any]] | None:
    """The core's algorithm registry, or None when the extension is not built. A fresh copy
    each call, parsed from the registry's JSON read once per process (a sweep loads thousands
    of configs)."""
    text = _core_algorithms_json()
    return None if text is None else json.loads(text)


@functools.cache
def _core_algorithms_json() -> str | None:
    try:
        return _core.algorithms()
    except ImportError:
        return None
