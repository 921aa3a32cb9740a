"""``python -m xlacli``."""

import sys

from xlacli.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
