// Restore checkpoint: beside a user message's Fork button. Asks the daemon what rewinding to the message would do
// (agent/rewind with dryRun), shows it — the files restored, the conflicts, and outside git the shell commands whose
// effects cannot be restored — in a confirm dialog, then rewinds: the files come back and the conversation forks
// just before the message, whose text goes back into the composer.

import { api } from "./api.js";
import { button } from "./render.js";

const VERB = {
  restored: "restore",
  conflict: "CONFLICT (left as it is)",
  unchanged: "unchanged",
  unrestorable: "CANNOT restore",
};

export function describeRewind(result) {
  const lines = [
    `Restore the files to before “${result.prompt.split("\n")[0].slice(0, 60)}” and fork the conversation there?`,
    "",
  ];
  for (const f of result.files) lines.push(`${VERB[f.outcome]}: ${f.path}${f.reason ? ` — ${f.reason}` : ""}`);
  if (!result.files.length) lines.push("No file to restore.");
  for (const n of result.notes) lines.push("", `Note: ${n}`);
  return lines.join("\n");
}

// ctx: {sessionId(), reopen(), notice(text), compose(text), busy()}
export function rewindButton(node, entry, after, ctx) {
  if (!entry?.parentId || node.querySelector(".rewind")) return;
  const bt = button("Restore checkpoint", () => rewindTo(entry.id, ctx), "rewind");
  bt.title = "Bring back the files as they were before this message, and continue the conversation from there";
  after.after(bt);
}

async function rewindTo(entryId, ctx) {
  if (ctx.busy()) {
    ctx.notice("a run is live: stop it before restoring a checkpoint");
    return;
  }
  const path = `/api/sessions/${encodeURIComponent(ctx.sessionId())}/rewind`;
  try {
    const plan = await api("POST", path, { entryId, dryRun: true });
    if (!window.confirm(describeRewind(plan))) {
      ctx.notice("Checkpoint not restored: nothing changed.");
      return;
    }
    const done = await api("POST", path, { entryId });
    await ctx.reopen();
    const count = (o) => done.files.filter((f) => f.outcome === o).length;
    const conflicts = done.files.filter((f) => f.outcome === "conflict").map((f) => f.path);
    ctx.notice(
      `Checkpoint restored: ${count("restored")} file(s) restored` +
        (conflicts.length ? `, conflicts left as they are: ${conflicts.join(", ")}` : "") +
        ". Your next prompt continues from before that message.",
    );
    ctx.compose(done.prompt);
  } catch (err) {
    ctx.notice(`restore failed: ${err.message}`);
  }
}
