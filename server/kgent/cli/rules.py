"""`kgent rules`: the permission rules in force for a project — list, add and remove, at the project's scope
(`.kgent/config.toml`, or the user's own file for an untrusted project), the user's (the user config's config.toml) or one session's."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any


def _workspace_option(p: Any, default: Any) -> None:
    p.add_argument("--workspace", default=default, help="the project (default: the current directory)")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("rules", help="list, add and remove permission rules (project, user, session)")
    p.set_defaults(action="list", rule=None)
    _workspace_option(p, None)
    p.add_argument("--json", action="store_true", help="print agent/rules' result as JSON")
    actions = p.add_subparsers(dest="action", metavar="{list,add,remove}")
    listing = actions.add_parser("list", help="the rules in force for the project (the default)")
    listing.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="as JSON")
    _workspace_option(listing, argparse.SUPPRESS)
    for name, what in (("add", "add a rule"), ("remove", "remove a rule")):
        q = actions.add_parser(name, help=what)
        q.add_argument("rule", help="e.g. 'bash(npm test *)', 'edit(src/**)', 'web_fetch(docs.python.org)'")
        _workspace_option(q, argparse.SUPPRESS)
        scope = q.add_mutually_exclusive_group()
        scope.add_argument(
            "--project",
            action="store_true",
            help="the project's .kgent/config.toml (default); while the project is not trusted, your own file for "
            "it in your config dir",
        )
        scope.add_argument("--user", action="store_true", help="the user's config.toml (every project)")
        scope.add_argument("--session", metavar="ID", default=None, help="one session's rules")
        q.add_argument("--deny", action="store_true", help="a deny rule (default: allow)")


def run(args: argparse.Namespace) -> int:
    from kgent.core.errors import KgentError
    from kgent.permissions import RuleBook
    from kgent.service import rules
    from kgent.service import wire as W
    from kgent.service.errors import ServiceError
    from kgent.service.store import open_store

    workspace = Path(args.workspace or ".").expanduser().resolve()
    if not workspace.is_dir():
        print(f"kgent: {workspace} is not a directory", file=sys.stderr)
        return 2
    store, _ = open_store()
    book = RuleBook()
    scope = (
        "user" if getattr(args, "user", False) else "session" if getattr(args, "session", None) else "project"
    )
    try:
        if args.action in (None, "list"):
            listing = asyncio.run(rules.list_rules(book, store, workspace))
            if args.json:
                print(json.dumps(listing.model_dump(by_alias=True, exclude_none=True), indent=1))
            else:
                print(render(listing.model_dump(by_alias=True, exclude_none=True)))
            return 1 if listing.problems else 0
        if not args.rule:
            print(f"kgent: rules {args.action} needs a rule, e.g. 'bash(npm test *)'", file=sys.stderr)
            return 2
        params = W.RuleParams.parse(
            {
                "workspace": str(workspace),
                "rule": args.rule,
                "decision": "deny" if getattr(args, "deny", False) else "allow",
                "scope": scope,
                **({"sessionId": args.session} if args.session else {}),
            }
        )
        if args.action == "add":
            added = asyncio.run(rules.add_rule(book, store, params, workspace, lambda _: False)).rule
            where = f" ({added.file})" if added.file else f" (session {args.session})"
            print(f"added: {added.rule} — {added.text}{where}")
            return 0
        removed = asyncio.run(rules.remove_rule(book, store, params, workspace, lambda _: False)).removed
        print(f"removed: {args.rule}" if removed else f"no such {scope} rule: {args.rule}")
        return 0 if removed else 1
    except ServiceError as exc:
        print(f"kgent: {exc.message}", file=sys.stderr)
        return 2
    except KgentError as exc:
        print(f"kgent: {exc.message}", file=sys.stderr)
        return 2


def render(listing: dict[str, Any]) -> str:
    files = listing["files"]
    lines = [
        f"project rules: {files['project']}",
        f"your project rules: {files['personal']}",
        f"user rules:    {files['user']}",
    ]
    if not listing["projectTrusted"]:
        lines.append(
            "the project is not trusted: the allow rules in its own file are ignored (kgent extensions --trust); "
            "project rules you add are kept in your own file for it"
        )
    for item in listing["rules"]:
        where = item["scope"] + (f" {item['sessionId']}" if item.get("sessionId") else "")
        lines.append(f"  {item['decision']:<5}  {item['rule']:<40}  {where}: {item['text']}")
    if not listing["rules"]:
        lines.append("  (no rules)")
    for problem in listing.get("problems") or ():
        lines.append(f"error: {problem}")
    return "\n".join(lines)
