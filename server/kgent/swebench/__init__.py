"""The SWE-bench front: instances → clean workspaces at base_commit → kernel runs → predictions JSONL for the
official harness (docs/swebench.md)."""

from kgent.swebench.instances import Instance, InstanceError, Shard, load_dataset, load_instances, select

__all__ = [
    "Instance",
    "InstanceError",
    "Shard",
    "load_dataset",
    "load_instances",
    "select",
]
