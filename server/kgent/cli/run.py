"""`kgent run PROMPT`: one run on the terminal, approvals asked on a TTY (denied otherwise), exit 0 iff settled."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

from kgent.core.modes import MODE_DESCRIPTIONS


def add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--provider", help="openai | anthropic | scripted (env KGENT_PROVIDER; default openai = DeepSeek)"
    )
    p.add_argument("--model", help="model name (env KGENT_MODEL); for scripted: the script name")
    p.add_argument("--base-url", dest="base_url", help="API base URL (env KGENT_BASE_URL)")
    p.add_argument("--script", help="scripted provider: a built-in script name or a JSON file")
    p.add_argument("--workspace", default=None, help="workspace directory (default: the current directory)")
    p.add_argument(
        "--max-turns",
        dest="max_turns",
        type=int,
        default=None,
        help="model turns before giving up (env KGENT_MAX_TURNS; default 200)",
    )
    p.add_argument(
        "--cost-limit",
        dest="cost_limit",
        type=float,
        metavar="USD",
        help="stop the run (failed: cost_limit) before a model call would take its estimated cost past this many "
        "US dollars (env KGENT_COST_LIMIT; needs the model's price)",
    )


def add_parser(sub: Any) -> None:
    p = sub.add_parser("run", help="run one task and print what happens")
    add_common(p)
    p.add_argument(
        "--mode",
        help="plan | ask | auto | full | risk_based (env KGENT_PERMISSION_MODE; default ask). "
        + " ".join(f"{mode}: {text}." for mode, text in MODE_DESCRIPTIONS.items()),
    )
    p.add_argument("--json", action="store_true", help="print JSON Lines of events instead of text")
    p.add_argument("--session", help="resume this session (continue from its active leaf)")
    p.add_argument(
        "-c",
        "--continue",
        dest="continue_latest",
        action="store_true",
        help="resume the workspace's latest session (the one updated last)",
    )
    p.add_argument(
        "--trust-project",
        dest="trust_project",
        action="store_true",
        help="run this project's own extensions and MCP servers (.kgent/config.toml, .mcp.json) without asking",
    )
    p.add_argument(
        "--fork", metavar="ENTRY", help="with --session: branch from this entry instead of the leaf"
    )
    p.add_argument(
        "--image",
        dest="images",
        action="append",
        default=[],
        metavar="PATH",
        help="send this image with the prompt (PNG, JPEG, WebP or GIF, at most 5 MiB; repeat for more, at most 8); "
        "the model must take images",
    )
    p.add_argument("prompt", nargs="+", help="the task")


def read_images(paths: list[str]) -> tuple[Any, ...]:
    """The `--image` files as message parts, checked as every front checks them (kgent.core.images); a file that
    is missing or no image Kgent takes is a KgentError naming it."""
    from kgent.core.errors import KgentError
    from kgent.core.images import MAX_IMAGES, image_part, image_problem

    if len(paths) > MAX_IMAGES:
        raise KgentError(f"{len(paths)} images: at most {MAX_IMAGES} per prompt", code="usage")
    parts = []
    for name in paths:
        path = Path(name).expanduser()
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise KgentError(f"--image {name}: {exc.strerror or exc}", code="usage") from None
        problem = image_problem(data)
        if problem is not None:
            raise KgentError(f"--image {name} {problem}", code="usage")
        parts.append(image_part(data, path.name))
    return tuple(parts)


def open_store() -> Any:
    """The durable JSONL store under the state dir."""
    from kgent.session.jsonl import JsonlSessionStore
    from kgent.session.paths import sessions_root

    return JsonlSessionStore(sessions_root())


async def latest_session(workspace: Path) -> str:
    """The id of the workspace's most recently updated session (`--continue`); KgentError `no_session` when it has
    none."""
    from kgent.core.errors import KgentError

    store = open_store()
    try:
        sessions = await store.list(str(workspace))
    finally:
        await store.aclose()
    if not sessions:
        raise KgentError(
            f'no session to continue in {workspace}: start one with kgent run "..."', code="no_session"
        )
    latest: str = sessions[0].id  # the store lists the newest first
    return latest


async def resume_defaults(args: argparse.Namespace) -> None:
    """For `--session`: the session's workspace, and its provider/model/mode unless flags say otherwise.

    Raises a clear error for an unknown session or entry, or a --workspace that is not the session's."""
    from kgent.core.errors import ConfigError, KgentError

    store = open_store()
    try:
        tree = await store.load(args.session)
    finally:
        await store.aclose()
    workspace = Path(tree.info.workspace)
    if args.workspace and workspace_of(args) != workspace:
        raise ConfigError(f"session {args.session} belongs to {workspace}, not {workspace_of(args)}")
    args.workspace = str(workspace)
    if args.fork and args.fork not in tree.entries:
        raise KgentError(f"no entry {args.fork!r} in session {args.session}", code="entry_not_found")
    config: dict[str, Any] = next(
        (e.data for e in reversed(tree.branch(args.fork)) if e.type == "config"), {}
    )
    if args.provider is None and args.model is None and config.get("provider"):
        from kgent.config import normalize_provider

        args.provider, args.model = config["provider"], config.get("model")
        configured = normalize_provider(os.environ.get("KGENT_PROVIDER") or "openai")
        args.switched_provider = normalize_provider(args.provider) != configured
    if args.mode is None and config.get("mode") and not os.environ.get("KGENT_PERMISSION_MODE"):
        args.mode = config["mode"] if config["mode"] != "full" else None  # never resume into full silently


def workspace_of(args: argparse.Namespace) -> Path:
    return Path(args.workspace or os.getcwd()).expanduser().resolve()


def run_service(args: argparse.Namespace, port: Any, extensions: Any = None) -> Any:
    """The shared service (kgent.service.base.RunService) with this command's flags as its settings: `--provider`,
    `--model`, `--base-url`, `--script`, `--mode`, `--max-turns`, `--trust-project` (the environment fills the rest,
    as for every front). A resumed session of another provider than the configured one (`resume_defaults`) is named
    per run (`run_request`), so the configured provider's own key never travels with it."""
    from kgent.service.base import RunService
    from kgent.service.handshake import Settings

    switched = getattr(args, "switched_provider", False)
    settings = Settings(
        provider=None if switched else args.provider,
        model=None if switched else args.model,
        base_url=args.base_url,
        mode=args.mode,
        max_turns=args.max_turns,
        script=getattr(args, "script", None),
        trust_project_extensions=True if getattr(args, "trust_project", False) else None,
    )
    return RunService(os.environ, settings, port, extensions=extensions, one_run=True)


def run_request(args: argparse.Namespace, text: str, images: tuple[Any, ...] = ()) -> Any:
    """The run `args` ask for (kgent.service.request.NewRun)."""
    from kgent.service.request import NewRun

    switched = getattr(args, "switched_provider", False)
    return NewRun(
        text=text,
        images=images,
        workspace=str(workspace_of(args)),
        session_id=args.session,
        parent_entry_id=args.fork,
        provider=args.provider if switched else None,
        model=args.model if switched else None,
        cost_limit=getattr(args, "cost_limit", None),
    )


async def until_ended(handle: Any) -> Any:
    """Take the run's events (the port shows them) until its run_end; its RunResult."""
    loop = asyncio.get_running_loop()
    # Ctrl-C, a kill, or the terminal closing (SIGHUP) cancel the run cleanly: tools killed, session kept.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, handle.cancel)
    try:
        handle.start()
        await handle.ended.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(sig)
    return handle.result


async def _main(args: argparse.Namespace) -> int:
    from kgent.cli.extensions import for_run
    from kgent.cli.render import HumanRenderer, JsonRenderer
    from kgent.cli.terminal import TerminalPort
    from kgent.core.errors import KgentError
    from kgent.core.loading import loading
    from kgent.service.errors import ServiceError

    renderer = JsonRenderer() if args.json else HumanRenderer()
    interactive = sys.stdin.isatty() and not args.json
    service = None
    try:
        if getattr(args, "continue_latest", False):
            if args.session:
                raise KgentError(
                    "--continue resumes the latest session: give it or --session ID, not both", code="usage"
                )
            args.session = await latest_session(workspace_of(args))
        if args.fork and not args.session:
            raise KgentError("--fork needs --session ID", code="usage")
        images = read_images(args.images)
        if args.session:
            await resume_defaults(args)
        with loading():  # the service, the kernel and the provider load (kgent.core.loading)
            extensions = for_run(workspace_of(args), trust_flag=args.trust_project, interactive=interactive)
            port = TerminalPort(renderer, interactive=interactive)
            service = run_service(args, port, extensions)
            handle = await service.start_run(run_request(args, " ".join(args.prompt), images))
        port.on_gone = handle.cancel  # `| head` has read enough: stop the run (its session is kept)
    except (KgentError, ServiceError) as exc:
        code = exc.code if isinstance(exc, KgentError) else exc.name
        renderer.note({"error": exc.message, "code": code})
        if service is not None:
            await service.close()
        elif "extensions" in locals():
            await extensions.aclose()
        return 2
    if not args.json:
        port.note({"sandbox": sandbox_note(service)})
    try:
        result = await until_ended(handle)
    finally:
        await service.close()  # stops the background commands, the MCP servers, the providers
    if port.gone:
        return 141  # as a shell reports a command that a closed pipe ended (128 + SIGPIPE)
    if args.json:
        renderer.note(
            {
                "result": {
                    "status": result.status,
                    "sessionId": result.session_id,
                    "runId": result.run_id,
                    "sandbox": service.sandbox.name,
                }
            }
        )
    else:
        renderer.note(
            {"session": f"{result.session_id}  (resume: kgent run --session {result.session_id} ...)"}
        )
    return 0 if result.status == "settled" else 1


def sandbox_note(service: Any) -> str:
    """What shell commands run in, for the line printed at start."""
    from kgent.permissions import normalize_mode
    from kgent.service.handshake import default_mode

    sandbox = service.sandbox
    if normalize_mode(default_mode(service.settings, service.env)) == "full":
        return f"{sandbox.name} — but full mode runs shell commands unconfined"
    if sandbox.contains:
        return f"{sandbox.name} — reads run unasked inside it; other shell commands ask"
    return f"none — {sandbox.reason}: every shell command asks"


def run(args: argparse.Namespace) -> int:
    from kgent.sandbox.bwrap import prefetch

    prefetch()  # the sandbox probe runs while the kernel's modules load
    return asyncio.run(_main(args))
