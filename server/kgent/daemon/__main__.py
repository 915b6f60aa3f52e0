"""`python -m kgent.daemon [--stdio]`: the daemon without the CLI's argument parsing (tests, benchmarks)."""

import sys

from kgent.daemon.boot import main

if __name__ == "__main__":
    if any(a not in ("--stdio",) for a in sys.argv[1:]):
        sys.stderr.write("usage: python -m kgent.daemon [--stdio]\n")
        sys.exit(2)
    sys.exit(main())
