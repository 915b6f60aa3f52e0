"""Golden session files round-trip byte for byte, load into the expected tree and project to the expected messages.

tests/golden/session-v1.jsonl is the example of docs/session-format.md: a config, a tool-using turn, a permission,
a checkpoint, a label, a fork (leaf record) and a second branch whose last tool call never got its result.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kgent.context.projection import project
from kgent.core.messages import message_from_dict, message_to_dict
from kgent.session import codec
from kgent.session.entries import SessionEntry, tree_to_dict
from kgent.session.jsonl import JsonlSessionStore
from kgent.session.paths import workspace_key

GOLDEN = Path(__file__).parent.parent / "golden"
SESSION = GOLDEN / "session-v1.jsonl"


def test_every_line_round_trips_byte_for_byte() -> None:
    head, *rest = SESSION.read_bytes().splitlines(keepends=True)
    assert codec.encode(codec.check_header(json.loads(head), "golden")) == head
    for line in rest:
        obj = json.loads(line)
        if "id" in obj:
            entry = SessionEntry.from_dict(obj)
            assert codec.encode(entry.to_dict()) == line
            if entry.type == "message":  # messages survive the kernel's own converters too
                assert message_to_dict(message_from_dict(entry.data["message"])) == entry.data["message"]
        else:
            assert codec.encode(obj) == line


def install(root: Path) -> Path:
    """Put the golden file where a store rooted at `root` looks for it."""
    header = json.loads(SESSION.read_bytes().splitlines()[0])
    target = root / workspace_key(header["workspace"]) / "golden-v1.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copyfile(SESSION, target)
    return target


async def test_the_golden_file_loads_into_the_expected_tree(tmp_path) -> None:
    install(tmp_path)
    tree = await JsonlSessionStore(tmp_path).load("golden-v1")
    assert tree.warnings == []
    assert tree.leaf_id == "e12"  # the leaf record moved it to e04, then e11 and e12 were appended there
    assert [e.id for e in tree.branch()] == ["e01", "e02", "e03", "e04", "e11", "e12"]
    assert [e.id for e in tree.branch("e10")] == [f"e{i:02d}" for i in range(1, 11)]
    assert set(tree.leaves()) == {"e10", "e12"}
    assert tree.labels() == {"e08": "first answer"}
    assert (tree.info.title, tree.info.entry_count, tree.info.workspace) == (
        "Change value to 2 in sample.py and check it runs",
        12,
        "/home/dev/sample-project",
    )
    wire = tree_to_dict(tree)
    assert (wire["sessionId"], wire["leafId"], len(wire["entries"])) == ("golden-v1", "e12", 12)
    assert wire["entries"][5]["type"] == "permission" and "args" not in wire["entries"][5]
    assert wire["branch"] == ["e01", "e02", "e03", "e04", "e11", "e12"] and wire["labels"] == {
        "e08": "first answer"
    }
    assert [e["id"] for e in tree_to_dict(tree, branch_only=True)["entries"]] == wire["branch"]


async def test_the_golden_file_projects_to_the_golden_messages(tmp_path) -> None:
    install(tmp_path)
    tree = await JsonlSessionStore(tmp_path).load("golden-v1")
    expected = json.loads((GOLDEN / "session-v1.projection.json").read_text())
    for leaf, messages in expected.items():
        assert [message_to_dict(m) for m in project(tree.branch(leaf))] == messages


async def test_what_the_store_writes_is_the_golden_form(tmp_path) -> None:
    """Appending the golden entries through the store reproduces the golden lines (the header's time aside)."""
    raw = SESSION.read_bytes().splitlines(keepends=True)
    store = JsonlSessionStore(tmp_path)
    await store.create(workspace="/home/dev/sample-project", session_id="golden-v1")
    for line in raw[1:]:
        obj = json.loads(line)
        if "id" in obj:
            await store.append("golden-v1", [SessionEntry.from_dict(obj)])
        else:
            await store.set_leaf("golden-v1", obj["leafId"])
    written = store.locate("golden-v1").read_bytes().splitlines(keepends=True)
    assert json.loads(written[0]) | {"created": "x"} == json.loads(raw[0]) | {"created": "x"}
    assert [json.loads(x) | {"timestamp": "t"} if b'"leaf"' in x[:20] else x for x in written[1:]] == [
        json.loads(x) | {"timestamp": "t"} if b'"leaf"' in x[:20] else x for x in raw[1:]
    ]


def test_the_format_document_shows_the_golden_file() -> None:
    doc = (Path(__file__).parent.parent.parent / "docs" / "session-format.md").read_text(encoding="utf-8")
    block = doc.split("```jsonl\n", 1)[1].split("```", 1)[0]
    assert block == SESSION.read_text(encoding="utf-8")
