import sys

from slowstart.launch import main

sys.exit(main())
