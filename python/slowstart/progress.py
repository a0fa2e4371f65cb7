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
def bar(label: str, unit: str = "s", quiet: bool = False) -> Iterator[Callable[..., None]]:
    """A callback `update(done, total)`; the bar shows after SHOW_AFTER_S and is removed at
    the end. `unit` labels the numbers ("s" of simulated time, "runs"). A swarm's run also
    passes its state, `update(now_s, end_s, swarm)` (`_core.run`), shown beside (`numbers`)."""
    if not wanted(quiet):
        yield lambda done, total, swarm=None: None
        return

    start = time.monotonic()
    state: dict[str, Any] = {}

    def update(done: float, total: float, swarm: dict[str, Any] | None = None) -> None:
        if "progress" not in state:
            if time.monotonic() - start < SHOW_AFTER_S:
                return
            progress = rich_progress.Progress(
                rich_progress.TextColumn("{task.description}"),
                rich_progress.BarColumn(),
                rich_progress.TextColumn("{task.fields[numbers]}"),
                rich_progress.TimeElapsedColumn(),
                transient=True,
                console=rich_console.Console(stderr=True),  # stdout may be --json, piped
            )
            progress.start()
            state["progress"] = progress
            state["task"] = progress.add_task(label, total=1.0, numbers="")
        state["progress"].update(
            state["task"],
            completed=fraction(done, total, swarm),
            numbers=numbers(done, total, unit, swarm),
        )

    try:
        yield update
    finally:
        if "progress" in state:
            state["progress"].stop()


def fraction(done: float, total: float, swarm: dict[str, Any] | None = None) -> float:
    """How full the bar is: `done` of `total`; for a swarm that stops at completions, the
    larger of that and its completions of `stop_after`, since it ends at whichever comes
    first (a flash crowd's completions come long before its duration, all within seconds)."""
    part = done / total if total > 0 else 0.0
    if swarm is not None and swarm["stop_after"]:
        part = max(part, swarm["completions"] / swarm["stop_after"])
    return min(part, 1.0)


def numbers(done: float, total: float, unit: str, swarm: dict[str, Any] | None = None) -> str:
    """The bar's words: "312/4000 s", and for a swarm "312/4000 s, 12,108 peers joined, 3/100
    completed" (or "3 completed" with no stop_after)."""
    text = f"{done:.0f}/{total:.0f} {unit}"
    if swarm is None:
        return text
    stop = swarm["stop_after"]
    completed = f"{swarm['completions']:,}" + (f"/{stop:,}" if stop else "")
    return f"{text}, {swarm['peers']:,} peers joined, {completed} completed"
