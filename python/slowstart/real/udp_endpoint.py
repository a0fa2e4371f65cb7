"""`python -m slowstart.real.udp_endpoint GUESTS ROLE OPTIONS`: one endpoint of `slowstart real
--stack udp` for a flow whose controller is a Python class.

The endpoint is the `slowstart-udp` binary's own, with the same ROLE and OPTIONS
(crates/slowstart-udp/src/cli.rs), run in this process through the extension
(`slowstart._core.udp_endpoint`) once the controllers in GUESTS are registered with the core:
the Python controller is called in-process, the loop runs without the GIL between its calls.
GUESTS is the file udp.py writes for the run (`write_guests`): the caller's `sys.path`,
then each controller's spec and pickled payload (guests.py), as a sweep's workers get them.
Exit status and output are the binary's; a controller that cannot be loaded here is bad input
(one `error: ` line, status 2).
"""

from __future__ import annotations

import pickle
import signal
import sys
from pathlib import Path
from typing import Any

from slowstart import lazy
from slowstart.loading import guests

_core = lazy.module("slowstart._core")


EXIT_BAD_INPUT = 2


def write_guests(path: Path, specs: dict[str, dict[str, Any]]) -> None:
    """Write the controllers of `specs` (by canonical name, loaded in this process) for an
    endpoint: this process's `sys.path` first, so that a class given as an object is found
    where it was."""
    payloads = guests.payloads_for([{"flows": [{"cc": s} for s in specs.values()]}])
    # Without a payload here, the endpoint loads the controller from its spec's path.
    carried = {
        n: (s, pickle.dumps(payloads[n]) if n in payloads else None) for n, s in specs.items()
    }
    with path.open("wb") as f:
        pickle.dump(list(sys.path), f)
        pickle.dump(carried, f)


def _register(path: str) -> None:
    """Register the controllers `path` carries; GuestError naming the one that fails."""
    try:
        with open(path, "rb") as f:
            sys.path[:0] = [p for p in pickle.load(f) if p not in sys.path]
            carried: dict[str, tuple[dict[str, Any], bytes | None]] = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError) as e:
        raise guests.GuestError(f"{path}: not a controllers file: {e}") from None
    for name, (spec, payload) in carried.items():
        try:
            if payload is not None:
                guests.install({name: pickle.loads(payload)})
        except Exception as e:  # noqa: BLE001 - a class this process cannot import, in one line
            raise guests.GuestError(
                f"cc {name}: cannot be loaded in the UDP endpoint: {type(e).__name__}: {e}"
            ) from None
        guests.register({"flows": [{"cc": spec}]})


def main(argv: list[str]) -> int:
    # Ctrl-C ends the endpoint at once, as it ends the binary; SIGTERM's default does too.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if not argv:
        print("error: expected a controllers file, then the endpoint's role", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        _register(argv[0])
    except guests.GuestError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT

    return int(_core.udp_endpoint(argv[1:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
