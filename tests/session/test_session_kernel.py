"""Sessions through the kernel: a run writes its session durably; resume and fork continue it after a restart."""

from __future__ import annotations

from pathlib import Path

from kgent.core.events import PermissionRequest
from kgent.core.messages import AssistantMessage, ToolResultMessage, UserMessage
from kgent.kernel import AgentKernel, KernelConfig
from kgent.providers.scripted import ScriptedProvider
from kgent.session.jsonl import JsonlSessionStore

TOOL_LOOP = [
    [{"text": "Reading."}, {"tool": "read", "args": {"path": "sample.py"}}],
    [
        {"text": "Editing."},
        {"tool": "edit", "args": {"path": "sample.py", "oldText": "value = 1", "newText": "value = 2"}},
    ],
    [{"text": "Done: value is 2."}],
]


def kernel(root: Path, script, mode: str = "full") -> tuple[AgentKernel, ScriptedProvider]:
    provider = ScriptedProvider(script)
    return AgentKernel(provider, store=JsonlSessionStore(root), config=KernelConfig(mode=mode)), provider


async def settle(run, answer: str = "allow_once"):
    async for event in run:
        if isinstance(event, PermissionRequest):
            run.resolve_permission(event.request_id, answer)
    return await run.result()


def texts(messages) -> list[str]:
    out = []
    for m in messages:
        if isinstance(m, UserMessage | AssistantMessage):
            out.append(f"{m.role}:{m.text}")
        elif isinstance(m, ToolResultMessage):
            out.append(f"tool:{m.name}")
    return out


async def test_a_run_writes_its_session_and_resumes_after_a_restart(tmp_path, workspace) -> None:
    (workspace / "sample.py").write_text("value = 1\n")
    root = tmp_path / "sessions"
    k1, _ = kernel(root, TOOL_LOOP)
    first = await settle(k1.create_run("make value 2", workspace=workspace))
    await k1.aclose()
    assert first.status == "settled"
    tree = await JsonlSessionStore(root).load(first.session_id)
    types = [e.type for e in tree.branch()]
    assert types[0] == "config" and types.count("message") == 6  # user, 3 assistant, 2 tool results
    assert tree.branch()[0].data == {"mode": "full", "provider": "scripted", "model": "script"}

    k2, provider = kernel(root, [[{"text": "Still 2."}]])  # a new process: new kernel, new store
    second = await settle(k2.create_run("is it still 2?", workspace=workspace, session_id=first.session_id))
    await k2.aclose()
    assert second.status == "settled" and second.session_id == first.session_id
    sent = texts(provider.requests[0].messages)
    assert sent == [
        "user:make value 2",
        "assistant:Reading.",
        "tool:read",
        "assistant:Editing.",
        "tool:edit",
        "assistant:Done: value is 2.",
        "user:is it still 2?",
    ]
    [info] = await JsonlSessionStore(root).list(str(workspace))
    # the first run's config, 6 messages and review set (it edited sample.py); the second's prompt and answer
    assert (info.id, info.title, info.entry_count) == (first.session_id, "make value 2", 10)


async def test_fork_branches_from_an_entry_and_other_branches_stay_out_of_the_context(
    tmp_path, workspace
) -> None:
    root = tmp_path / "sessions"
    k1, _ = kernel(root, [[{"text": "Answer A."}]])
    first = await settle(k1.create_run("question one", workspace=workspace))
    k1b, _ = kernel(root, [[{"text": "Answer B."}]])
    await settle(k1b.create_run("question two", workspace=workspace, session_id=first.session_id))
    tree = await JsonlSessionStore(root).load(first.session_id)
    first_answer = [e for e in tree.branch() if e.type == "message"][1]
    assert first_answer.data["message"]["text"] == "Answer A."

    k2, provider = kernel(root, [[{"text": "Answer C."}]])
    forked = await settle(
        k2.create_run(
            "question three",
            workspace=workspace,
            session_id=first.session_id,
            parent_entry_id=first_answer.id,
        )
    )
    assert forked.status == "settled"
    assert texts(provider.requests[0].messages) == [
        "user:question one",
        "assistant:Answer A.",
        "user:question three",
    ]
    tree = await JsonlSessionStore(root).load(first.session_id)
    assert [texts_of(e) for e in tree.branch() if e.type == "message"] == [
        "question one",
        "Answer A.",
        "question three",
        "Answer C.",
    ]
    old_leaf = next(i for i in tree.leaves() if i != tree.leaf_id)
    assert [texts_of(e) for e in tree.branch(old_leaf) if e.type == "message"] == [
        "question one",
        "Answer A.",
        "question two",
        "Answer B.",
    ]

    k3, provider = kernel(root, [[{"text": "Answer D."}]])  # resuming follows the fork, not the old branch
    await settle(k3.create_run("question four", workspace=workspace, session_id=first.session_id))
    assert "user:question two" not in texts(provider.requests[0].messages)


def texts_of(entry) -> str:
    return entry.data["message"]["text"]


async def test_permission_entries_keep_a_hash_not_the_arguments(tmp_path, workspace) -> None:
    root = tmp_path / "sessions"
    secret = "sk-do-not-store-me"
    script = [[{"tool": "bash", "args": {"command": f"echo {secret} > out.txt"}}], [{"text": "ok"}]]
    k, _ = kernel(root, script, mode="ask")
    result = await settle(k.create_run("run it", workspace=workspace), answer="reject_once")
    tree = await JsonlSessionStore(root).load(result.session_id)
    [perm] = [e for e in tree.entries.values() if e.type == "permission"]
    assert perm.data["decision"] == "reject_once" and len(perm.data["argsSha256"]) == 64
    assert secret not in str(perm.data)


async def test_resume_after_a_kill_between_a_tool_call_and_its_result(tmp_path, workspace) -> None:
    """A run killed while a tool ran leaves a call without a result; the resumed request still pairs them."""
    root = tmp_path / "sessions"
    store = JsonlSessionStore(root)
    from kgent.session.entries import new_entry

    await store.create(workspace=str(workspace), session_id="killed")
    u = new_entry("message", None, message={"role": "user", "text": "list files"})
    a = new_entry(
        "message",
        u.id,
        message={
            "role": "assistant",
            "text": "",
            "stopReason": "tool_use",
            "toolCalls": [{"id": "c1", "name": "ls", "arguments": {}}],
        },
    )
    await store.append("killed", [u, a])
    k, provider = kernel(root, [[{"text": "Let me try again."}]])
    result = await settle(k.create_run("continue", workspace=workspace, session_id="killed"))
    assert result.status == "settled"
    sent = provider.requests[0].messages
    assert isinstance(sent[2], ToolResultMessage) and sent[2].tool_call_id == "c1" and sent[2].is_error
    assert isinstance(sent[3], UserMessage) and sent[3].text == "continue"


async def test_a_resumed_session_keeps_its_system_prompt_byte_for_byte(
    tmp_path, workspace, monkeypatch
) -> None:
    """The prompt carries the session's creation day, not today's: a resume on a later day sends the same bytes, so
    the provider's prompt cache still hits."""
    import kgent.session.jsonl as jsonl

    root = tmp_path / "sessions"
    monkeypatch.setattr(
        jsonl, "now_iso", lambda: "2025-03-01T23:59:59.000Z"
    )  # the clock, at the session's edge
    k1, p1 = kernel(root, [[{"text": "Hi."}]])
    first = await settle(k1.create_run("hello", workspace=workspace))
    await k1.aclose()
    monkeypatch.setattr(jsonl, "now_iso", lambda: "2025-03-09T08:00:00.000Z")  # a week later
    k2, p2 = kernel(root, [[{"text": "Again."}]])
    await settle(k2.create_run("again", workspace=workspace, session_id=first.session_id))
    await k2.aclose()
    assert "Session started on: 2025-03-01\n" in p1.requests[0].system_prompt
    assert p2.requests[0].system_prompt == p1.requests[0].system_prompt
