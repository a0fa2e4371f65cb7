"""Scenario loading: a TOML file (or dict) plus overrides → the canonical config for the core.

The loader is the core's (crates/slowstart-config/src/scenario/, through `_core.load_scenario`):
units, the `[path]` shorthand, left-out keys, overrides, every key, default, word and bound, and
every message, which starts with the dotted field (`flow.0.mss`, `path.rate`) and says what is
accepted. What stays here is what touches the user's files and objects: finding a scenario by
name and reading it (its users' controllers found from its folder), loading those controllers
(loading/guests.py: a Python class, a .py, .wasm or .bpf.o file) and reading trace files
(loading/files.py), which the core asks for through `_Files`.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.loading import guests
from slowstart.loading.defaults import key_names, key_units, keys
from slowstart.loading.files import read_toml as read_toml  # callers import it from here
from slowstart.loading.files import read_trace
from slowstart.paths import scenario_path
from slowstart.units import ScenarioError, show

_core = lazy.module("slowstart._core")


# Which keys each table takes, in the order messages list them, are the core's
# (crates/slowstart-config/src/keys.rs, through slowstart.loading.defaults), read on first use.
_KEY_TABLES = {
    "TOP_KEYS": "top",
    "PATH_KEYS": "path",
    "LINK_KEYS": "link",
    "DROP_KEYS": "drop",
    "TRACE_KEYS": "trace",
    "FLOW_KEYS": "flow",
    "SWARM_KEYS": "swarm",
    "SWARM_BITTORRENT_KEYS": "swarm.bittorrent",
    # A swarm transport takes a [[flow]] table's keys but for what the swarm decides itself.
    "SWARM_FLOW_KEYS": "swarm.transport",
}


def __getattr__(name: str) -> Any:
    """TOP_KEYS, PATH_KEYS, ... (each table's keys); CROSS_FIELDS (`[[cross]]`: key → (unit,
    canonical field)); SWARM_TABLES; NOT_WITH_SWARM (top-level keys a swarm must not give)."""
    if name in _KEY_TABLES:
        return keys(_KEY_TABLES[name])
    if name == "CROSS_FIELDS":
        return key_units("cross")
    if name in ("SWARM_TABLES", "NOT_WITH_SWARM"):
        return key_names(name.lower())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- reading ------------------------------------------------------------------------------


def read_scenario(source: str | os.PathLike[str] | dict[str, Any]) -> dict[str, Any]:
    """The raw scenario: a TOML file (named after its stem unless it says) or a copy of a dict."""
    if isinstance(source, dict):
        return copy.deepcopy(source)
    if not isinstance(source, str | os.PathLike):
        raise ScenarioError(
            f"scenario: expected a .toml path, a scenario name or a dict, got {show(source)}"
        )
    path = scenario_path(os.fspath(source))  # "satellite" finds scenarios/satellite.toml
    raw = read_toml(path, "scenario")
    raw.setdefault("name", path.stem)
    _controllers_from(raw, path.parent)
    return raw


def _controllers_from(raw: dict[str, Any], folder: Path) -> None:
    """Users' controllers the file names are found from its folder (guests.from_folder)."""
    flows = raw.get("flow") if isinstance(raw.get("flow"), list) else []
    swarm = raw.get("swarm") if isinstance(raw.get("swarm"), dict) else {}
    tables = [*flows, *(swarm.get(k) for k in ("tcp", "utp"))]
    for table in tables:
        if not isinstance(table, dict):
            continue
        holder = table["cc"] if isinstance(table.get("cc"), dict) else table
        key = "name" if holder is not table else "cc"
        if key in holder:
            holder[key] = guests.from_folder(holder[key], folder)


# --- what the core's loader asks of the user's files ----------------------------------------


class _Files:
    """The core loader's host (crates/slowstart-config/src/scenario/mod.rs `Host`): users'
    controllers loaded and hashed (guests.resolve), trace files read (files.read_trace). A
    Python class given as an object reaches the core as a placeholder reference (`_named`)."""

    def __init__(self) -> None:
        self.classes: dict[str, type] = {}

    def named(self, value: Any) -> Any:
        """`value` with each class in it as a placeholder reference the core reads as a user's
        controller and hands back to `guest`."""
        if isinstance(value, type):
            ref = f"<class {len(self.classes)}>.py:{value.__name__}"
            self.classes[ref] = value
            return ref
        if isinstance(value, dict):
            return {k: self.named(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.named(v) for v in value]
        return value

    def unnamed(self, value: Any) -> Any:
        """`value` with each placeholder back as its class."""
        if isinstance(value, str):
            return self.classes.get(value, value)
        if isinstance(value, dict):
            return {k: self.unnamed(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.unnamed(v) for v in value]
        return value

    def guest(self, reference: str, field: str) -> tuple[str, dict[str, Any]]:
        """The controller loaded, hashed and registered with the core (which checks the
        config's names against its registry before `load` returns)."""
        try:
            spec = guests.resolve(self.classes.get(reference, reference), field)
            guests.register_one(spec["name"], spec["guest"])
        except guests.GuestError as e:
            raise ScenarioError(str(e)) from None
        return spec["name"], spec["guest"]

    def trace(self, name: str, field: str) -> tuple[str, int, int]:
        return tuple(read_trace(name, field))  # type: ignore[return-value]

    def is_file(self, path: str) -> bool:
        return Path(path).expanduser().is_file()


def _core_loader(raw: Any, files: _Files, until: str, **overrides: Any) -> Any:
    """The core's loader (`_core.load_scenario`) on the raw scenario, as far as `until`
    ("overridden", "built", "checked"); its one line as ScenarioError."""
    given = {k: files.named(v) for k, v in overrides.items() if v is not None}
    if isinstance(given.get("set"), tuple):  # the keyword's default; a scenario's tuple is no list
        given["set"] = list(given["set"])
    try:
        return _core.load_scenario(files.named(raw), files, until=until, **given)
    except ValueError as e:
        raise ScenarioError(str(e)) from None


# --- overriding and building ----------------------------------------------------------------


def parse_set_value(text: str) -> Any:
    """A `--set` value as the core reads it: a TOML value (`8960`, `"1Gbps"`, `false`, `[...]`,
    `{...}`); anything else is a string."""
    return _core.set_value(text)


def apply_overrides(
    raw: dict[str, Any],
    *,
    cc: str | dict[str, Any] | type | None = None,
    set: list[str] | tuple[str, ...] | str = (),  # noqa: A002 - the documented keyword
    seed: int | None = None,
    duration: str | int | float | None = None,
) -> dict[str, Any]:
    """Apply `cc` (every flow), then each `set` item, then `seed` and `duration`, as the core's
    loader does (scenario/overrides.rs). In place; returns `raw`."""
    files = _Files()
    applied = _core_loader(
        raw, files, until="overridden", set=set, cc=cc, seed=seed, duration=duration
    )
    raw.clear()
    raw.update(files.unnamed(applied))
    return raw


def apply_set(raw: dict[str, Any], item: str) -> None:
    """One `KEY=VALUE` override, KEY a dotted path such as `flow.0.mss` or `path.rate`."""
    apply_overrides(raw, set=[item])


def build_config(raw: dict[str, Any]) -> dict[str, Any]:
    """A raw scenario resolved to the canonical config by the core's loader, not yet checked by
    the core's rules (`load` is)."""
    return _core_loader(raw, _Files(), "built")  # type: ignore[no-any-return]


def load(
    source: str | os.PathLike[str] | dict[str, Any],
    *,
    cc: str | dict[str, Any] | type | None = None,
    set: list[str] | tuple[str, ...] | str = (),  # noqa: A002 - the documented keyword
    seed: int | None = None,
    duration: str | int | float | None = None,
) -> dict[str, Any]:
    """A scenario file or dict with overrides → the canonical config (not yet run), checked
    by the core's own rules (crates/slowstart-config/src/config/ `validate`) when it is built;
    the users' controllers it runs registered with the core (`_Files.guest`)."""
    config: dict[str, Any] = _core_loader(
        read_scenario(source),
        _Files(),
        "checked",
        set=set,
        cc=cc,
        seed=seed,
        duration=duration,
    )
    return config


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
