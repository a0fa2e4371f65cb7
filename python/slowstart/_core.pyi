"""Types of the Rust extension (crates/slowstart-py)."""

from typing import Any

__version__: str

def run(config_json: str) -> dict[str, Any]:
    """Run a canonical JSON config.

    Returns {"summary": JSON str, "flows": {column: (bytes, dtype)}, "queues": {...},
    "apps": {...}, "phase_names": [str]}. Raises ValueError("<field>: <message>") for a bad
    config.
    """

def algorithms() -> str:
    """JSON list of {name, summary, source, params: [{name, doc, default, accepted}]}."""
