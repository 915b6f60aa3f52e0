"""`kgent run PROMPT`: one run on the terminal, approvals asked on a TTY (denied otherwise), exit 0 iff settled."""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from kgent.core.events import PermissionAnswer, PermissionRequest, RunEnd, prompt_of
from kgent.permissions.modes import MODE_DESCRIPTIONS


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


def build_kernel(args: argparse.Namespace, mode: str | None = None, extensions: Any = None) -> Any:
    """Assemble an AgentKernel from flags + environment (and `extensions`: kgent.ext.Extensions, whose providers,
    tools and hooks it gets); raises ConfigError with what to fix."""
    from kgent.config import provider_config, require_key
    from kgent.providers import create_provider
    from kgent.service.assembly import build_kernel, kernel_config

    env: dict[str, str] | None = None
    if getattr(args, "switched_provider", False):
        # A resumed session of another provider than the configured one: that provider's own defaults and vendor
        # key; KGENT_API_KEY (and KGENT_BASE_URL) belong to the configured provider and never travel with the switch.
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("KGENT_PROVIDER", "KGENT_MODEL", "KGENT_BASE_URL")
        }
    config = provider_config(
        env,
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        script=getattr(args, "script", None),
        kgent_key=env is None,
    )
    require_key(config)
    settings = kernel_config(
        os.environ, mode=mode, turns=args.max_turns, limit=getattr(args, "cost_limit", None)
    )
    if extensions is None:
        return build_kernel(create_provider(config), settings, store=open_store())
    provider = extensions.create_provider(config)
    return build_kernel(provider, settings, store=open_store(), hooks=extensions.hooks)


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


# The key for each option the daemon may offer (any other option gets its number).
_KEYS = {
    "allow_once": "y",
    "allow_always": "a",
    "allow_always_project": "p",
    "reject_once": "n",
    "reject_always": "r",
    "reject_always_project": "x",
}


def prompt_lines(request: PermissionRequest) -> tuple[list[str], dict[str, str]]:
    """The approval prompt: one line per option offered (its name says the rule and how long it lasts), the
    reason no 'always' is offered (`noRule`), and the keys that choose them."""
    lines: list[str] = []
    keys: dict[str, str] = {}
    for number, option in enumerate(request.options, 1):
        key = _KEYS.get(option.option_id, str(number))
        keys[key] = option.option_id
        lines.append(f"  [{key}] {option.name}")
    if request.no_rule:
        lines.append(f"  (no 'always': {request.no_rule})")
    return lines, keys


def ask_on_tty(request: PermissionRequest) -> str | PermissionAnswer:
    """Prompt on the terminal; EOF or anything unexpected is a reject. An edit or write may be changed in $VISUAL /
    $EDITOR first, and then approved as the user's version."""
    lines, keys = prompt_lines(request)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    can_edit = bool(editor) and request.tool_call.preview is not None
    print("\n".join(lines))
    extra = " or [e]dit it first" if can_edit else ""
    try:
        answer = input(f"  allow? [{'/'.join(keys)}]{extra}: ").strip().lower()
    except EOFError:
        return "reject_once"
    if answer[:1] == "e" and can_edit and editor:
        return edited_in_editor(request, editor)
    return keys.get(answer, keys.get(answer[:1], "reject_once"))


def edited_in_editor(request: PermissionRequest, editor: str) -> str | PermissionAnswer:
    """Open the proposed text in `editor`; what it saves is approved once as the user's version (approve with
    changes). An editor that fails (or cannot start) is a reject."""
    preview = request.tool_call.preview
    assert preview is not None
    suffix = Path(request.tool_call.path or "").suffix or ".txt"
    fd, name = tempfile.mkstemp(prefix="kgent-approve-", suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(preview.new_text)
        try:
            code = subprocess.run([*shlex.split(editor), name], check=False).returncode
        except OSError as exc:
            print(f"  could not start the editor ({exc.strerror or exc}): rejected", file=sys.stderr)
            return "reject_once"
        if code != 0:
            print(f"  the editor exited with status {code}: rejected", file=sys.stderr)
            return "reject_once"
        with open(name, encoding="utf-8", newline="") as f:
            return PermissionAnswer("allow_once", f.read())
    finally:
        os.unlink(name)


async def ask_unless_ended(run: Any, request: PermissionRequest) -> str | PermissionAnswer | None:
    """Ask on the terminal until answered or until the run ends (Ctrl-C cancels it): None when it ended first.

    The prompt blocks in a daemon thread, not the loop's executor: a prompt the run made moot must not keep the
    process alive waiting for Enter.
    """
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[str | PermissionAnswer] = loop.create_future()

    def settle(decision: str | PermissionAnswer) -> None:
        if not answered.done():
            answered.set_result(decision)

    def prompt() -> None:
        decision: str | PermissionAnswer
        try:
            decision = ask_on_tty(request)
        except BaseException:  # noqa: BLE001 - anything but an answer is a reject
            decision = "reject_once"
        try:
            loop.call_soon_threadsafe(settle, decision)
        except RuntimeError:  # the loop is gone: nobody is waiting any more
            pass

    threading.Thread(target=prompt, name="kgent-approval", daemon=True).start()
    ended = asyncio.ensure_future(run.result())
    try:
        await asyncio.wait({answered, ended}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        ended.cancel()
    if answered.done():
        return answered.result()
    print(file=sys.stderr)  # leave the abandoned prompt's line
    return None


async def drive(run: Any, renderer: Any, *, interactive: bool, answer: Any = None) -> Any:
    """Consume the run's events, answering approvals; return the result."""
    async for event in run:
        renderer.event(event)
        asked = prompt_of(event)
        if asked is not None:
            decision: str | PermissionAnswer | None
            if answer is not None:
                decision = answer(asked)
            elif interactive:
                decision = await ask_unless_ended(run, asked)
            else:
                decision = "reject_once"
            if isinstance(decision, PermissionAnswer):  # approved with changes, in $EDITOR
                run.resolve_permission(asked.request_id, decision.option_id, decision.new_text)
            elif decision is not None:
                run.resolve_permission(asked.request_id, decision)
        elif isinstance(event, RunEnd):
            pass
    return await run.result()


async def _main(args: argparse.Namespace) -> int:
    from kgent.cli.extensions import for_run
    from kgent.cli.render import HumanRenderer, JsonRenderer
    from kgent.cli.slash import compact, expand_prompt
    from kgent.core.errors import KgentError

    renderer = JsonRenderer() if args.json else HumanRenderer()
    interactive = sys.stdin.isatty() and not args.json
    extensions = None
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
        extensions = for_run(workspace_of(args), trust_flag=args.trust_project, interactive=interactive)
        kernel = build_kernel(args, args.mode, extensions)
        expansion = await expand_prompt(kernel, " ".join(args.prompt), workspace_of(args), args.session)
        if expansion.builtin == "compact":
            renderer.note({"compact": await compact(kernel, args.session, expansion.args)})
            await kernel.aclose()
            await extensions.aclose()
            return 0
        run = kernel.create_run(
            expansion.text,
            images=images,
            workspace=workspace_of(args),
            session_id=args.session,
            parent_entry_id=args.fork,
            typed=expansion.typed if expansion.command is not None else None,
        )
    except KgentError as exc:
        renderer.note({"error": exc.message, "code": exc.code})
        if extensions is not None:
            await extensions.aclose()
        return 2
    sandbox = sandbox_note(kernel)
    if not args.json:
        renderer.note({"sandbox": sandbox})
    loop = asyncio.get_running_loop()
    # Ctrl-C, a kill, or the terminal closing (SIGHUP) cancel the run cleanly: tools killed, session kept.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, run.cancel)
    try:
        result = await drive(run, renderer, interactive=interactive)
    finally:
        await kernel.aclose()
        await extensions.aclose()  # stops the MCP servers
    if args.json:
        renderer.note(
            {
                "result": {
                    "status": result.status,
                    "sessionId": result.session_id,
                    "runId": result.run_id,
                    "sandbox": kernel.sandbox.name,
                }
            }
        )
    else:
        renderer.note(
            {"session": f"{result.session_id}  (resume: kgent run --session {result.session_id} ...)"}
        )
    return 0 if result.status == "settled" else 1


def sandbox_note(kernel: Any) -> str:
    """What shell commands run in, for the line printed at start."""
    from kgent.permissions import normalize_mode

    sandbox = kernel.sandbox
    if normalize_mode(kernel.config.mode) == "full":
        return f"{sandbox.name} — but full mode runs shell commands unconfined"
    if sandbox.contains:
        return f"{sandbox.name} — reads run unasked inside it; other shell commands ask"
    return f"none — {sandbox.reason}: every shell command asks"


def run(args: argparse.Namespace) -> int:
    from kgent.sandbox.bwrap import prefetch

    prefetch()  # the sandbox probe runs while the kernel's modules load
    return asyncio.run(_main(args))
