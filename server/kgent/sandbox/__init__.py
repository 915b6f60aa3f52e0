# Concept: how a command runs — bubblewrap around it, argvs wired into pipelines with no shell, process groups,
# output spill files. Stdlib only: the daemon's handshake reports the sandbox before the kernel is imported.
"""The sandbox and process handling for shell commands."""
