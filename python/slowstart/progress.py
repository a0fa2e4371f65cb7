"""Progress bars on stderr for work that takes more than a second (rich), and nothing at all
when stderr is not a terminal or the user asked for quiet."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from slowstart import lazy

rich_console = lazy.module("rich.console")
rich_progress = lazy.module("rich.progress")


# A bar appears only once the work has taken this long (seconds of wall time).
SHOW_AFTER_S = 1.0


def wanted(quiet: bool = False) -> bool:
    """Whether to draw progress: stderr is a terminal and not --quiet."""
    return not quiet and sys.stderr.isatty()


@contextmanager
def bar(
    label: str, unit: str = "s", quiet: bool = False
) -> Iterator[Callable[[float, float], None]]:
    """A callback `update(done, total)`; the bar shows after SHOW_AFTER_S and is removed at
    the end. `unit` labels the numbers ("s" of simulated time, "runs")."""
    if not wanted(quiet):
        yield lambda done, total: None
        return

    start = time.monotonic()
    state: dict[str, Any] = {}

    def update(done: float, total: float) -> None:
        if "progress" not in state:
            if time.monotonic() - start < SHOW_AFTER_S:
                return
            progress = rich_progress.Progress(
                rich_progress.TextColumn("{task.description}"),
                rich_progress.BarColumn(),
                rich_progress.TextColumn(f"{{task.completed:.0f}}/{{task.total:.0f}} {unit}"),
                rich_progress.TimeElapsedColumn(),
                transient=True,
                console=rich_console.Console(stderr=True),  # stdout may be --json, piped
            )
            progress.start()
            state["progress"] = progress
            state["task"] = progress.add_task(label, total=total)
        state["progress"].update(state["task"], completed=done, total=total)

    try:
        yield update
    finally:
        if "progress" in state:
            state["progress"].stop()
