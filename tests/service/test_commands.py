"""Slash commands (kgent.service.commands): templates from the project and the user config, their front matter and
arguments, the built-ins and what wins a name clash, escapes, unknown names; and the service expanding a prompt
(the session records the typed text and the expanded prompt), `/compact` as a run of its own, `/review`'s hunks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kgent.kernel.cost import session_usage
from kgent.service import wire as W
from kgent.service.commands import BUILTINS, commands, expand, menu, parse_template, substitute
from kgent.service.errors import INVALID_PARAMS, ServiceError
from kgent.service.handshake import Settings
from kgent.service.runs import RunHandle
from kgent.service.service import Service
from kgent.testing.ports import MemoryPort


def template(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text)
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"KGENT_CONFIG_DIR": str(tmp_path / "config"), "KGENT_PROVIDER": "scripted"}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    return w


def test_front_matter_and_body() -> None:
    meta, body = parse_template(
        '---\ndescription: "Explain a file"\nargument-hint: <path> [depth]\n---\n\nExplain $1.\n'
    )
    assert meta == {"description": "Explain a file", "argument-hint": "<path> [depth]"}
    assert body == "Explain $1.\n"
    assert parse_template("no front matter\n") == ({}, "no front matter\n")
    assert parse_template("---\ndescription: unclosed\n") == ({}, "---\ndescription: unclosed\n")


def test_arguments_are_substituted() -> None:
    assert substitute("Fix $1 in $2 ($ARGUMENTS)", '"issue 12" src/a.py') == (
        'Fix issue 12 in src/a.py ("issue 12" src/a.py)'
    )
    assert substitute("All: $@; third: [$3]", "a b") == "All: a b; third: []"
    assert substitute("No placeholder.\n", "extra words") == "No placeholder.\n\nextra words"
    assert substitute("No placeholder.\n", "") == "No placeholder."
    assert substitute("$1", "'unclosed quote") == "'unclosed"


def test_project_and_user_templates_with_what_wins_a_clash(ws: Path, env: dict[str, str]) -> None:
    user = Path(env["KGENT_CONFIG_DIR"]) / "prompts"
    project = ws / ".kgent" / "prompts"
    template(
        project, "explain", "---\ndescription: Explain (project)\nargument-hint: <path>\n---\nExplain $1.\n"
    )
    template(user, "explain", "---\ndescription: Explain (user)\n---\nUser explain $1.\n")
    template(user, "standup", "# Write my stand-up\n\nFrom the git log of $ARGUMENTS.\n")
    template(project, "review", "A team review template.\n")
    template(project, "bad name!", "ignored\n")
    listed = {(c.name, c.source): c for c in commands(ws, env)}
    assert [c.name for c in commands(ws, env)][:9] == [
        "clear",
        "compact",
        "cost",
        "help",
        "init",
        "mode",
        "model",
        "review",
        "rewind",
    ]  # built-ins first
    assert listed[("explain", "project")].to_dict() == {
        "name": "explain",
        "description": "Explain (project)",
        "argumentHint": "<path>",
        "source": "project",
        "action": "prompt",
        "path": str(project / "explain.md"),
    }
    assert listed[("explain", "user")].shadowed  # the project's wins
    assert listed[("review", "project")].shadowed  # a built-in wins over a template
    assert listed[("standup", "user")].description == "Write my stand-up"  # no front matter: its first line
    assert ("bad name!", "project") not in listed
    assert expand("/explain server/app.py", ws, env).text == "Explain server/app.py.\n"
    assert (
        expand("/standup last week", ws, env).text
        == "# Write my stand-up\n\nFrom the git log of last week.\n"
    )


def test_the_menu_shows_what_runs_in_words_for_people(ws: Path, env: dict[str, str]) -> None:
    user = Path(env["KGENT_CONFIG_DIR"]) / "prompts"
    template(
        ws / ".kgent" / "prompts", "explain", "---\ndescription: Explain\nargument-hint: <path>\n---\nx\n"
    )
    template(user, "explain", "---\ndescription: Mine\n---\ny\n")  # shadowed: not in the menu
    template(user, "standup", "# Write my stand-up\n")
    template(ws / ".kgent" / "prompts", "review", "shadowed by the built-in\n")
    entries = [e.to_dict() for e in menu(commands(ws, env))]
    assert [e["name"] for e in entries] == [
        *["clear", "compact", "cost", "help", "init", "mode", "model", "review", "rewind"],
        "explain",
        "standup",
    ]
    assert entries[9] == {
        "name": "explain",
        "description": "Explain (project)",
        "argumentHint": "<path>",
        "action": "prompt",
    }
    assert entries[10] == {"name": "standup", "description": "Write my stand-up (user)", "action": "prompt"}
    assert entries[1]["argumentHint"] == "[what the summary should focus on]"
    actions = {e["name"]: e["action"] for e in entries}
    assert actions == {
        "clear": "newSession",
        "compact": "prompt",
        "cost": "answer",
        "help": "answer",
        "init": "prompt",
        "mode": "answer",
        "model": "answer",
        "review": "prompt",
        "rewind": "rewind",
        "explain": "prompt",
        "standup": "prompt",
    }
    for builtin in BUILTINS:  # the built-ins' texts name no protocol method
        assert "agent/" not in builtin.description and "/api/" not in builtin.description, builtin.name


def test_built_ins_win_and_say_what_they_are(ws: Path, env: dict[str, str]) -> None:
    template(ws / ".kgent" / "prompts", "init", "a template named init\n")
    init = expand("/init mention the benchmarks", ws, env)
    assert init.command == "init" and "AGENTS.md" in init.text and "mention the benchmarks" in init.text
    assert "a template named init" not in init.text
    compact = expand("/compact keep the file names", ws, env)
    assert (compact.builtin, compact.args) == ("compact", "keep the file names")
    with pytest.raises(ServiceError) as nothing:
        expand("/review", ws, env, tree=None)
    assert (nothing.value.code, nothing.value.name) == (INVALID_PARAMS, "nothing_to_review")


def test_what_the_server_or_the_client_does_is_no_prompt(ws: Path, env: dict[str, str]) -> None:
    for typed, action in (
        ("/help", "answer"),
        ("/mode plan", "answer"),
        ("/clear", "newSession"),
        ("/rewind", "rewind"),
    ):
        with pytest.raises(ServiceError) as refused:
            expand(typed, ws, env)
        err = refused.value
        assert (err.code, err.name, err.data()["action"]) == (INVALID_PARAMS, "not_a_prompt", action), typed


def test_unknown_names_are_an_error_with_close_names(ws: Path, env: dict[str, str]) -> None:
    template(ws / ".kgent" / "prompts", "explain", "Explain $1.\n")
    with pytest.raises(ServiceError) as unknown:
        expand("/explian a.py", ws, env)
    err = unknown.value
    assert (err.code, err.name) == (INVALID_PARAMS, "unknown_command")
    assert err.data()["suggestions"] == ["explain"] and "/explain" in err.message and "//" in err.message


def test_escapes_and_paths_are_not_commands(ws: Path, env: dict[str, str]) -> None:
    assert expand("//explain is a word", ws, env).text == "/explain is a word"
    assert expand(" /explain a.py", ws, env).text == " /explain a.py"
    assert expand("/usr/bin/python crashes", ws, env).command is None
    assert expand("plain prompt", ws, env).text == "plain prompt"


@pytest.fixture
def svc(tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Service:
    monkeypatch.setenv("KGENT_STATE_DIR", str(tmp_path / "state"))
    return Service(env, Settings(), MemoryPort())


async def finish(handle: RunHandle) -> None:
    handle.start()
    assert handle.task is not None
    await asyncio.wait_for(handle.task, 30)


async def test_the_session_records_the_typed_text_and_the_expanded_prompt(svc: Service, ws: Path) -> None:
    template(ws / ".kgent" / "prompts", "explain", "---\ndescription: Explain\n---\nExplain $1 briefly.\n")
    handle = await svc.start_run(W.RunParams.parse({"prompt": "/explain a.py", "workspace": str(ws)}))
    await finish(handle)
    tree = await svc.store.load(handle.session_id)
    prompt = next(e for e in tree.branch() if e.type == "message")
    assert prompt.data["message"]["text"] == "Explain a.py briefly.\n"
    assert prompt.data["typed"] == "/explain a.py"
    with pytest.raises(ServiceError) as unknown:  # nothing sent to the model, no session made
        await svc.start_run(W.RunParams.parse({"prompt": "/nope", "workspace": str(ws)}))
    assert unknown.value.name == "unknown_command"
    [listed] = (await svc.sessions(str(ws))).sessions
    assert (listed.session_id, listed.title) == (handle.session_id, "/explain a.py")  # titled as typed
    plain = await svc.start_run(
        W.RunParams.parse({"prompt": "//explain", "sessionId": handle.session_id})
    )  # an escape: sent as `/explain`, no `typed`
    await finish(plain)
    last = [e for e in (await svc.store.load(handle.session_id)).branch() if e.type == "message"][-2]
    assert last.data["message"]["text"] == "/explain" and "typed" not in last.data
    await svc.close()


async def test_compact_is_a_run_of_its_own(svc: Service, ws: Path, tmp_path: Path) -> None:
    first = await svc.start_run(W.RunParams.parse({"prompt": "Hi", "workspace": str(ws)}))
    await finish(first)
    sid = first.session_id
    big = tmp_path / "big.json"
    big.write_text(json.dumps([[{"text": "lorem ipsum dolor sit amet " * 2000, "chunks": 4}]]))
    await finish(
        await svc.start_run(W.RunParams.parse({"prompt": "A lot", "sessionId": sid, "model": str(big)}))
    )
    await finish(await svc.start_run(W.RunParams.parse({"prompt": "Short", "sessionId": sid})))
    handle = await svc.start_run(W.RunParams.parse({"prompt": "/compact keep the names", "sessionId": sid}))
    with pytest.raises(ServiceError) as busy:  # no run starts on the session meanwhile
        await svc.start_run(W.RunParams.parse({"prompt": "x", "sessionId": sid}))
    assert busy.value.name == "session_busy"
    await finish(handle)
    port = svc.port
    assert isinstance(port, MemoryPort)
    events = [e for _, e in port.events[handle.run_id]]
    assert [e.type for e in events] == ["run_start", "compaction", "compaction", "message_delta", "run_end"]
    assert events[0].prompt == "/compact keep the names"  # type: ignore[attr-defined]
    done = events[2]
    assert done.status == "completed" and done.tokens_after < done.tokens_before  # type: ignore[attr-defined]
    end = events[-1].result  # type: ignore[attr-defined]
    assert end.status == "settled" and "Compacted" in end.text
    assert events[3].delta == end.text  # type: ignore[attr-defined]  # what every front shows
    tree = await svc.store.load(sid)
    assert tree.leaf_id == done.entry_id and tree.entries[tree.leaf_id].type == "compaction"  # type: ignore[attr-defined]
    with pytest.raises(ServiceError) as new:
        await svc.start_run(W.RunParams.parse({"prompt": "/compact", "workspace": str(ws)}))
    assert new.value.code == INVALID_PARAMS
    await svc.close()


async def test_review_sends_the_last_runs_hunks_to_the_model(svc: Service, ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\nbeta\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\n")
    (ws / "b.txt").write_text("alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\njuliet\n")
    edit = await svc.start_run(
        W.RunParams.parse({"prompt": "edit", "workspace": str(ws), "model": "review-edits", "mode": "full"})
    )
    await finish(edit)
    sid = edit.session_id
    listed = await svc.review(W.ReviewParams.parse({"sessionId": sid}))
    hunks = [h for r in listed.runs for f in r.files for h in f.hunks]
    assert hunks
    handle = await svc.start_run(W.RunParams.parse({"prompt": "/review the tests", "sessionId": sid}))
    await finish(handle)
    prompt = [e for e in (await svc.store.load(sid)).branch() if e.type == "message" and "typed" in e.data][
        -1
    ]
    text = prompt.data["message"]["text"]
    assert prompt.data["typed"] == "/review the tests" and "The user asks you to look at: the tests" in text
    files = [f for r in listed.runs for f in r.files]
    for f in files:
        assert f"--- {f.path}" in text
    for h in hunks:
        assert f"@@ -{h.old_start},{h.old_count} +{h.new_start},{h.new_count} @@ [pending]" in text
    await svc.close()


async def test_the_server_answers_help_cost_model_and_mode(svc: Service, ws: Path) -> None:
    template(
        ws / ".kgent" / "prompts", "explain", "---\ndescription: Explain\nargument-hint: <path>\n---\nx\n"
    )

    async def command(text: str, **more: str) -> W.CommandResult:
        return await svc.command(W.CommandParams.parse({"text": text, **more}))

    helped = await command("/help", workspace=str(ws))
    lines = helped.text.splitlines()
    assert helped.action == "answer" and "/mode [plan|ask|auto|full|risk_based] — Show or set" in helped.text
    assert "/explain <path> — Explain (project)" in lines and len(lines) == 2 + 10
    assert (await command("/cost", workspace=str(ws))).text == "No session yet: nothing spent."
    first = await svc.start_run(W.RunParams.parse({"prompt": "Hi", "workspace": str(ws)}))
    await finish(first)
    sid = first.session_id
    cost = await command("/cost", sessionId=sid)
    tree = await svc.store.load(sid)
    spent = session_usage(tree.entries.values(), svc.prices())["text"]
    assert cost.text.startswith(f"This session so far: {spent}") and "tokens" in spent
    shown = await command("/mode", sessionId=sid)
    assert shown.mode == "ask" and "Modes: plan, ask, auto, full, risk_based" in shown.text
    planned = await command("/mode plan", sessionId=sid)
    assert planned.mode == "plan" and planned.text.startswith("Mode for this session's next runs: plan — ")
    with pytest.raises(ServiceError) as bad:
        await command("/mode sideways", sessionId=sid)
    assert bad.value.name == "unknown_mode"
    modelled = await command("/model review-edits", sessionId=sid)
    assert (
        modelled.model == "review-edits"
        and "Model for this session's next runs: review-edits" in modelled.text
    )
    # the session's next run takes both: the scripted model `review-edits` edits, and plan mode refuses the edit
    (ws / "a.txt").write_text("alpha\nbeta\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\n")
    (ws / "b.txt").write_text("alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\njuliet\n")
    nxt = await svc.start_run(W.RunParams.parse({"prompt": "edit", "sessionId": sid}))
    await finish(nxt)
    port = svc.port
    assert isinstance(port, MemoryPort)
    events = [e for _, e in port.events[nxt.run_id]]
    start = events[0]
    assert start.mode == "plan"  # type: ignore[attr-defined]
    resolved = [e for e in events if e.type == "permission_resolved"]
    assert len(resolved) == 4 and not any(e.approved for e in resolved)  # type: ignore[attr-defined]
    assert events[-1].result.changed_paths == ()  # type: ignore[attr-defined]
    assert "beta" in (ws / "a.txt").read_text()  # nothing written
    cleared = await command("/clear", sessionId=sid)
    assert (cleared.action, cleared.mode) == ("newSession", None) and "new session" in cleared.text
    assert (await command("/rewind", sessionId=sid)).action == "rewind"
    assert (await command("/explain a.py", workspace=str(ws))).action == "prompt"
    with pytest.raises(ServiceError) as unknown:
        await command("/explian", workspace=str(ws))
    assert unknown.value.name == "unknown_command" and unknown.value.data()["suggestions"] == ["explain"]
    await svc.close()
