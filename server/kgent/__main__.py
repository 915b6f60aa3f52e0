"""`python -m kgent` = the `kgent` command."""

import sys

from kgent.cli.main import main

sys.exit(main())
