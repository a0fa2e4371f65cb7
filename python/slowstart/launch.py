"""The `slowstart` command's entry point (pyproject's `[project.scripts]`, `python -m slowstart`).

Ctrl-C while the CLI's modules load ends the command as Ctrl-C during a run does: `error:
interrupted` and status 130, never a traceback. Before `main()` runs, SIGINT is handled as it
was again (Python's KeyboardInterrupt, or ignored under `nohup`).
"""

import os
import signal


def _interrupted_while_loading(signum: int, frame: object) -> None:
    os.write(2, b"error: interrupted\n")
    os._exit(130)


_before = signal.getsignal(signal.SIGINT)
if _before is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted_while_loading)

from slowstart.cli import main  # noqa: E402 - loaded under the handler above

signal.signal(signal.SIGINT, _before)

__all__ = ["main"]
