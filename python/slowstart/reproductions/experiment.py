"""An experiment as data, and one row of its table: the published value beside ours and the
verdict. `reproduce.py` beside it holds the experiments (`EXPERIMENTS`) and runs them; the
modules that draw an experiment's own figures or run its variants themselves (`atou`, `dctcp_fig17`,
`net100_cross`, ...) need only these, so they sit below it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowstart.loading.scenario import core_algorithms

if TYPE_CHECKING:
    from slowstart.running.api import Result
    from slowstart.running.measures import Measure

Metric = str | Callable[[dict[str, Any]], float | None]


@dataclass(frozen=True)
class Variant:
    label: str
    overrides: tuple[str, ...]
    published: float | None  # None: no published value for this row
    metric: Metric | None = None  # default: the experiment's flow metric
    bound: str = "="  # "=": within tolerance; "<" / ">": published is an upper / lower bound
    unit: str | None = None  # default: the experiment's unit
    measure: Measure | None = field(default=None, compare=False)  # overrides `metric`
    scenario: str | None = None  # default: the experiment's
    requires: tuple[str, ...] = ()  # algorithms that must be registered to run it
    # Why it cannot run on this machine (files absent), or None.
    unavailable: Callable[[], str | None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    source: str
    scenario: str  # file stem in scenarios/
    metric: str  # key of summary["flows"][flow]
    unit: str
    tolerance: float  # relative, e.g. 0.10 for ±10%
    common: tuple[str, ...]
    variants: tuple[Variant, ...]
    flow: int = 0
    # Figures and tables of its own: (experiment, results by variant, folder) -> paths written.
    figures: Callable[[Experiment, list[Result], Path], list[Path]] | None = field(
        default=None, compare=False
    )
    # Runs the variants itself, for experiments that are more than one run per variant (real
    # runs beside simulated ones): (experiment, folder, progress) -> (rows, paths written).
    runner: Callable[..., tuple[list[Row], list[Path]]] | None = field(default=None, compare=False)


def summary_value(summary: dict[str, Any], path: str) -> Any:
    """`flows.0.slow_start_exit_s`-style lookup; None where the path has no value."""
    node: Any = summary
    for part in path.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node


def missing_algorithms(v: Variant) -> list[str]:
    """The algorithms `v` needs that the built core does not register (yet)."""
    if not v.requires:
        return []

    known = {a["name"] for a in core_algorithms() or []}
    return [name for name in v.requires if name not in known]


def runnable(v: Variant) -> str | None:
    """Why `v` cannot run here (algorithms not registered, files absent), or None."""
    missing = missing_algorithms(v)
    if missing:
        return f"{', '.join(missing)} not registered yet"
    return v.unavailable() if v.unavailable else None


def variant_value(exp: Experiment, v: Variant, summary: dict[str, Any]) -> float | None:
    metric = v.metric if v.metric is not None else f"flows.{exp.flow}.{exp.metric}"
    return metric(summary) if callable(metric) else summary_value(summary, metric)


# The one rule every verdict follows, printed under each table and quoted in the README.
VERDICT_RULE = (
    "verdict: ok when ours is within the tolerance of the published value "
    "(|ours - published| / published <= tolerance); for a published upper bound (<), ok when "
    "ours <= published x (1 + tolerance), for a lower bound (>), ok when ours >= published x "
    "(1 - tolerance); off otherwise; - where nothing is published; not reached where the run "
    "gives no value"
)


@dataclass
class Row:
    label: str
    published: float | None
    ours: float | None
    tolerance: float
    bound: str = "="
    unit: str | None = None
    pending: str | None = None  # why the variant was not run

    @property
    def rel_diff(self) -> float | None:
        if self.ours is None or not self.published:
            return None
        return (self.ours - self.published) / self.published

    @property
    def verdict(self) -> str:
        if self.pending is not None:
            return f"pending: {self.pending}"
        if self.published is None:
            return "-" if self.ours is not None else "not reached"
        rel = self.rel_diff
        if rel is None:
            return "not reached"
        if self.bound == "<":
            return "ok" if rel <= self.tolerance else "off"
        if self.bound == ">":
            return "ok" if rel >= -self.tolerance else "off"
        return "ok" if abs(rel) <= self.tolerance else "off"

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "published": self.published,
            "bound": self.bound,
            "ours": self.ours,
            "rel_diff": self.rel_diff,
            "verdict": self.verdict,
            "pending": self.pending,
        }
