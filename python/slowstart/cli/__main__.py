"""`python -m slowstart.cli`: the command without slowstart.launch's Ctrl-C handling while
loading (`python -m slowstart` has it)."""

import sys

from slowstart.cli import main

sys.exit(main())
