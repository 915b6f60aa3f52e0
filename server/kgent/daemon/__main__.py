"""`python -P -m kgent.daemon [--stdio]`: the daemon without the CLI's argument parsing (tests, benchmarks). Without
-P, Python imports what this module and the package import first (`typing`, `re`…) from the working directory
before Kgent can take it off the path (kgent.core.loading)."""

import sys

from kgent.core.loading import start_process

start_process()  # before the boot path's modules define their classes (kgent.core.loading)

from kgent.daemon.boot import main  # noqa: E402

if __name__ == "__main__":
    if any(a not in ("--stdio",) for a in sys.argv[1:]):
        sys.stderr.write("usage: python -m kgent.daemon [--stdio]\n")
        sys.exit(2)
    sys.exit(main())
