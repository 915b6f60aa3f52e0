"""`python -m kgent.testing [--port N] [--script NAME|FILE]`: run the local model server in the foreground."""

from kgent.testing.model_server import main

main()
