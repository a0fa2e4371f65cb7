"""A scorecard's suite: the TOML file of paths and metrics (its format in score.py's docstring)
read and checked, each path as a PathSpec, and a selection of its paths (`--path`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.loading.scenario import (
    read_toml,
)
from slowstart.paths import SUITE
from slowstart.reports.score_metrics import (
    METRICS,
)
from slowstart.running.sweeps import parse_seeds
from slowstart.units import ScenarioError, parse_time, show

np = lazy.module("numpy")


# The newest suite format this slowstart reads.


# The newest suite format this slowstart reads.
SUITE_VERSION = 1
SUITE_KEYS = ("version", "name", "description", "path")
PATH_KEYS = (
    "key",
    "title",
    "source",
    "scenario",
    "set",
    "seeds",
    "metrics",
    "flow",
    "incumbent",
    "link",
    "figure",
)


@dataclass(frozen=True)
class PathSpec:
    """A suite's [[path]], checked (its defaults are `_path`'s)."""

    key: str
    title: str
    source: str
    scenario: str | dict[str, Any]  # a file or an inline scenario
    set: tuple[str, ...]
    seeds: tuple[int | None, ...]  # None: the scenario's own
    metrics: tuple[str, ...]
    flow: int
    incumbent: int | None
    link: str
    figure_s: float

    @property
    def where(self) -> str:
        return f"path {self.key}"


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    file: Path
    paths: tuple[PathSpec, ...]
    version: int = SUITE_VERSION


def _field(file: Path, index: int | None, key: str) -> str:
    return f"{file}: " + (f"path.{index}.{key}" if index is not None else key)


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ScenarioError(f"{where}: expected a non-empty string, got {show(value)}")
    return value.strip()


def _index(value: object, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ScenarioError(f"{where}: expected a flow index (0, 1, ...), got {show(value)}")
    return value


def _seeds(value: object, where: str) -> tuple[int | None, ...]:
    if isinstance(value, str):
        try:
            return tuple(parse_seeds(value))
        except ScenarioError as e:
            raise ScenarioError(f"{where}: {e}") from None
    if (
        isinstance(value, list)
        and value
        and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value)
        and len(set(value)) == len(value)
    ):
        return tuple(value)
    raise ScenarioError(f'{where}: expected seeds such as [1, 2, 3] or "1-5", got {show(value)}')


def _metrics(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(m, str) for m in value):
        raise ScenarioError(f"{where}: expected a list of metric names, got {show(value)}")
    for name in value:
        if name not in METRICS:
            raise ScenarioError(
                f"{where}: unknown metric {show(name)} (accepted: {', '.join(METRICS)})"
            )
    if len(set(value)) != len(value):
        raise ScenarioError(f"{where}: a metric is listed twice in {value}")
    return tuple(value)


def _scenario(value: object, where: str, folder: Path) -> str | dict[str, Any]:
    if isinstance(value, dict):
        return value
    text = _text(value, where)
    beside = folder / text
    return str(beside) if text.endswith(".toml") and beside.is_file() else text


def _path(item: object, i: int, file: Path) -> PathSpec:
    if not isinstance(item, dict):
        raise ScenarioError(f"{_field(file, i, '')[:-1]}: expected a [[path]] table")
    for key in item:
        if key not in PATH_KEYS:
            raise ScenarioError(
                f"{_field(file, i, key)}: unknown key (accepted: {', '.join(PATH_KEYS)})"
            )
    for key in ("key", "title", "source", "scenario", "metrics"):
        if key not in item:
            raise ScenarioError(f"{_field(file, i, key)}: missing (every path needs it)")
    at = lambda key: _field(file, i, key)  # noqa: E731 - a short local helper
    sets = item.get("set", [])
    if not isinstance(sets, list) or not all(isinstance(s, str) for s in sets):
        raise ScenarioError(f'{at("set")}: expected ["key=value", ...], got {show(sets)}')
    flow = _index(item.get("flow", 0), at("flow"))
    incumbent = item.get("incumbent")
    if incumbent is not None:
        incumbent = _index(incumbent, at("incumbent"))
        if incumbent == flow:
            raise ScenarioError(f"{at('incumbent')}: must be another flow than flow ({flow})")
    metrics = _metrics(item["metrics"], at("metrics"))
    needing = [m for m in metrics if METRICS[m].needs_incumbent]
    if needing and incumbent is None:
        raise ScenarioError(f"{at('metrics')}: {needing[0]} needs an incumbent = N")
    figure_s = parse_time(item.get("figure", "10s"), at("figure")) / 1e9
    if figure_s <= 0:
        raise ScenarioError(f'{at("figure")}: expected a time above zero such as "10s"')
    return PathSpec(
        key=_text(item["key"], at("key")),
        title=_text(item["title"], at("title")),
        source=_text(item["source"], at("source")),
        scenario=_scenario(item["scenario"], at("scenario"), file.parent),
        set=tuple(sets),
        seeds=_seeds(item["seeds"], at("seeds")) if "seeds" in item else (None,),
        metrics=metrics,
        flow=flow,
        incumbent=incumbent,
        link=_text(item.get("link", "bottleneck"), at("link")),
        figure_s=figure_s,
    )


def default_suite() -> Path:
    return SUITE


def load_suite(file: str | os.PathLike[str] | None = None) -> Suite:
    """A suite file (default: the built-in one) checked whole: every error names the file and
    the field, and says what is accepted."""
    path = Path(file) if file is not None else default_suite()
    raw = read_toml(path, "suite")
    for key in raw:
        if key not in SUITE_KEYS:
            raise ScenarioError(f"{path}: {key}: unknown key (accepted: {', '.join(SUITE_KEYS)})")
    version = raw.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ScenarioError(f"{path}: version: expected the suite format's version, such as 1")
    if version > SUITE_VERSION:
        raise ScenarioError(
            f"{path}: version: {version} is newer than this slowstart reads ({SUITE_VERSION})"
        )
    items = raw.get("path")
    if not isinstance(items, list) or not items:
        raise ScenarioError(f"{path}: path: expected at least one [[path]] table")
    paths = tuple(_path(item, i, path) for i, item in enumerate(items))
    keys = [p.key for p in paths]
    for key in keys:
        if keys.count(key) > 1:
            raise ScenarioError(f"{path}: path key {show(key)} is used twice")
    return Suite(
        name=_text(raw.get("name", path.stem), _field(path, None, "name")),
        description=str(raw.get("description", "")),
        file=path,
        paths=paths,
        version=version,
    )


def select(suite: Suite, keys: Sequence[str]) -> Suite:
    """The suite with only the paths named (in the suite's order)."""
    if not keys:
        return suite
    known = [p.key for p in suite.paths]
    for key in keys:
        if key not in known:
            raise ScenarioError(f"--path {key}: not in {suite.file} (paths: {', '.join(known)})")
    paths = tuple(p for p in suite.paths if p.key in keys)
    return Suite(suite.name, suite.description, suite.file, paths, suite.version)
