"""The SWE-bench front: instances → clean workspaces at base_commit → kernel runs → predictions JSONL for the
official harness (docs/swebench.md). `Evaluator` runs them."""

from kgent.swebench.instances import Instance, InstanceError, Shard, load_dataset, load_instances, select
from kgent.swebench.runner import FINAL, RETRY, EvalConfig, Evaluator, Progress

__all__ = [
    "FINAL",
    "RETRY",
    "EvalConfig",
    "Evaluator",
    "Instance",
    "InstanceError",
    "Progress",
    "Shard",
    "load_dataset",
    "load_instances",
    "select",
]
