"""`make demo`: drive `kgent serve --stdio` the way an editor does — spawn it, `initialize`, `agent/run` the scripted
tool-loop in a temp workspace, show the streamed events and the approvals (answered on screen), end with the patch.
No key, no network. `python -m kgent.testing.daemon_demo`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from kgent.testing.daemon_client import DaemonClient, daemon_command

SAMPLE = "value = 1\nprint(value)\n"
PROMPT = "Change value to 2 in sample.py and check that it runs."


class Screen:
    """Renders the wire as a person would want to watch it."""

    def __init__(self, console: Console) -> None:
        self.c = console
        self.streaming: str | None = None  # "text" / "thinking" while deltas are being printed inline

    def end_stream(self) -> None:
        if self.streaming is not None:
            self.c.print()
            self.streaming = None

    def wire(self, arrow: str, what: str, detail: str = "") -> None:
        self.end_stream()
        line = Text(f"{arrow} ", style="bold magenta" if arrow == "→" else "bold cyan")
        line.append(what, style="bold")
        if detail:
            line.append(f"  {detail}", style="dim")
        self.c.print(line)

    def event(self, params: dict[str, Any]) -> None:
        e, seq = params["event"], params["seq"]
        kind = e["type"]
        tag = Text(f"  #{seq:<3}", style="dim")
        if kind == "message_delta":
            style = "italic dim" if e["kind"] == "thinking" else ""
            if self.streaming != e["kind"]:
                self.end_stream()
                self.c.print(tag + Text("thinking  " if e["kind"] == "thinking" else "assistant ", style="bold"), end="")
                self.streaming = e["kind"]
            self.c.print(Text(e["delta"], style=style), end="")
            return
        self.end_stream()
        if kind == "run_start":
            body = f"{e['provider']}/{e['model']} · mode {e['mode']} · {e['workspace']}"
        elif kind == "user_message":
            body = f"[{e['source']}] {e['text']}"
        elif kind == "tool_call":
            body = f"{e['name']} ({e['kind']}): {e['title']}"
        elif kind == "tool_update":
            if e["status"] == "in_progress" and not e.get("output"):
                return
            mark = {"completed": "✓", "failed": "✗"}.get(e["status"], "…")
            out = (e.get("output") or "").strip().replace("\n", " ⏎ ")
            body = f"{mark} {e['status']}  {out[:90]}"
        elif kind == "permission_resolved":
            body = f"{e['decision']} ({e['source']}): {e['reason']}"
        elif kind == "usage":
            body = f"{e['total']['inputTokens']} in / {e['total']['outputTokens']} out tokens so far"
        elif kind == "message_end":
            return  # its text was streamed
        elif kind == "permission_request":
            body = f"{e['toolCall']['title']} → the daemon asks the editor (agent/permission)"
        elif kind == "run_end":
            body = f"{e['status']} · stopReason {e['stopReason']} · {e['turns']} turns · changed {', '.join(e['changedPaths']) or 'nothing'}"
        else:
            body = ", ".join(f"{k}={v}" for k, v in e.items() if k != "type")
        self.c.print(tag + Text(f"{kind:<20}", style="bold green" if kind == "run_end" else "bold") + Text(body))

    def approval(self, params: dict[str, Any], answer: str) -> None:
        self.end_stream()
        call = params["toolCall"]
        parts: list[Any] = [Text(f"{call['title']}", style="bold"),
                            Text(f"risk {params['risk']} · {params['operation']} in {params['scope']}"),
                            Text(params["reason"], style="italic")]
        if call.get("command"):
            parts.append(Syntax(call["command"], "bash", theme="ansi_dark", background_color="default"))
        if call.get("diff"):
            parts.append(Syntax(call["diff"], "diff", theme="ansi_dark", background_color="default"))
        options = "  ".join(f"[{o['optionId']}]" for o in params["options"])
        parts.append(Text(f"options: {options}", style="dim"))
        parts.append(Text(f"the demo answers: {answer}   (in an editor, the user picks)", style="bold yellow"))
        from rich.console import Group

        self.c.print(Panel(Group(*parts), title="agent/permission", border_style="yellow", expand=False))


async def demo(console: Console) -> int:
    screen = Screen(console)
    workspace = Path(tempfile.mkdtemp(prefix="kgent-demo-"))
    state = Path(tempfile.mkdtemp(prefix="kgent-demo-state-"))
    (workspace / "sample.py").write_text(SAMPLE)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["KGENT_STATE_DIR"] = str(state)
    command = daemon_command()
    ended: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
    try:
        console.rule("[bold]kgent daemon demo[/bold] — an editor's view of `kgent serve --stdio`")
        screen.wire("→", "spawn", " ".join(Path(command[0]).name if i == 0 else a for i, a in enumerate(command)))
        started = time.perf_counter()
        client = await DaemonClient.spawn(command, env=env)

        def on_notification(method: str, params: Any) -> None:
            if method == "agent/event":
                screen.event(params)
                if params["event"]["type"] == "run_end" and not ended.done():
                    ended.set_result(params["event"])
            elif method == "$/cancelRequest":
                screen.wire("←", "$/cancelRequest", f"prompt {params['id']} withdrawn")

        async def on_permission(params: dict[str, Any]) -> dict[str, Any]:
            answer = "allow_once"
            screen.approval(params, answer)
            screen.wire("→", "agent/permission reply", f'{{"outcome": "selected", "optionId": "{answer}"}}')
            return {"outcome": "selected", "optionId": answer}

        client.on_notification = on_notification
        client.on_request["agent/permission"] = on_permission
        screen.wire("→", "initialize", "protocolVersion 1 · settings: provider scripted, mode ask")
        init = await client.request(
            "initialize",
            {"protocolVersion": 1, "clientInfo": {"name": "kgent-demo"}, "capabilities": {},
             "settings": {"provider": "scripted", "mode": "ask"}},
        )
        elapsed = (time.perf_counter() - started) * 1000
        info = init["serverInfo"]
        screen.wire("←", f"{info['name']} {info['version']}, protocol {init['protocolVersion']}",
                    f"{elapsed:.0f} ms after spawn · tools: {', '.join(t['name'] for t in init['capabilities']['tools'])}")
        screen.wire("→", "agent/run", f"scripted/tool-loop in {workspace}: {PROMPT!r}")
        run = await client.request(
            "agent/run", {"prompt": PROMPT, "workspace": str(workspace), "model": "tool-loop", "mode": "ask"}
        )
        screen.wire("←", "agent/run reply", f"runId {run['runId']} · sessionId {run['sessionId']}")
        end = await asyncio.wait_for(ended, 60)
        screen.end_stream()
        console.rule("patch")
        console.print(Syntax(end["patch"] or "(no changes)", "diff", theme="ansi_dark", background_color="default"))
        console.print(f"sample.py now reads: {(workspace / 'sample.py').read_text()!r}")
        screen.wire("→", "exit")
        code = await client.close()
        screen.wire("←", "process ended", f"status {code}")
        ok = end["status"] == "settled" and bool(end["patch"]) and code == 0
        if not ok and client.stderr:
            console.print(Text(client.stderr.decode(errors="replace")[-2000:], style="red"))
        return 0 if ok else 1
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)


def main() -> int:
    console = Console(highlight=False)
    try:
        return asyncio.run(demo(console))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
