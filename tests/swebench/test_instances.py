"""Reading, selecting and sharding instances."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgent.swebench.instances import (
    Instance,
    InstanceError,
    Shard,
    instance_from_dict,
    load_instances,
    select,
)

BASE = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40, "problem_statement": "it breaks"}


def inst(iid: str) -> Instance:
    return instance_from_dict({**BASE, "instance_id": iid})


def test_jsonl_and_json_files_give_the_same_instances(tmp_path: Path) -> None:
    records = [
        {**BASE, "instance_id": f"o__r-{n}", "hints_text": "see #1", "version": "3.0"} for n in range(3)
    ]
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n\n")
    (tmp_path / "a.json").write_text(json.dumps(records))
    one, two = load_instances(tmp_path / "a.jsonl"), load_instances(tmp_path / "a.json")
    assert one == two and [i.instance_id for i in one] == ["o__r-0", "o__r-1", "o__r-2"]
    assert one[0].hints_text == "see #1" and one[0].fields["version"] == "3.0"
    assert one[0].mirror_name == "o__r.git"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"repo": None}, "lacks repo"),
        ({"problem_statement": ""}, "lacks problem_statement"),
        ({"repo": "just-a-name"}, "is not 'owner/name'"),
        ({"base_commit": "main"}, "is not a commit hash"),
        ({"instance_id": "../escape"}, "may hold only letters"),
    ],
)
def test_a_bad_record_is_named_by_its_line(tmp_path: Path, change: dict[str, object], message: str) -> None:
    bad = {k: v for k, v in {**BASE, **change}.items() if v is not None}
    (tmp_path / "i.jsonl").write_text(json.dumps(BASE) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(InstanceError, match=message) as err:
        load_instances(tmp_path / "i.jsonl")
    assert "i.jsonl:2" in err.value.message


def test_duplicates_broken_json_and_missing_files_are_errors(tmp_path: Path) -> None:
    (tmp_path / "dup.jsonl").write_text((json.dumps(BASE) + "\n") * 2)
    with pytest.raises(InstanceError, match="appears twice"):
        load_instances(tmp_path / "dup.jsonl")
    (tmp_path / "torn.jsonl").write_text(json.dumps(BASE) + '\n{"instance_id": \n')
    with pytest.raises(InstanceError, match="torn.jsonl:2 is not valid JSON"):
        load_instances(tmp_path / "torn.jsonl")
    with pytest.raises(InstanceError, match="cannot read instances"):
        load_instances(tmp_path / "absent.jsonl")


def test_select_keeps_the_source_order_and_refuses_unknown_ids() -> None:
    all_ = [inst("o__r-1"), inst("o__r-2"), inst("o__r-3")]
    assert [i.instance_id for i in select(all_, ["o__r-3,o__r-1"])] == ["o__r-1", "o__r-3"]
    assert select(all_, None) == all_
    with pytest.raises(InstanceError, match="no such instance: o__r-9"):
        select(all_, ["o__r-1", "o__r-9"])


def test_shard_parsing() -> None:
    assert Shard.parse(" 2/8 ") == Shard(2, 8) and str(Shard(2, 8)) == "2/8"
    for bad in ("0/4", "5/4", "1/0", "2", "a/b"):
        with pytest.raises(InstanceError):
            Shard.parse(bad)


@settings(max_examples=40)
@given(
    st.sets(st.from_regex(r"[a-z]{1,6}__[a-z]{1,6}-[0-9]{1,4}", fullmatch=True), max_size=60),
    st.integers(min_value=1, max_value=9),
    st.randoms(),
)
def test_shards_are_a_balanced_partition_that_ignores_order(ids: set[str], count: int, rnd: object) -> None:
    instances = [inst(i) for i in sorted(ids)]
    shuffled = list(instances)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    parts = [Shard(n, count).take(instances) for n in range(1, count + 1)]
    assert parts == [Shard(n, count).take(shuffled) for n in range(1, count + 1)]
    assert sorted(i.instance_id for part in parts for i in part) == sorted(ids)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
