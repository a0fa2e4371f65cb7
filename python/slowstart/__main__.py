import sys

from slowstart.cli import main

sys.exit(main())
