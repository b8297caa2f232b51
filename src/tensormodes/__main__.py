"""``python -m tensormodes trace SCRIPT ...``: the ``tensormodes`` command (see ``tensormodes.cli``)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
