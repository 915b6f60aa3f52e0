"""The editor daemon (`kgent serve --stdio`): JSON-RPC over stdio (its core: kgent.daemon.rpc); the wire contract is
protocol.md.

Kept import-free: `initialize` is answered before the server and the kernel are loaded (see kgent.daemon.boot).
"""
