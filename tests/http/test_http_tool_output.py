"""A long command's whole output over HTTP (`agent/toolOutput`, GET /api/sessions/{id}/tools/{callId}/output) against
a real `kgent serve --http`: saved with the session, still there after the run ended, named to the model by a path that
stays valid, refused for another session's call and for paths in disguise, deleted with the session; and the session
search (`agent/sessions {query}`) over what was asked and answered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import run
from kgent.testing.http_server import HttpServer, read_events, write_script

LINES = 10_000


def _finished(c: Any, run_id: str) -> list[dict[str, Any]]:
    """The run's events, once it ended."""
    return [params["event"] for _, params in read_events(c, f"/api/runs/{run_id}/events")]


def _long_run(c: Any, tmp_path: Path, call_id: str, answer: str = "Printed them all.") -> dict[str, str]:
    model = write_script(
        tmp_path,
        f"long-{call_id}",
        [
            [{"tool": "bash", "args": {"command": f"seq 1 {LINES}"}, "id": call_id}],
            [{"text": answer}],
        ],
    )
    started = run(c, model, "print the numbers", provider="scripted", mode="full")
    events = _finished(c, started["runId"])
    assert events[-1]["status"] == "settled", events[-1]
    started["update"] = next(  # type: ignore[assignment]
        e for e in events if e["type"] == "tool_update" and e["status"] == "completed"
    )
    return started


def test_a_long_commands_whole_output_outlives_its_run(server: HttpServer, tmp_path: Path) -> None:
    with server.client() as c:
        first = _long_run(c, tmp_path, "call-long")
        update: dict[str, Any] = first["update"]  # type: ignore[assignment]
        sid = first["sessionId"]
        # the model was shown the tail, and the path of the whole: in the session's own directory, still there
        saved = Path(update["details"]["fullOutputPath"])
        assert saved.parent.name == f"{sid}.outputs"
        assert saved.is_file() and saved.stat().st_mode & 0o777 == 0o600
        assert f"Full output: {saved}" in update["output"]
        assert "\n1\n" not in f"\n{update['output']}" and f"\n{LINES}\n" in update["output"]
        res = c.get(f"/api/sessions/{sid}/tools/call-long/output")
        assert res.status_code == 200, res.text
        out = res.json()
        assert out["truncated"] is False
        assert out["text"].splitlines() == [str(n) for n in range(1, LINES + 1)]

        # a short call's output is its result, whole
        quick = write_script(
            tmp_path,
            "short",
            [[{"tool": "bash", "args": {"command": "echo hi"}, "id": "call-short"}], [{"text": "ok"}]],
        )
        other = run(c, quick, "say hi", provider="scripted", mode="full")
        _finished(c, other["runId"])
        short = c.get(f"/api/sessions/{other['sessionId']}/tools/call-short/output").json()
        assert short == {"text": "hi\n\nExit code: 0", "truncated": False}

        # another session's call is not found through this one; nor are paths in disguise
        res = c.get(f"/api/sessions/{other['sessionId']}/tools/call-long/output")
        assert res.status_code == 404 and res.json()["error"]["data"]["code"] == "tool_call_not_found"
        for trick in (
            f"/api/sessions/{sid}/tools/..%2F..%2F{saved.name}/output",
            f"/api/sessions/{sid}/tools/{saved}/output",
            f"/api/sessions/..%2F{sid}/tools/call-long/output",
            f"/api/sessions/{sid}%2F..%2F{other['sessionId']}/tools/call-short/output",
        ):
            res = c.get(trick)
            assert res.status_code in (400, 404), (trick, res.status_code)
            assert "10000" not in res.text and "hi\n" not in res.text

        # the whole output goes with the session
        assert c.delete(f"/api/sessions/{sid}").status_code == 200
        assert not saved.exists() and not saved.parent.exists()


def test_search_finds_a_session_by_what_was_answered(server: HttpServer, tmp_path: Path) -> None:
    with server.client() as c:
        ws = c.get("/api/workspaces").json()["roots"][0]
        model = write_script(
            tmp_path,
            "answer",
            [
                [{"tool": "bash", "args": {"command": "echo printedonlybyacommand"}, "id": "c1"}],
                [{"text": "The flux capacitor needs 1.21 gigawatts."}],
            ],
        )
        found = run(c, model, "what does it need?", provider="scripted", mode="full")
        _finished(c, found["runId"])

        def search(query: str) -> list[str]:
            res = c.get("/api/sessions", params={"workspace": ws, "query": query})
            assert res.status_code == 200, res.text
            return [s["sessionId"] for s in res.json()["sessions"]]

        assert found["sessionId"] in search("GIGAWATTS")  # in the answer, not the title
        assert found["sessionId"] in search("capacitor what")  # every word, anywhere in the conversation
        assert found["sessionId"] not in search("capacitor nonesuchword")
        assert found["sessionId"] not in search("printedonlybyacommand")  # a command's output is not searched
        assert found["sessionId"] in search(found["sessionId"][:6])  # its id still finds it
        everything = c.get("/api/sessions", params={"workspace": ws}).json()["sessions"]
        assert [s["sessionId"] for s in everything] == search("  ")  # a blank query filters nothing
