"""The API keys in Kgent's own environment: remembered for redaction, then wiped from the process's environment block
(kgent.core.keyenv.hide_keys, called once by the process entry points). Stdlib only: on the daemon's boot path."""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping

from kgent.core.redact import remember_secret

# Every variable a key may come from (kgent.providers.keys.key_env_names' whole range): remembered for redaction and
# taken out of the process's environment block at start (hide_keys).
KEY_VARS = ("KGENT_API_KEY", "DEEPSEEK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")


def hide_keys(environ: MutableMapping[str, str] | None = None) -> tuple[str, ...]:
    """Make the keys in the environment unreadable from outside this process, and redacted wherever they appear.

    Each key variable's value is remembered (kgent.core.redact: masked in error texts, tool results and their
    events), then, on Linux, wiped from the environment block the kernel shows as /proc/<pid>/environ — so a
    command in full mode (no sandbox) that reads `/proc/$PPID/environ` finds no key — and removed from the C
    environment that child processes would inherit. Python's `os.environ` keeps its copy: provider configuration
    reads the key from there. Called once by the process entry points (`kgent …`, `python -m kgent.daemon`), never by
    a library user. Returns the names that held a key."""
    env = os.environ if environ is None else environ
    names = tuple(n for n in KEY_VARS if env.get(n))
    for name in names:
        remember_secret(env[name])
    if names and environ is None and sys.platform.startswith("linux"):
        _wipe_environ_block(names)
    return names


def _wipe_environ_block(names: tuple[str, ...]) -> None:
    """Unset `names` in the C environment and zero their `NAME=value` strings where they lie in memory.

    Hand-rolled (ctypes) because no library does it and a re-exec would cost the start-up a second interpreter:
    /proc/<pid>/environ reads the strings the kernel laid out at exec, which unsetenv leaves in place; zeroing them
    there is the only way to take them out of that view."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    environ = ctypes.POINTER(ctypes.c_void_p).in_dll(libc, "environ")
    wanted = {n.encode() for n in names}
    found: list[tuple[int, int]] = []  # (address, length) of each NAME=value string
    i = 0
    while environ[i]:
        address = environ[i]
        assert address is not None
        entry = ctypes.string_at(address)
        if entry.partition(b"=")[0] in wanted:
            found.append((address, len(entry)))
        i += 1
    for name in names:
        libc.unsetenv(name.encode())  # drops the pointer from `environ`; the string stays where it was
    for address, length in found:
        ctypes.memset(address, 0, length)
