# Concept: joining shard outputs — the predictions, summaries and trajectories of several output directories into one.
"""`merge(sources, dest)` refuses what would make a wrong predictions file: an instance predicted twice with
different patches, or (unless `allow_partial`) a set of shards with one missing. It writes `dest` like a run does:
every file whole, trajectories hard-linked where the filesystem allows, else copied."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgent.swebench.instances import Shard
from kgent.swebench.output import (
    PREDICTIONS,
    OutputDir,
    OutputError,
    Summary,
    prediction_line,
    read_predictions,
    replace_file,
    write_json,
)


@dataclass(slots=True)
class MergeReport:
    predictions: int = 0
    instances: int = 0
    sources: int = 0
    shards: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def merge(sources: Sequence[Path], dest: Path, *, allow_partial: bool = False) -> MergeReport:
    """Join the output directories `sources` into `dest` (a new or empty output directory)."""
    report = MergeReport(sources=len(sources))
    if not sources:
        raise OutputError("merge needs at least one output directory")
    predictions: dict[str, dict[str, Any]] = {}
    records: dict[str, dict[str, Any]] = {}
    origin: dict[str, Path] = {}
    metas: list[dict[str, Any]] = []
    for src in sources:
        if not (src / PREDICTIONS).is_file() and not (src / "summary.json").is_file():
            raise OutputError(
                f"{src} is not a kgent swebench output directory (no predictions.jsonl or summary.json)"
            )
        summary = Summary.load(src / "summary.json")
        metas.append(summary.meta)
        for pred in read_predictions(src / PREDICTIONS):
            iid = pred["instance_id"]
            if iid in predictions and predictions[iid] != pred:
                raise OutputError(f"{iid} has different predictions in {origin[iid]} and {src}")
            predictions[iid], origin[iid] = pred, src
        for iid, rec in summary.instances.items():
            if iid not in records or origin.get(iid) == src:  # the record that goes with the prediction wins
                records[iid] = {**rec, "source": str(src)}
    report.shards = _check_shards(metas, allow_partial, report.notes)
    names = sorted({p["model_name_or_path"] for p in predictions.values()})
    if len(names) > 1:
        report.notes.append(f"the predictions name {len(names)} models: {', '.join(names)}")
    with OutputDir(dest) as out:
        if out.done or out.summary.instances:
            raise OutputError(f"{dest} already holds results: merge into a new directory")
        lines = b"".join(
            prediction_line(p["instance_id"], p["model_name_or_path"], p.get("model_patch") or "")
            for _, p in sorted(predictions.items())
        )
        replace_file(out.predictions_path, lines)
        for iid in sorted(records):
            _link(records[iid], iid, out)
        meta = {
            "model_name_or_path": names[0] if len(names) == 1 else names,
            "merged_from": [str(s) for s in sources],
            "shards": report.shards,
            "selected": sum(int(m.get("selected") or 0) for m in metas),
        }
        write_json(out.summary_path, Summary(meta=meta, instances=records).to_dict())
    report.predictions, report.instances = len(predictions), len(records)
    return report


def _check_shards(metas: list[dict[str, Any]], allow_partial: bool, notes: list[str]) -> list[str]:
    shards = [Shard.parse(m["shard"]) for m in metas if m.get("shard")]
    if not shards:
        return []
    counts = {s.count for s in shards}
    if len(counts) > 1:
        raise OutputError(f"the shards come from different splits: {', '.join(sorted(map(str, shards)))}")
    count = counts.pop()
    seen = [s.index for s in shards]
    dup = sorted({i for i in seen if seen.count(i) > 1})
    if dup:
        raise OutputError(f"shard {', '.join(f'{i}/{count}' for i in dup)} given more than once")
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if missing:
        message = f"missing shard{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
        if not allow_partial:
            raise OutputError(message + " (pass --allow-partial to merge what there is)")
        notes.append(message)
    return [str(s) for s in sorted(shards, key=lambda s: s.index)]


def _link(record: dict[str, Any], instance_id: str, out: OutputDir) -> None:
    src = Path(record["source"]) / str(record.get("trajectory") or "")
    if not record.get("trajectory") or not src.is_file():
        return
    dst = out.trajectory_path(instance_id)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)
