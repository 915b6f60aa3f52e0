# Concept: what a run changed and how a person keeps or reverts it — git-backed change tracking, unified diffs and
# per-file patches, hunks with revert and conflicts. Pure functions and git only; no kernel.
"""Change tracking, diffs and hunks."""
