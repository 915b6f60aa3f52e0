# Concept: SWE-bench instances — read them (a JSONL/JSON file or a Hugging Face dataset), pick some, shard them.
"""Instances in the SWE-bench schema: `instance_id`, `repo`, `base_commit`, `problem_statement` are required;
`hints_text` and any other field (`version`, `FAIL_TO_PASS`, …) are kept as they came, for the prompt template.

Both schemas are read: the classic one and swebench 5's, which adds what its harness evaluates with (`image`,
`eval_script`, `log_parser`, `eval_type`; `FAIL_TO_PASS`/`PASS_TO_PASS` as lists or JSON strings). Only a file in
swebench 5's schema can be given to that harness as `--dataset_name`; `harness_gaps` says what a record lacks."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgent.core.errors import ConfigError

REQUIRED = ("instance_id", "repo", "base_commit", "problem_statement")
# What swebench 5's harness reads from an instance besides the classic fields (its `make_test_spec`).
HARNESS_FIELDS = ("image", "eval_script", "log_parser", "eval_type")
# The SWE-bench harness's own short names for its datasets (`swebench eval verified …`).
DATASET_ALIASES = {
    "full": "SWE-bench/SWE-bench",
    "lite": "SWE-bench/SWE-bench_Lite",
    "verified": "SWE-bench/SWE-bench_Verified",
    "multilingual": "SWE-bench/SWE-bench_Multilingual",
}
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_ID = re.compile(r"^[A-Za-z0-9_.-]{1,200}$")


class InstanceError(ConfigError):
    """An instance source that cannot be used; the message says which line or what to do."""

    code = "swebench_instances"


@dataclass(frozen=True, slots=True, kw_only=True)
class Instance:
    """One task: a repository at a commit and the issue to resolve there."""

    instance_id: str
    repo: str  # "owner/name"
    base_commit: str
    problem_statement: str
    hints_text: str = ""
    fields: Mapping[str, Any] = field(default_factory=dict)  # the whole record as read

    @property
    def mirror_name(self) -> str:
        """The bare clone's directory name under the mirrors directory: `owner__name.git`."""
        return self.repo.replace("/", "__") + ".git"


def instance_from_dict(record: Mapping[str, Any], where: str = "") -> Instance:
    """Validate one record; InstanceError names the record and the field."""
    at = f" ({where})" if where else ""
    if not isinstance(record, Mapping):
        raise InstanceError(f"an instance must be a JSON object{at}")
    missing = [k for k in REQUIRED if not isinstance(record.get(k), str) or not record.get(k)]
    if missing:
        raise InstanceError(f"instance{at} lacks {', '.join(missing)} (required: {', '.join(REQUIRED)})")
    iid, repo, commit = str(record["instance_id"]), str(record["repo"]), str(record["base_commit"])
    if not _ID.match(iid):
        raise InstanceError(f"instance id {iid!r}{at} may hold only letters, digits, '_', '-' and '.'")
    if not _REPO.match(repo):
        raise InstanceError(f"instance {iid}{at}: repo {repo!r} is not 'owner/name'")
    if not re.fullmatch(r"[0-9a-fA-F]{7,64}", commit):
        raise InstanceError(f"instance {iid}{at}: base_commit {commit!r} is not a commit hash")
    hints = record.get("hints_text")
    return Instance(
        instance_id=iid,
        repo=repo,
        base_commit=commit.lower(),
        problem_statement=str(record["problem_statement"]),
        hints_text=hints if isinstance(hints, str) else "",
        fields=dict(record),
    )


def harness_gaps(instances: Iterable[Instance]) -> list[str]:
    """The swebench 5 harness fields some of the instances lack (none for a file in its schema)."""
    return [f for f in HARNESS_FIELDS if any(not inst.fields.get(f) for inst in instances)]


def load_instances(path: str | Path) -> list[Instance]:
    """Instances from a `.jsonl` file (one record a line) or a `.json` file (a list of records)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InstanceError(f"cannot read instances from {p}: {exc.strerror}") from None
    records: list[tuple[Any, str]] = []
    if p.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InstanceError(f"{p} is not valid JSON: {exc}") from None
        if not isinstance(data, list):
            raise InstanceError(f"{p} must hold a JSON list of instances (or use a .jsonl file)")
        records = [(r, f"{p.name} item {n}") for n, r in enumerate(data)]
    else:
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((json.loads(line), f"{p.name}:{n}"))
            except ValueError as exc:
                raise InstanceError(f"{p.name}:{n} is not valid JSON: {exc}") from None
    return _unique([instance_from_dict(r, where) for r, where in records])


def load_dataset(name: str, split: str = "test") -> list[Instance]:
    """Instances from the Hugging Face hub through the `datasets` library (the `swebench` extra).

    Raises InstanceError naming what to do when the library is missing or the hub cannot be reached."""
    resolved = DATASET_ALIASES.get(name.strip().lower(), name)
    try:
        import datasets  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        raise InstanceError(
            f"--dataset {name} needs the Hugging Face `datasets` library: pip install 'kgent[swebench]' "
            "(or download the dataset elsewhere and pass --instances FILE.jsonl)"
        ) from None
    try:
        rows: Iterable[Mapping[str, Any]] = datasets.load_dataset(resolved, split=split)
        records = [dict(r) for r in rows]
    except Exception as exc:  # noqa: BLE001 - anything the hub or the cache says is "cannot load"
        raise InstanceError(
            f"could not load dataset {resolved!r} (split {split!r}) from the Hugging Face hub: "
            f"{type(exc).__name__}: {exc}. Without a reachable hub, export it where one is "
            "(docs/swebench.md, 'Instances') and pass --instances FILE.jsonl"
        ) from None
    return _unique([instance_from_dict(r, f"{resolved} row {n}") for n, r in enumerate(records)])


def _unique(instances: list[Instance]) -> list[Instance]:
    seen: set[str] = set()
    for inst in instances:
        if inst.instance_id in seen:
            raise InstanceError(f"instance {inst.instance_id} appears twice")
        seen.add(inst.instance_id)
    return instances


def select(instances: Sequence[Instance], ids: Iterable[str] | None) -> list[Instance]:
    """The instances named by `ids` (in the source's order); all when `ids` is None. Unknown ids are an error."""
    if ids is None:
        return list(instances)
    wanted = {i for raw in ids for i in raw.replace(",", " ").split()}
    unknown = wanted - {inst.instance_id for inst in instances}
    if unknown:
        raise InstanceError(f"no such instance: {', '.join(sorted(unknown))}")
    return [inst for inst in instances if inst.instance_id in wanted]


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard `index` of `count`, counted from 1 (as `--shard 1/4` … `--shard 4/4`)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if m is None:
            raise InstanceError(f"--shard takes I/N (e.g. 2/8), got {text!r}")
        index, count = int(m.group(1)), int(m.group(2))
        if count < 1 or not 1 <= index <= count:
            raise InstanceError(
                f"--shard {text}: shards count from 1, so I must be in 1..N (e.g. 1/{max(count, 1)})"
            )
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def take(self, instances: Sequence[Instance]) -> list[Instance]:
        """This shard's instances: sorted by id, every `count`-th from position `index - 1`.

        Depends only on the set of ids, so every shard given the same instances agrees on the split, the shards'
        sizes differ by at most one, and together they hold every instance exactly once."""
        ordered = sorted(instances, key=lambda inst: inst.instance_id)
        return ordered[self.index - 1 :: self.count]
