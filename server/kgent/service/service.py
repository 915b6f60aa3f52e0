"""Service: what the wire fronts' handlers call (the stdio daemon, HTTP, ACP) — RunService's runs, and the
handshake, the session requests (list, get, fork, rewind, rename, delete, compact, export), the slash commands the
server answers (/help, /cost, /model, /mode), review and rules, answered in the wire models. Works against the SessionStore protocol, so the JSONL store and the in-memory one serve the same methods.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from kgent.core.errors import KgentError, RunStateError
from kgent.ext.config import configured
from kgent.files.ops import LocalFileOps
from kgent.kernel.resources import loaded_resources
from kgent.service import rules, search
from kgent.service import wire as W
from kgent.service.base import RunService
from kgent.service.commands import builtin, expand, help_text, invocation
from kgent.service.errors import CONFIG, CONFLICT, INVALID_PARAMS, NOT_FOUND, ServiceError
from kgent.service.export import export_session
from kgent.service.handshake import (
    DEFAULT_MODELS,
    MODE_DESCRIPTIONS,
    MODES,
    default_mode,
    default_provider,
    initialize_result,
    normalize_mode,
    parse_initialize,
)
from kgent.service.outputs import full_output, tool_result
from kgent.service.review import apply_review, current_starts, review_files
from kgent.service.review import told as mark_told
from kgent.service.rewind import RewindError, result_dict, rewind_session
from kgent.service.runs import FileScope
from kgent.service.usage import stored_usage
from kgent.session.entries import SessionEntry, title_entry, tree_to_dict
from kgent.session.paths import normalize_workspace

log = logging.getLogger("kgent.service")

OPEN_WAIT = (
    10.0  # seconds a session request waits for a new run to write its session (a git snapshot comes first)
)


class Service(RunService):
    """The service of the wire fronts: runs (RunService), and what their method table (service/wire/methods.py)
    calls besides."""

    def initialize(self, params: Any) -> dict[str, Any]:
        version, self.settings = parse_initialize(params, self.settings)
        result = initialize_result(version, self.settings, self.env)
        if self._extensions is not None or configured(Path.cwd(), self.env):
            ext = self.extensions()
            caps = result["capabilities"]
            caps["extensions"] = ext.listing(Path.cwd())
            caps["providers"] = ext.provider_names()
            caps["models"].update(
                {p.name: list(p.models) for p in ext.registry.all_providers() if p.extension != "kgent"}
            )
            caps["tools"] += [
                {"name": t.tool.name, "kind": t.tool.kind, "readOnly": t.tool.read_only}
                for t in ext.project(Path.cwd()).registry.all_tools()
            ]
        return result

    async def list_rules(self, workspace: str) -> W.RulesResult:
        self._guard(workspace)
        return await rules.list_rules(self.rules, self.store, Path(normalize_workspace(workspace)))

    async def add_rule(self, p: W.RuleParams) -> W.AddRuleResult:
        self._guard(p.workspace)
        ws = Path(normalize_workspace(p.workspace))
        return await rules.add_rule(
            self.rules, self.store, p, ws, lambda sid: self.live_run_id(sid) is not None
        )

    async def remove_rule(self, p: W.RuleParams) -> W.RemoveRuleResult:
        self._guard(p.workspace)
        ws = Path(normalize_workspace(p.workspace))
        return await rules.remove_rule(
            self.rules, self.store, p, ws, lambda sid: self.live_run_id(sid) is not None
        )

    async def review(self, p: W.ReviewParams) -> W.ReviewResult:
        sid = p.session_id
        if sid is None:
            sid = self.run_sessions.get(p.run_id or "")
            if sid is None:
                raise ServiceError(
                    NOT_FOUND, f"no run {p.run_id!r} in this daemon: give its sessionId", "run_not_found"
                )
        await self._opened(session_id=sid)
        tree = await self.store.load(sid)
        self._guard(tree.info.workspace)
        runs: dict[str, list[dict[str, Any]]] = {}
        files = review_files(tree, p.run_id)
        fs = self._host_files(FileScope(sid)) or LocalFileOps()
        now = await current_starts(fs, Path(tree.info.workspace), files)
        for f in files:
            runs.setdefault(f.run_id, []).append(
                {
                    "path": f.path,
                    "absolutePath": str(Path(tree.info.workspace) / f.path),
                    "created": f.created,
                    "deleted": f.deleted,
                    "hunks": [
                        {
                            "id": h.id,
                            "status": f.status[h.id],
                            "oldStart": h.old_start,
                            "oldCount": len(h.old_lines),
                            "newStart": h.new_start,
                            "newCount": len(h.new_lines),
                            "currentStart": now.get(h.id),
                            "oldText": h.old_text,
                            "newText": h.new_text,
                        }
                        for h in f.hunks
                    ],
                }
            )
        return W.ReviewResult.model_validate(
            {
                "sessionId": sid,
                "workspace": tree.info.workspace,
                "runs": [{"runId": r, "files": files} for r, files in runs.items()],
            }
        )

    async def apply_review(self, p: W.ApplyReviewParams) -> W.ApplyReviewResult:
        sid = p.session_id
        doing = self.busy.get(sid)
        if doing is not None:
            raise ServiceError(CONFLICT, f"session {sid} is being {doing}", "session_busy")
        self.busy[sid] = "reviewed"  # no run starts meanwhile: it would not be told of the rejections
        try:
            tree = await self.store.load(sid)
            self._guard(tree.info.workspace)
            fs = self._host_files(FileScope(sid)) or LocalFileOps()
            outcomes, entry = await apply_review(tree, fs, p.accept, p.reject)
            how = None
            if entry is not None:
                if entry.data.get("note"):
                    how = "next_prompt"
                    live = self._kernel.live_run(sid) if self._kernel is not None else None
                    if live is not None:
                        with contextlib.suppress(RunStateError):
                            live.steer(str(entry.data["note"]))
                            entry, how = mark_told(entry), "run"
                await self.store.append(sid, [entry])
        finally:
            self.busy.pop(sid, None)
        return W.ApplyReviewResult.model_validate(
            {
                "results": [
                    {
                        k: v
                        for k, v in {
                            "hunkId": o.hunk_id,
                            "outcome": o.outcome,
                            "path": o.path,
                            "message": o.message,
                        }.items()
                        if v is not None
                    }
                    for o in outcomes
                ],
                "told": how,
            }
        )

    async def _opened(self, *, session_id: str | None = None, workspace: str | None = None) -> None:
        """Wait until the runs creating a session (`session_id`, or any in `workspace`) have written it: a new session
        is written by its run just after `agent/run` answers, and a client may ask for it at once."""
        waits = [
            h.opened.wait()
            for h in list(self.runs.values())
            if h.new_session_in is not None
            and not h.opened.is_set()
            and (h.session_id == session_id or h.new_session_in == workspace)
        ]
        if waits:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waits), OPEN_WAIT)

    async def sessions(self, workspace: str, query: str | None = None) -> W.SessionsResult:
        """The workspace's sessions; with a query, those whose title, id or prompts and answers hold every word of it
        (kgent.service.search: a session its title does not name is read)."""
        self._guard(workspace)
        ws = normalize_workspace(workspace)
        await self._opened(workspace=ws)
        infos = await self.store.list(ws)
        words = search.query_words(query)
        if words:
            found = []
            for info in infos:
                if search.named_by(info, words):
                    found.append(info)
                    continue
                try:
                    tree = await self.store.load(info.id)
                except KgentError as exc:  # a damaged session is not found by its text, the others still are
                    log.warning("session search skipped %s: %s", info.id, exc)
                    continue
                if search.holds(info, tree, words):
                    found.append(info)
            infos = found
        return W.SessionsResult.model_validate(
            {"sessions": [{**info.to_dict(), "liveRunId": self.live_run_id(info.id)} for info in infos]}
        )

    async def session(self, session_id: str, branch_only: bool) -> W.SessionResult:
        await self._opened(session_id=session_id)
        tree = await self.store.load(session_id)
        self._guard(tree.info.workspace)
        branch = tree.branch()
        data = tree_to_dict(tree)
        if branch_only:
            data["entries"] = [e.to_dict() for e in branch]
        data["branch"] = [e.id for e in branch]
        data["liveRunId"] = self.live_run_id(session_id)
        data["usage"] = stored_usage(tree, self.prices())
        data.update(loaded_resources(branch))
        return W.SessionResult.model_validate(data)

    async def tool_output(self, session_id: str, tool_call_id: str) -> W.ToolOutputResult:
        """All a call of the session printed (kgent.service.outputs): the output a command saved with the session,
        not the tail the model was shown. NOT_FOUND for a call the session does not hold (another session's)."""
        await self._opened(session_id=session_id)
        tree = await self.store.load(session_id)
        self._guard(tree.info.workspace)
        message = tool_result(tree, tool_call_id)
        if message is None:
            raise ServiceError(
                NOT_FOUND,
                f"no result of tool call {tool_call_id!r} in session {session_id} (a live call's is stored when its "
                "batch of calls ends)",
                "tool_call_not_found",
            )
        beside = getattr(self.store, "output_dir", None)
        text, truncated = full_output(message, beside(session_id) if beside is not None else None)
        return W.ToolOutputResult(text=text, truncated=truncated)

    async def fork(self, session_id: str, entry_id: str) -> W.ForkResult:
        self._check_idle(session_id)
        tree = await self.store.load(session_id)
        self._guard(tree.info.workspace)
        if entry_id not in tree.entries:
            raise ServiceError(NOT_FOUND, f"no entry {entry_id!r} in session {session_id}", "entry_not_found")
        self._check_idle(session_id)
        self.busy[session_id] = "forked"  # a run starting now would race the leaf record
        try:
            await self.store.set_leaf(session_id, entry_id)
        finally:
            self.busy.pop(session_id, None)
        return W.ForkResult(session_id=session_id, leaf_id=entry_id)

    async def copy_session(self, session_id: str, workspace: str | None = None) -> str:
        """A new session holding this one's active branch, for ACP's session/fork (which forks into a new session,
        where Kgent's `agent/fork` moves the leaf inside one): the same entries, the images they name copied with
        them; the original is left as it was. `workspace`: the new session's (default: the original's). Its id."""
        self._check_idle(session_id)
        tree = await self.store.load(session_id)
        self._guard(tree.info.workspace)
        target = normalize_workspace(workspace) if workspace else tree.info.workspace
        self._guard(target)
        branch = tree.branch()
        info = await self.store.create(workspace=target)
        for sha in dict.fromkeys(_image_blobs(branch)):
            await self.store.put_blob(info.id, await self.store.get_blob(session_id, sha))
        if branch:
            await self.store.append(info.id, branch)
        return info.id

    async def rewind(self, p: W.RewindParams) -> W.RewindResult:
        """Restore the files changed since a user message (through the client's buffers when it serves them) and
        move the leaf to just before it; on dryRun, only say what would happen (kgent.service.rewind)."""
        sid = p.session_id
        self._check_idle(sid)
        tree = await self.store.load(sid)
        self._guard(tree.info.workspace)
        self._check_idle(sid)
        self.busy[sid] = "rewound"  # no run starts meanwhile: it would write the files being restored
        try:
            fs = self._host_files(FileScope(sid)) or LocalFileOps()
            plan, files = await rewind_session(self.store, tree, p.entry_id, fs, dry_run=p.dry_run)
        except RewindError as exc:
            code = NOT_FOUND if exc.code == "entry_not_found" else INVALID_PARAMS
            raise ServiceError(code, exc.message, exc.code) from None
        finally:
            self.busy.pop(sid, None)
        return W.RewindResult.model_validate(result_dict(sid, plan, files, forked=not p.dry_run))

    async def rename_session(self, session_id: str, title: str) -> None:
        """Give the session a title (a `title` entry at its leaf); '' goes back to the derived one."""
        self._check_idle(session_id)
        tree = await self.store.load(session_id)
        self._guard(tree.info.workspace)
        self._check_idle(session_id)
        self.busy[session_id] = "renamed"  # a run starting now would race the entry at the leaf
        try:
            await self.store.append(session_id, [title_entry(tree.leaf_id, title.strip())])
        finally:
            self.busy.pop(session_id, None)

    async def delete_session(self, session_id: str) -> None:
        """Remove the session from the store; session_busy while a run (or another request) is on it."""
        self._check_idle(session_id)
        tree = await self.store.load(session_id)
        self._guard(tree.info.workspace)
        self._check_idle(session_id)
        self.busy[session_id] = "deleted"
        try:
            await self.store.delete(session_id)
        finally:
            self.busy.pop(session_id, None)

    async def compact(self, p: W.CompactParams) -> W.CompactResult:
        try:
            from kgent.context.compaction import compact_session
        except ImportError:  # pragma: no cover - a build without compaction
            raise ServiceError(
                CONFIG, "compaction is not available in this build", "compact_unavailable"
            ) from None
        self._check_idle(p.session_id)
        self._guard(
            (await self.store.load(p.session_id)).info.workspace
        )  # not found: before provider trouble
        provider = await self.providers.aget(self.provider_config(p.provider, p.model))
        self._check_idle(p.session_id)
        self.busy[p.session_id] = "compacted"
        try:
            # The runs' KernelConfig only if it exists: building it here would freeze settings.approvalTimeout
            # before the first run (protocol.md: it applies when given before the first run).
            result = await compact_session(
                self.store, provider, p.session_id, config=self._kernel_config, focus=p.instructions or None
            )
        finally:
            self.busy.pop(p.session_id, None)
        if result is None:
            return W.CompactResult(compacted=False, entry_id=None, tokens_before=None, tokens_after=None)
        return W.CompactResult(
            compacted=True,
            entry_id=result.entry.id,
            tokens_before=result.tokens_before,
            tokens_after=result.tokens_after,
        )

    async def command(self, p: W.CommandParams) -> W.CommandResult:
        """A slash command as typed: its action, and the server's answer to `/help`, `/cost`, `/model [id]` and
        `/mode [name]` (the last two set what the session's next runs use when a run names none). Raises
        ServiceError INVALID_PARAMS (`unknown_command`, `not_a_command`)."""
        call = invocation(p.text) if not p.text.startswith("//") else None
        if call is None:
            raise ServiceError(INVALID_PARAMS, f"not a slash command: {p.text[:40]!r}", "not_a_command")
        name, args = call
        sid = p.session_id
        tree = None
        if sid is not None:
            await self._opened(session_id=sid)
            tree = await self.store.load(sid)
            workspace = tree.info.workspace
        elif p.workspace is not None:
            workspace = normalize_workspace(p.workspace)
        else:
            raise ServiceError(
                INVALID_PARAMS, "agent/command needs a workspace or a sessionId", "invalid_params"
            )
        self._guard(workspace)
        listed = self.commands(workspace)
        own = builtin(name)
        if own is None:
            live = {c.name: c for c in listed if not c.shadowed}
            if name not in live:  # the same error as agent/run's, with close names
                expand(p.text, Path(workspace), self.env, tree=tree)
            return W.CommandResult(command=name, action="prompt", text="")
        chosen = self.choices.setdefault(sid, {}) if sid is not None else {}
        scope = "this session's next runs" if sid is not None else "the next run (a new session)"
        if name == "help":
            text = help_text(listed)
        elif name == "cost":
            if tree is None:
                text = "No session yet: nothing spent."
            else:
                usage = stored_usage(tree, self.prices())
                text = f"This session so far: {usage['text']}"
                if "cost" not in usage:
                    text += " (no price known for some model: cost not estimated)"
        elif name == "mode":
            if args:
                mode = normalize_mode(args)
                if mode is None:
                    raise ServiceError(
                        INVALID_PARAMS, f"unknown mode {args!r}; one of {', '.join(MODES)}", "unknown_mode"
                    )
                chosen["mode"] = mode
            mode = chosen.get("mode") or default_mode(self.settings, self.env)
            text = f"Mode for {scope}: {mode} — {MODE_DESCRIPTIONS.get(mode, '')}"
            if not args:
                text += f"\nModes: {', '.join(MODES)} (/mode NAME to change)"
            return W.CommandResult(command=name, action="answer", text=text, mode=mode)
        elif name == "model":
            if args:
                chosen["model"] = args
            provider = default_provider(self.settings, self.env)
            model = (
                chosen.get("model")
                or self.settings.model
                or self.env.get("KGENT_MODEL")
                or DEFAULT_MODELS.get(provider, "")
            )
            text = f"Model for {scope}: {model} (provider {provider})"
            if not args:
                text += "\n/model ID to change it (any model id the provider serves)"
            return W.CommandResult(command=name, action="answer", text=text, model=model)
        elif own.action == "newSession":
            text = "Your next prompt starts a new session (this one stays in History)."
        else:
            text = ""
        return W.CommandResult(command=name, action=own.action, text=text)

    async def export(self, p: W.ExportParams) -> W.ExportResult:
        """The session's active branch as a transcript (kgent.service.export), redacted."""
        await self._opened(session_id=p.session_id)
        tree = await self.store.load(p.session_id)
        self._guard(tree.info.workspace)
        text = await export_session(self.store, p.session_id, p.format, prices=self.prices())
        mime = {"md": "text/markdown", "html": "text/html", "json": "application/json"}[p.format]
        return W.ExportResult(text=text, mime_type=mime, filename=f"kgent-{p.session_id}.{p.format}")


def _image_blobs(entries: list[SessionEntry]) -> list[str]:
    """The sha256 of every image the entries' user messages attached (their bytes are blobs beside the session)."""
    out: list[str] = []
    for entry in entries:
        message = entry.data.get("message") if entry.type == "message" else None
        if isinstance(message, dict) and message.get("role") == "user":
            out += [
                i["sha256"] for i in message.get("images") or () if isinstance(i, dict) and i.get("sha256")
            ]
    return out
