"""The plan over the wire: todo_write's `plan` events, in place of each other, and again after a resume."""

from __future__ import annotations

from pathlib import Path

from kgent_host import KgentHost


async def test_todo_write_sends_plan_events_and_a_resume_resends_the_plan(
    host: KgentHost, workspace: Path
) -> None:
    run_id, end, events = await host.run_to_end(
        prompt="What does sample.py print?", workspace=str(workspace), model="plan", mode="ask"
    )
    assert end["status"] == "settled" and host.permission_requests == []  # planning is never asked
    plans = [e["entries"] for e in events if e["type"] == "plan"]
    assert [[(i["content"], i["status"]) for i in p] for p in plans] == [
        [("Read sample.py", "in_progress"), ("Explain what it prints", "pending")],
        [("Read sample.py", "completed"), ("Explain what it prints", "in_progress")],
        [("Read sample.py", "completed"), ("Explain what it prints", "completed")],
    ]
    assert plans[0][0]["priority"] == "high" and plans[0][1]["priority"] == "medium"
    calls = [e for e in events if e["type"] == "tool_call" and e["name"] == "todo_write"]
    assert [c["kind"] for c in calls] == ["think"] * 3 and calls[0]["title"] == "Update the plan (2 items)"

    again, _, resumed = await host.run_to_end(
        prompt="Thanks", workspace=str(workspace), model="hello", sessionId=end["sessionId"]
    )
    assert [e["type"] for e in resumed[:3]] == ["run_start", "plan", "user_message"]
    assert resumed[1]["entries"] == plans[-1]
