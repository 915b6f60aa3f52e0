"""The editor daemon (`kgent serve --stdio`): JSON-RPC over stdio on pygls; the wire contract is protocol.md.

Kept import-free: `initialize` is answered before pygls and the kernel are loaded (see kgent.daemon.boot).
"""
