"""`kgent extensions`: what extensions and MCP servers are configured for a project, loaded or not and why; project
trust (`--trust` / `--untrust`); and the first-run trust question `kgent run` asks (`for_run`)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any


def add_parser(sub: Any) -> None:
    p = sub.add_parser("extensions", help="list extensions and MCP servers; trust a project's own")
    p.add_argument("--workspace", default=None, help="the project (default: the current directory)")
    p.add_argument(
        "--json", action="store_true", help="print the listing as JSON (the shape `initialize` has)"
    )
    p.add_argument("--start", action="store_true", help="start the MCP servers and list their tools")
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--trust", action="store_true", help="trust this project's own extensions and MCP servers"
    )
    group.add_argument("--untrust", action="store_true", help="stop trusting this project")


def _workspace(args: argparse.Namespace) -> Path:
    return Path(args.workspace or ".").expanduser().resolve()


def run(args: argparse.Namespace) -> int:
    from kgent.core.errors import KgentError
    from kgent.ext.trust import set_trusted

    workspace = _workspace(args)
    if not workspace.is_dir():
        print(f"kgent: {workspace} is not a directory", file=sys.stderr)
        return 2
    try:
        if args.trust or args.untrust:
            set_trusted(workspace, args.trust)
            print(f"{'trusted' if args.trust else 'not trusted'}: {workspace}")
        listing = asyncio.run(_listing(workspace, start=args.start))
    except KgentError as exc:
        print(f"kgent: {exc.message}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(listing, indent=1))
    else:
        print(render(listing))
    return 1 if listing["errors"] or any(e["status"] == "failed" for e in listing["extensions"]) else 0


async def _listing(workspace: Path, *, start: bool) -> dict[str, Any]:
    from kgent.ext.host import Extensions

    ext = Extensions(rescan=True)  # a listing asked for: what is installed now
    try:
        if start:
            await ext.mcp.tools_for(ext.project(workspace).mcp_servers)
        return ext.listing(workspace)
    finally:
        await ext.aclose()


def render(listing: dict[str, Any]) -> str:
    """The listing for people."""
    lines = [f"extension API {listing['apiVersion']}"]
    project = listing.get("project")
    if project is not None:
        trust = "trusted" if project["trusted"] else "NOT trusted (kgent extensions --trust)"
        lines.append(f"project {project['root']}: {trust if project['needsTrust'] else 'no code of its own'}")
    lines.append("extensions:" if listing["extensions"] else "extensions: none")
    for e in listing["extensions"]:
        version = f" {e['version']}" if e["version"] else ""
        lines.append(f"  {e['name']}{version} [{e['source']}] {e['status']}: {e['target']}")
        if e["registered"]:
            lines.append(f"    registers {', '.join(e['registered'])}")
        if e.get("error"):
            lines.append(f"    error: {e['error']}")
    lines.append("MCP servers:" if listing["mcpServers"] else "MCP servers: none")
    for s in listing["mcpServers"]:
        lines.append(f"  {s['name']} [{s['source']}, {s['transport']}] {s['status']}: {s['target']}")
        if s.get("tools"):
            lines.append(f"    tools: {', '.join('mcp__' + s['name'] + '__' + t for t in s['tools'])}")
        if s.get("error"):
            lines.append(f"    error: {s['error']}")
    lines += [f"error: {e}" for e in listing["errors"]]
    return "\n".join(lines)


def for_run(workspace: Path, *, trust_flag: bool, interactive: bool) -> Any:
    """The Extensions a `kgent run` in `workspace` uses. A project whose own files name code to run and that is not
    trusted yet: asked once on a terminal (the answer is remembered when it is yes), else left out with a note."""
    from kgent.ext.host import Extensions
    from kgent.ext.trust import set_trusted

    ext = Extensions(trust_project=True if trust_flag else None)
    project = ext.project(workspace)
    if not project.needs_trust or project.trusted:
        return ext
    listing = ext.listing(workspace)
    named = [f"extension {e['target']}" for e in listing["extensions"] if e["status"] == "untrusted"]
    named += [
        f"MCP server {s['name']}: {s['target']}" for s in listing["mcpServers"] if s["status"] == "untrusted"
    ]
    what = "\n".join(f"  - {n}" for n in named)
    if interactive:
        print(f"This project ({workspace}) configures code to run:\n{what}", file=sys.stderr)
        try:
            answer = input("Trust this project and run it? [y/N] ").strip().lower()
        except EOFError:
            answer = ""
        if answer[:1] == "y":
            set_trusted(workspace, True)
            ext.with_trust(True)
            return ext
    print(
        f"kgent: not running this project's own extensions / MCP servers (not trusted):\n{what}\n"
        "  trust it with `kgent extensions --trust` or `kgent run --trust-project`",
        file=sys.stderr,
    )
    return ext
