"""`python -m kgent` = the `kgent` command (`python -P -m kgent` in a project you do not trust: without -P, Python
imports what the package imports first from the working directory, before Kgent takes it off the path)."""

import sys

from kgent.cli.main import main

sys.exit(main())
