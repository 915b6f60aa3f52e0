"""`kgent desktop`: the web client in a native window (pywebview on the system's web view; the `kgent[desktop]` extra).
It serves its own loopback HTTP front on a free port with a fresh token, opens the page signed in, and stops the server
when the window closes."""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import threading
import time
from typing import Any

from kgent.cli.frontflags import add_provider_flags, env_with_flags

GUIS = ("qt", "gtk")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "desktop",
        help="open the web client in a desktop window (pip install 'kgent[desktop]')",
        description="Start a private loopback server (fresh token) and show the web client in a native window; "
        "closing the window stops the server.",
    )
    p.add_argument(
        "--workspace-root",
        dest="workspace_roots",
        action="append",
        default=[],
        metavar="DIR",
        help="projects may be chosen under DIR only (repeatable; default: the current directory)",
    )

    p.add_argument(
        "--gui",
        choices=GUIS,
        default="qt",
        help="the web view toolkit (default qt: the extra installs PyQt6-WebEngine)",
    )
    add_provider_flags(p, mode_help="default permission mode")
    return p


def _close_with_the_page(window: Any) -> None:
    """Let the page close its window (`window.close()` from its *Close* button): Qt WebEngine asks for that with
    `windowCloseRequested`, which pywebview leaves unconnected. (pywebview's js_api would need eval, which the page's
    CSP refuses.) Runs in pywebview's start thread once the window is shown."""
    window.events.shown.wait()
    from PyQt6.QtWebEngineWidgets import QWebEngineView

    view = window.native.findChild(QWebEngineView)
    if (
        view is not None
    ):  # to a slot of the window itself: it runs in the GUI thread, as closing the window by hand
        view.page().windowCloseRequested.connect(view.window().close)


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn
        import webview

        from kgent.http.app import create_app
        from kgent.http.guard import TOKEN_ENV, make_config
        from kgent.http.serve import bind, url
    except ImportError as exc:
        sys.stderr.write(f"kgent: desktop needs the desktop extra (pip install 'kgent[desktop]'): {exc}\n")
        return 2
    if (
        args.gui == "qt"
    ):  # a missing system library would make Qt abort the process (exit 134) naming no package
        from kgent.cli.desktoplibs import missing_libraries, missing_message

        missing = missing_libraries()
        if missing:
            sys.stderr.write(missing_message(missing))
            return 1
    env = {
        k: v for k, v in env_with_flags(args).items() if k != TOKEN_ENV
    }  # a fresh token, never a shared one
    env[TOKEN_ENV] = secrets.token_urlsafe(24)
    try:
        config = make_config(
            env,
            host="127.0.0.1",
            port=0,
            workspace_roots=args.workspace_roots,
            cors_origins=[],
            insecure=False,
        )
    except ValueError as exc:
        sys.stderr.write(f"kgent: {exc}\n")
        return 2
    sock = bind(config.host, 0)
    base = url(config, sock.getsockname()[1])
    server = uvicorn.Server(
        uvicorn.Config(create_app(config, env), log_level="warning", timeout_graceful_shutdown=3)
    )
    # Not the main thread: uvicorn leaves the signal handlers alone, and the window's toolkit keeps the main thread.
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[sock])), name="kgent-desktop-http"
    )
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:  # the page's first requests must find the app started (its lifespan has run)
        if not thread.is_alive() or time.monotonic() > deadline:
            sys.stderr.write("kgent: the desktop's server did not start\n")
            server.should_exit = True
            return 1
        time.sleep(0.02)
    if os.geteuid() == 0:  # Chromium's sandbox refuses root; the window shows only this loopback page
        os.environ.setdefault("QTWEBENGINE_DISABLE_SANDBOX", "1")
    sys.stdout.write(f"kgent: desktop window on {base} (workspaces: {', '.join(config.workspace_roots)})\n")
    sys.stdout.flush()
    try:
        # text_select: the page's text stays selectable (a command's output, an answer). pywebview's default turns
        # selection off with a <style> element it adds to the page, which the page's CSP (style-src 'self') refuses
        # and the web view reports on every run.
        window = webview.create_window(
            "Kgent",
            f"{base}?token={config.token}&desktop=1",
            width=1280,
            height=860,
            min_size=(720, 480),
            text_select=True,
        )
        if window is None:
            raise RuntimeError("pywebview made no window")
        hook = _close_with_the_page if args.gui == "qt" else None
        webview.start(hook, (window,), gui=args.gui, private_mode=False)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    sys.stdout.write("kgent: window closed, server stopped\n")
    return 0
