"""`kgent sessions`: list a workspace's sessions, show one as a tree, compact, fork (move the leaf), rewind (files
and conversation back to a message), label and repair.

Exposes `add_parser(subparsers)` and `run(args) -> int` for kgent.cli.main.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "sessions", help="list, show, compact, fork, label and repair sessions"
    )
    p.add_argument("--workspace", default=None, help="workspace directory (default: the current directory)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    cmds = p.add_subparsers(dest="sessions_command", metavar="{show,export,compact,fork,rewind,label,repair}")
    show = cmds.add_parser("show", help="print a session's tree (the active branch is marked *)")
    show.add_argument("session_id", metavar="ID")
    show.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the whole tree as JSON"
    )
    export = cmds.add_parser(
        "export", help="a readable transcript of the active branch: tool calls, diffs, cost; secrets redacted"
    )
    export.add_argument("session_id", metavar="ID")
    export.add_argument("--format", choices=("md", "html", "json"), default="md", help="default: md")
    export.add_argument(
        "--output", "-o", default=None, metavar="FILE", help="write it here (default: stdout)"
    )
    compact = cmds.add_parser("compact", help="summarize the old part of the active branch into a checkpoint")
    compact.add_argument("session_id", metavar="ID")
    compact.add_argument("--provider", help="default: the session's provider")
    compact.add_argument("--model", help="default: the session's model")
    compact.add_argument("--base-url", dest="base_url")
    compact.add_argument(
        "--keep", type=int, default=None, metavar="TOKENS", help="newest tokens to keep verbatim"
    )
    compact.add_argument("--focus", default=None, help="what the summary should pay most attention to")
    compact.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    fork = cmds.add_parser(
        "fork", help="make ENTRY the active leaf: the next run continues (branches) from there"
    )
    fork.add_argument("session_id", metavar="ID")
    fork.add_argument("entry_id", metavar="ENTRY")
    rewind = cmds.add_parser(
        "rewind",
        help="restore the files changed since user message ENTRY and fork the conversation just before it",
    )
    rewind.add_argument("session_id", metavar="ID")
    rewind.add_argument("entry_id", metavar="ENTRY", help="a user message of the active branch")
    rewind.add_argument("--dry-run", action="store_true", help="only say what would happen")
    rewind.add_argument("--yes", "-y", action="store_true", help="do not ask before restoring")
    rewind.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the result as JSON"
    )
    label = cmds.add_parser("label", help="label an entry (no TEXT: remove its label)")
    label.add_argument("session_id", metavar="ID")
    label.add_argument("entry_id", metavar="ENTRY")
    label.add_argument("text", nargs="?", default=None, metavar="TEXT")
    repair = cmds.add_parser(
        "repair",
        help="rewrite a damaged session keeping every valid entry (the original is kept as .damaged)",
    )
    repair.add_argument("session_id", metavar="ID")
    repair.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the report as JSON"
    )
    return p


def run(args: argparse.Namespace) -> int:
    args.workspace = str(Path(args.workspace or os.getcwd()).expanduser().resolve())
    return asyncio.run(_main(args))


async def _main(args: argparse.Namespace) -> int:
    from kgent.context.compaction import CompactionError
    from kgent.core.errors import KgentError
    from kgent.session.jsonl import JsonlSessionStore
    from kgent.session.paths import sessions_root

    store = JsonlSessionStore(sessions_root())
    command = getattr(args, "sessions_command", None)
    try:
        if command == "show":
            return await _show(store, args)
        if command == "export":
            return await _export(store, args)
        if command == "compact":
            return await _compact(store, args)
        if command == "fork":
            await store.set_leaf(args.session_id, args.entry_id)
            print(f"session {args.session_id}: active leaf is now {args.entry_id}")
            return 0
        if command == "rewind":
            from kgent.cli.rewind import rewind_command

            return await rewind_command(store, args)
        if command == "repair":
            return await _repair(store, args)
        if command == "label":
            await store.label(args.session_id, args.entry_id, args.text)
            print(f"session {args.session_id}: {'labelled' if args.text else 'unlabelled'} {args.entry_id}")
            return 0
        return await _list(store, args)
    except CompactionError as exc:
        print(f"error: compaction failed, nothing was changed: {exc.message}", file=sys.stderr)
        return 1
    except KgentError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    finally:
        await store.aclose()


async def _export(store: Any, args: argparse.Namespace) -> int:
    from kgent.config import provider_config
    from kgent.core.redact import remember_secret
    from kgent.service.export import export_session

    remember_secret(provider_config().api_key)  # the configured key, redacted wherever it appears
    text = await export_session(store, args.session_id, args.format)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    await asyncio.to_thread(Path(args.output).write_text, text, encoding="utf-8")
    print(f"session {args.session_id}: exported ({args.format}) to {args.output}")
    return 0


async def _repair(store: Any, args: argparse.Namespace) -> int:
    report = await store.repair(args.session_id)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        return 0
    if not report.changed:
        print(f"session {args.session_id}: nothing to repair ({report.kept} entries, all readable)")
        return 0
    print(f"session {args.session_id}: kept {report.kept} entries, dropped {len(report.dropped)} line(s)")
    for d in report.dropped:
        print(f"  dropped line {d.line} (byte {d.offset}): {d.reason}")
    for r in report.reparented:
        print(
            f"  entry {r.entry_id}: its parent {r.old_parent} was dropped; now under {r.new_parent or '(root)'}"
        )
    print(f"the damaged original is kept as {report.backup}")
    return 0


async def _list(store: Any, args: argparse.Namespace) -> int:
    workspace = args.workspace
    infos = await store.list(workspace)
    if args.json:
        print(json.dumps([i.to_dict() for i in infos], ensure_ascii=False, indent=2))
        return 0
    if not infos:
        print(f"no sessions for {workspace}")
        return 0
    print(f"{'ID':<14} {'UPDATED':<20} {'ENTRIES':>7}  TITLE")
    for i in infos:
        updated = (i.updated or i.created)[:19].replace("T", " ")
        print(f"{i.id:<14} {updated:<20} {i.entry_count:>7}  {i.title}")
    return 0


async def _show(store: Any, args: argparse.Namespace) -> int:
    from kgent.cli.render import usage_line
    from kgent.config import prices
    from kgent.service.usage import stored_usage
    from kgent.session.entries import tree_to_dict

    tree = await store.load(args.session_id)
    usage = stored_usage(tree, prices())
    if args.json:
        print(json.dumps({**tree_to_dict(tree), "usage": usage}, ensure_ascii=False, indent=2))
        return 0
    info = tree.info
    print(f"session {info.id}  workspace {info.workspace}")
    print(f"created {info.created}  entries {len(tree.entries)}  leaf {tree.leaf_id}")
    print(usage_line(usage))
    for warning in tree.warnings:
        print(f"warning: {warning}")
    for line in render_tree(tree):
        print(line)
    return 0


def render_tree(tree: Any) -> list[str]:
    """One line per entry, depth-first; a branch point indents its children. `*` marks the active branch."""
    active = {e.id for e in tree.branch()} if tree.leaf_id else set()
    labels = tree.labels()
    children: dict[str | None, list[Any]] = {}
    for e in tree.entries.values():
        children.setdefault(e.parent_id, []).append(e)
    lines: list[str] = []
    stack = [(e, 0) for e in reversed(children.get(None, []))]
    while stack:
        entry, depth = stack.pop()
        mark = "*" if entry.id in active else " "
        tail = "  <- leaf" if entry.id == tree.leaf_id else ""
        tag = f"  [{labels[entry.id]}]" if entry.id in labels else ""
        lines.append(f"{mark} {'  ' * depth}{entry.id}  {entry.type:<10} {describe(entry)}{tag}{tail}")
        kids = children.get(entry.id, [])
        step = 1 if len(kids) > 1 else 0
        stack.extend((k, depth + step) for k in reversed(kids))
    return lines


def describe(entry: Any) -> str:
    """A one-line gist of an entry."""
    d = entry.data
    if entry.type == "message":
        m = d.get("message", {})
        role = m.get("role", "?")
        if role == "tool":
            text = f"{m.get('name', '')}{' (error)' if m.get('isError') else ''}: {m.get('content', '')}"
        else:
            text = m.get("text", "")
            calls = ", ".join(c.get("name", "") for c in m.get("toolCalls", ()))
            if calls:
                text = f"{text} → {calls}" if text else f"→ {calls}"
        first = text.strip().splitlines()[0] if text.strip() else ""
        return f"{role}: {first[:70]}"
    if entry.type == "config":
        return f"mode={d.get('mode')} provider={d.get('provider')} model={d.get('model')}"
    if entry.type == "permission":
        return f"{d.get('tool')} {d.get('decision')} ({d.get('source')})"
    if entry.type == "compaction":
        return (
            f"checkpoint: {len(d.get('coveredEntryIds', ()))} entries summarized, "
            f"tokens {d.get('tokensBefore')} → {d.get('tokensAfter')}"
        )
    if entry.type == "label":
        return f"{d.get('targetId')} = {d.get('label')!r}"
    return ""


async def _compact(store: Any, args: argparse.Namespace) -> int:
    from kgent.config import provider_config, require_key
    from kgent.context.compaction import compact_session
    from kgent.context.summarizing import SummarizingProvider
    from kgent.providers import create_provider

    tree = await store.load(args.session_id)
    configured: dict[str, Any] = next((e.data for e in reversed(tree.branch()) if e.type == "config"), {})
    name = args.provider or configured.get("provider")
    model = args.model or (configured.get("model") if not args.provider else None)
    config = provider_config(provider=name, model=model, base_url=args.base_url)
    require_key(config)
    provider = create_provider(config)
    if (
        provider.name == "scripted"
    ):  # the scripted model cannot summarize: answer summary requests without one
        provider = SummarizingProvider(provider)
    try:
        result = await compact_session(
            store, provider, args.session_id, keep_recent_tokens=args.keep, focus=args.focus
        )
    finally:
        await provider.aclose()
    if result is None:
        print(
            json.dumps({"compacted": False})
            if args.json
            else "nothing to compact: the branch fits in what is kept"
        )
        return 0
    data = result.entry.data
    if args.json:
        print(json.dumps({"compacted": True, "entry": result.entry.to_dict()}, ensure_ascii=False, indent=2))
    else:
        print(
            f"checkpoint {result.entry.id}: summarized {len(data['coveredEntryIds'])} entries, "
            f"kept from {data['firstKeptEntryId']}, tokens {result.tokens_before} → {result.tokens_after}"
        )
    return 0
