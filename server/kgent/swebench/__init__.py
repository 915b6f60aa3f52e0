"""The SWE-bench front: instances → clean workspaces at base_commit → kernel runs → predictions JSONL for the
official harness (docs/swebench.md). `kgent swebench run|merge` drives it; `Evaluator` is the same in Python."""

from kgent.swebench.instances import Instance, InstanceError, Shard, load_dataset, load_instances, select
from kgent.swebench.merge import MergeReport, merge
from kgent.swebench.runner import FINAL, RETRY, EvalConfig, Evaluator, Progress

__all__ = [
    "FINAL",
    "RETRY",
    "EvalConfig",
    "Evaluator",
    "Instance",
    "InstanceError",
    "MergeReport",
    "Progress",
    "Shard",
    "load_dataset",
    "load_instances",
    "merge",
    "select",
]
