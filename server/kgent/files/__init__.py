# Concept: the workspace's files as Kgent itself touches them — path safety (inside, protected, hard-linked), the
# protected names, where git keeps the repository, gitignore-aware walking, and the FileOps I/O seam. Stdlib only.
"""Files: what is inside the workspace and what is protected, decided in one place for every reader and writer."""
