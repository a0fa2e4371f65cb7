"""Types of the Rust extension (crates/slowstart-py)."""

from collections.abc import Callable
from typing import Any

__version__: str

def run(
    config_json: str,
    progress: Callable[[float, float], object] | None = None,
    qlog: str | None = None,
    pcap: str | None = None,
) -> dict[str, Any]:
    """Run a canonical JSON config; `progress(now_s, end_s)` about every 100 ms of wall time.
    `qlog` and `pcap` are folders for one qlog file per flow and one capture per link direction
    (OSError if one cannot be written).

    Returns {"summary": JSON str, "flows": {column: (bytes, dtype, unset, codes)}, "queues":
    {...}, "apps": {...}, "phase_names": [str], "link_names": [str]} (see api.frame). Ctrl-C
    stops the run and returns what it has, its summary saying "interrupted". Raises
    ValueError("<field>: <message>") for a bad config.
    """

def validate(config_json: str) -> None:
    """Parse and check a canonical JSON config; ValueError("<field>: <message>") if bad."""

def algorithms() -> str:
    """JSON list of {name, summary, source, slow_start (the default slow-start rule, or null
    for an algorithm without one), params: [{name, doc, default, accepted}]}."""

def defaults() -> str:
    """JSON object of every default of the canonical config: flow, web, bittorrent, trace,
    swarm (with its tcp and utp transports), path, queue (each discipline's parameters, by
    kind), and words: each choice's accepted words with the canonical value of each
    (crates/slowstart-sim/src/config.rs)."""

def schema() -> str:
    """JSON object of the names a run reports under: `flow` and `link` (an empty summary row
    of each, keys in order) and `flows` and `queues` (trace column names in order)."""
