"""Seed 000's server entry points: `uvicorn kgent.http.asgi:app` (configured from the environment, TLS with
uvicorn's own flags) and `kgent serve --http --env-file FILE` (the operator's dotenv file, TLS included)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kgent.testing.http_server import start

TOKEN = "uvicorn-token"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _cert(tmp_path: Path) -> tuple[Path, Path]:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return key, cert


@pytest.fixture
def uvicorn(tmp_path: Path) -> Iterator[Any]:
    procs: list[subprocess.Popen[str]] = []

    def launch(*flags: str, env: dict[str, str] | None = None) -> tuple[str, list[str]]:
        ws = tmp_path / "ws"
        ws.mkdir(exist_ok=True)
        port = _free_port()
        full = {
            k: v for k, v in os.environ.items() if not k.startswith("KGENT_") and not k.endswith("_API_KEY")
        }
        full.update(
            KGENT_PROVIDER="scripted",
            KGENT_STATE_DIR=str(tmp_path / "state"),
            KGENT_HTTP_WORKSPACE_ROOTS=str(ws),
            PYTHONUNBUFFERED="1",
            **(env or {}),
        )
        command = [str(Path(sys.executable).with_name("uvicorn")), "kgent.http.asgi:app"]
        proc = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port), *flags],
            env=full,
            cwd=ws,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        assert proc.stderr is not None
        lines: list[str] = []
        # uvicorn logs to stderr: "Application startup complete" once the app's lifespan has run, then "Uvicorn
        # running on …" once it listens (connecting between the two is refused)
        for line in proc.stderr:
            lines.append(line)
            if "Uvicorn running on" in line:
                break
        else:
            raise AssertionError("uvicorn did not start:\n" + "".join(lines))
        scheme = "https" if "--ssl-certfile" in flags else "http"
        return f"{scheme}://127.0.0.1:{port}", lines

    yield launch
    for proc in procs:
        proc.terminate()
        _, rest = proc.communicate(timeout=30)
        # uvicorn shuts down gracefully, then re-raises the signal
        assert "Finished server process" in rest and "Traceback" not in rest, rest
        assert proc.returncode == -signal.SIGTERM


def test_uvicorn_serves_the_client_and_the_api(uvicorn: Any) -> None:
    url, _ = uvicorn(env={"KGENT_HTTP_TOKEN": TOKEN, "KGENT_PERMISSION_MODE": "risk_based"})
    with httpx.Client(base_url=url, timeout=30) as c:
        page = c.get("/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert "<script" in page.text
        assert c.get("/api/info").status_code == 401  # the token guards the API
        info = c.get("/api/info", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert info["serverInfo"]["name"] == "kgent"
    assert "risk_based" in info["capabilities"]["modes"]
    assert info["capabilities"]["defaultMode"] == "risk_based"


def test_uvicorn_with_its_own_tls_flags_and_a_printed_token(uvicorn: Any, tmp_path: Path) -> None:
    key, cert = _cert(tmp_path)
    url, lines = uvicorn("--ssl-keyfile", str(key), "--ssl-certfile", str(cert))
    printed = next(line for line in lines if line.startswith("kgent: token "))
    token = printed.split()[2]
    with httpx.Client(base_url=url, timeout=30, verify=ssl.create_default_context(cafile=str(cert))) as c:
        assert c.get("/health").json() == {"status": "ok"}
        assert c.get("/api/info", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def _asgi(app: Any, server: tuple[str, int], scheme: str) -> int:
    sent: list[dict[str, Any]] = []
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/health",
        "headers": [],
        "server": server,
        "scheme": scheme,
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return int(sent[0]["status"])


def test_plain_http_to_a_network_address_is_refused() -> None:
    from kgent.http.asgi import PlainHttpGuard

    async def ok(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    guard = PlainHttpGuard(ok, insecure=False)
    assert _asgi(guard, ("127.0.0.1", 8000), "http") == 200
    assert _asgi(guard, ("::1", 8000), "http") == 200
    assert _asgi(guard, ("10.1.2.3", 8000), "http") == 403
    assert _asgi(guard, ("10.1.2.3", 8443), "https") == 200
    assert _asgi(PlainHttpGuard(ok, insecure=True), ("10.1.2.3", 8000), "http") == 200


def test_env_file_configures_the_server_tls_included(tmp_path: Path) -> None:
    key, cert = _cert(tmp_path)
    env_file = tmp_path / "operator.env"
    env_file.write_text(
        f"# the operator's settings\nKGENT_SSL_KEYFILE={key}\nKGENT_SSL_CERTFILE='{cert}'\n"
        "KGENT_PERMISSION_MODE=risk_based\nKGENT_MODEL=tool-loop\n"
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    # the environment wins over the file: the model comes from the environment
    srv = start(ws, tmp_path / "state", "--env-file", str(env_file), env={"KGENT_MODEL": "hello"})
    try:
        assert srv.url.startswith("https://127.0.0.1:")
        with httpx.Client(
            base_url=srv.url,
            headers=srv.headers,
            verify=ssl.create_default_context(cafile=str(cert)),
            timeout=30,
        ) as c:
            caps = c.get("/api/info").json()["capabilities"]
        assert caps["defaultMode"] == "risk_based"
        assert caps["defaultModel"] == "hello"
    finally:
        assert srv.stop() == 0


def test_the_default_env_file_is_server_env_in_the_user_config_dir(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "server.env").write_text("KGENT_PERMISSION_MODE=risk_based\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    srv = start(ws, tmp_path / "state", env={"KGENT_CONFIG_DIR": str(config)})
    try:
        with srv.client() as c:
            assert c.get("/api/info").json()["capabilities"]["defaultMode"] == "risk_based"
    finally:
        assert srv.stop() == 0
    missing = subprocess.run(
        [sys.executable, "-m", "kgent", "serve", "--http", "--env-file", str(tmp_path / "nope.env")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "cannot read --env-file" in missing.stderr


def test_the_file_configures_the_server_and_never_the_environment_of_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgent.http.serve import settings_env
    from kgent.tools.bash import child_env

    env_file = tmp_path / "server.env"
    env_file.write_text("KGENT_MODEL=from-file\nKGENT_PROVIDER=from-file\nKGENT_SEED_ONLY_IN_FILE=1\n")
    monkeypatch.delenv("KGENT_SEED_ONLY_IN_FILE", raising=False)
    settings = settings_env({"KGENT_PROVIDER": "scripted"}, str(env_file))
    assert settings["KGENT_PROVIDER"] == "scripted" and settings["KGENT_MODEL"] == "from-file"
    assert "KGENT_SEED_ONLY_IN_FILE" not in os.environ
    assert "KGENT_SEED_ONLY_IN_FILE" not in child_env()
