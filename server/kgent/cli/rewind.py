"""`kgent sessions rewind ID ENTRY`: restore the files the agent changed since a user message and fork the
conversation just before it (kgent.service.rewind, as the daemon's `agent/rewind`). Shows what it will do — the
conflicts, and outside git the shell commands whose effects are unknown — and asks unless `--yes`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kgent.files.ops import LocalFileOps
from kgent.service.rewind import FileRewind, RewindError, RewindPlan, result_dict, rewind_session

_SAYS = {
    "restored": "restore",
    "conflict": "left as it is",
    "unchanged": "unchanged",
    "unrestorable": "cannot restore",
}


def describe(plan: RewindPlan, files: list[FileRewind], *, done: bool) -> list[str]:
    """The plan (or what was done) as lines for a terminal."""
    out = [f"checkpoint {plan.checkpoint.id}: {plan.prompt!r}"]
    for f in files:
        verb = "restored" if done and f.outcome == "restored" else _SAYS[f.outcome]
        out.append(f"  {verb:<15} {f.path}" + (f" — {f.reason}" if f.reason else ""))
    if not files:
        out.append("  no file to restore")
    out.extend(f"note: {n}" for n in plan.notes)
    return out


async def rewind_command(store: Any, args: argparse.Namespace) -> int:
    fs = LocalFileOps()
    as_json = bool(getattr(args, "json", False))
    try:
        tree = await store.load(args.session_id)
        plan, files = await rewind_session(store, tree, args.entry_id, fs, dry_run=True)
        if args.dry_run:
            _show(args.session_id, plan, files, forked=False, done=False, as_json=as_json)
            return 0
        if not args.yes:
            print("\n".join(describe(plan, files, done=False)))
            sys.stdout.write("Restore these files and fork the conversation before this message? [y/N] ")
            sys.stdout.flush()
            answer = sys.stdin.readline().strip().lower()
            if answer not in ("y", "yes"):
                print("nothing changed")
                return 1
        plan, files = await rewind_session(store, tree, args.entry_id, fs, dry_run=False)
    except RewindError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    _show(args.session_id, plan, files, forked=True, done=True, as_json=as_json)
    return 0


def _show(
    session_id: str, plan: RewindPlan, files: list[FileRewind], *, forked: bool, done: bool, as_json: bool
) -> None:
    if as_json:
        print(json.dumps(result_dict(session_id, plan, files, forked=forked), ensure_ascii=False, indent=2))
        return
    print("\n".join(describe(plan, files, done=done)))
    if forked:
        print(
            f"session {session_id}: active leaf is now {plan.leaf_id} (the next prompt continues from there)"
        )
