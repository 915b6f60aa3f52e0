"""`kgent serve --http` as a real subprocess for tests, demos and benchmarks, and a small SSE reader over httpx."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

TOKEN = "test-token-0123456789"


@dataclass
class HttpServer:
    """A running `kgent serve --http` (scripted provider) and how to reach it."""

    url: str
    token: str
    workspace: Path
    proc: subprocess.Popen[bytes]
    output: list[str] = field(default_factory=list)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=60, verify=False, **kwargs)

    def async_client(self, **kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, headers=self.headers, timeout=60, **kwargs)

    def page_url(self, fragment: str = "", *, project: bool = True) -> str:
        """The web client signed in; `project`: opened on the workspace itself (`?project=`), as a browser that
        chose it before — else a fresh browser asks which project to work in first."""
        where = f"&project={quote(str(self.workspace), safe='/')}" if project else ""
        return f"{self.url}/?token={self.token}{where}{fragment}"

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait()


def start(
    workspace: Path,
    state_dir: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    token: str = TOKEN,
) -> HttpServer:
    """Start the server on a free port with the scripted provider; returns once it printed its URL."""
    full = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    full.update(
        KGENT_STATE_DIR=str(state_dir),
        KGENT_PROVIDER="scripted",
        KGENT_HTTP_TOKEN=token,
        PYTHONUNBUFFERED="1",
    )
    full.update(env or {})
    command = [
        sys.executable,
        "-m",
        "kgent",
        "serve",
        "--http",
        "--port",
        "0",
        "--workspace-root",
        str(workspace),
    ]
    proc = subprocess.Popen(
        [*command, *args], env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=str(workspace)
    )
    assert proc.stdout is not None
    output: list[str] = []
    url = None
    for raw in proc.stdout:
        line = raw.decode(errors="replace")
        output.append(line)
        found = re.search(r"serving on (\S+)/", line)
        if found:
            url = found.group(1)
            break
    if url is None:
        proc.wait(10)
        raise RuntimeError("kgent serve --http did not start:\n" + "".join(output))
    server = HttpServer(url=url, token=token, workspace=workspace, proc=proc, output=output)

    def drain() -> None:  # keep reading so the server never blocks on a full pipe
        assert proc.stdout is not None
        for raw in proc.stdout:
            output.append(raw.decode(errors="replace"))

    threading.Thread(target=drain, name="kgent-http-output", daemon=True).start()
    with httpx.Client(base_url=url, timeout=30, verify=False) as c:  # the lifespan has run once /api answers
        c.get("/api/info", headers=server.headers).raise_for_status()
    return server


@contextmanager
def serving(
    workspace: Path,
    state_dir: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    token: str = TOKEN,
) -> Iterator[HttpServer]:
    """`start`, and on leaving stop the server and check it ended cleanly: exit status 0, no traceback printed."""
    srv = start(workspace, state_dir, *args, env=env, token=token)
    try:
        yield srv
    finally:
        code = srv.stop()
        log = "".join(srv.output)
        assert "Traceback" not in log, log
        assert code == 0, log


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str | None, dict[str, Any] | None, str | None]]:
    """(id, data parsed as JSON, comment) per SSE message or comment line, from a response's text lines."""
    event_id: str | None = None
    data: list[str] = []
    for line in lines:
        if line.startswith(":"):
            yield None, None, line[1:].strip()
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line == "":
            if data:
                yield event_id, json.loads("\n".join(data)), None
            event_id, data = None, []


def read_events(
    client: httpx.Client, path: str, *, last_event_id: str | None = None, limit: int | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """The (id, params) of an SSE stream until it ends, or its first `limit` messages (then disconnects)."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id is not None else {}
    out: list[tuple[str, dict[str, Any]]] = []
    with client.stream("GET", path, headers=headers) as res:
        res.raise_for_status()
        for event_id, params, _ in sse_events(res.iter_lines()):
            if params is None:
                continue
            out.append((event_id or "", params))
            if limit is not None and len(out) >= limit:
                break
    return out


def write_script(directory: Path, name: str, turns: list[list[dict[str, Any]]]) -> str:
    """A scripted-provider script file; pass the returned path as a run's `model`."""
    path = directory / f"{name}.json"
    path.write_text(json.dumps({"turns": turns}))
    return str(path)
