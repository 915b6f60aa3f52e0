# Concept: approve with changes — write the user's version of a proposed write or edit instead of the proposal.
"""`write_user_version`: the text a person approved in place of the model's proposal goes to the file (through the
run's FileOps, so a host-owned buffer takes it like any edit), only over the text the approval showed; the result
tells the model what the user changed, as a diff from its proposal."""

from __future__ import annotations

from kgent.changes.diffs import first_changed_line, unified_diff
from kgent.files.paths import PathError, resolve
from kgent.tools.base import FileChangePreview, ToolContext, ToolOutput, error_output

_BOM = "\ufeff"


def _plain(text: str) -> str:
    """A text as a preview shows it: no BOM, LF line endings."""
    return text.removeprefix(_BOM).replace("\r\n", "\n")


def _encoded(text: str, current: str | None, normalized: bool) -> bytes:
    """What goes to disk. For a preview of normalized text, the file's BOM and line endings come back."""
    if normalized and current is not None:
        body = text.replace("\r\n", "\n")
        first = current.find("\n")
        if first > 0 and current[first - 1] == "\r":
            body = body.replace("\n", "\r\n")
        if current.startswith(_BOM):
            body = _BOM + body.removeprefix(_BOM)
        return body.encode("utf-8", "surrogateescape")
    return text.encode("utf-8", "surrogatepass")


def user_changes_message(rel: str, proposed: str, written: str) -> str:
    """What the model reads: the user's changes to its proposal, and that they are to be kept."""
    change = unified_diff(rel, proposed, written)
    return (
        f"The user changed your proposed change to {rel} before approving it; {rel} now holds their version, "
        "not yours. Keep their changes: do not change them back. What the user changed (a diff from your "
        f"proposal to what was written):\n{change}"
    )


async def write_user_version(preview: FileChangePreview, text: str, ctx: ToolContext) -> ToolOutput:
    """Write `text` (the whole file) where `preview` proposed its `new_text`, if the file still reads as the
    preview's `old_text` (None: absent); otherwise a conflict error and nothing is written."""
    try:
        path = resolve(ctx.workspace, preview.path, allow_outside=ctx.allow_outside)
    except PathError as e:
        return error_output(e.message)
    try:
        if await ctx.fs.is_dir(path.abs):
            return error_output(f"Path is a directory: {path.rel}")
        exists = await ctx.fs.exists(path.abs)
        current = (await ctx.fs.read_bytes(path.abs)).decode("utf-8", "surrogateescape") if exists else None
    except OSError as e:
        return error_output(f"Cannot read {path.rel}: {e.strerror or e}")
    expected = preview.old_text
    if (current is None) != (expected is None) or (
        current is not None and expected is not None and _plain(current) != _plain(expected)
    ):
        return error_output(
            f"conflict: {path.rel} changed after the approval was shown, so the user's version was not written "
            "and the file is as it was. Read it again before changing it."
        )
    data = _encoded(text, current, preview.normalized)
    try:
        if ctx.changes is not None:
            await ctx.changes.record_before(path.abs, ctx.fs)
        await ctx.fs.write_bytes_atomic(path.abs, data)
    except OSError as e:
        return error_output(f"Cannot write {path.rel}: {e.strerror or e}")
    before = None if current is None else _plain(current)
    after = _plain(text)
    details: dict[str, object] = {
        "path": path.rel,
        "diff": unified_diff(path.rel, before, after),
        "userEdited": True,
        "userChanges": unified_diff(path.rel, _plain(preview.new_text), after),
    }
    line = first_changed_line(before or "", after)
    if line is not None:
        details["firstChangedLine"] = line
    return ToolOutput(
        content=user_changes_message(path.rel, _plain(preview.new_text), after), details=dict(details)
    )
