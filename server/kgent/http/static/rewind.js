// Restore checkpoint: beside a user message's Fork button. Asks the daemon what rewinding to the message would do
// (agent/rewind with dryRun), shows it — the files restored, the conflicts, and outside git the shell commands whose
// effects cannot be restored — in the page's own dialog (Enter restores, Escape cancels; never window.confirm, which
// a browser may suppress and which blocks the page), then rewinds: the files come back and the conversation forks
// just before the message, whose text goes back into the composer.

import { api } from "./api.js";
import { button, el } from "./render.js";

const $ = (id) => document.getElementById(id);

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

// The plan in the rewind dialog: the question, then a line per file (a conflict or what cannot be restored marked) and
// the notes. Resolves true when the person confirms (the Restore button, or Enter anywhere but on Cancel), false on
// Cancel or Escape.
function confirmRewind(result) {
  const [question, , ...lines] = describeRewind(result).split("\n");
  $("rewind-question").textContent = question;
  const plan = $("rewind-plan");
  plan.replaceChildren();
  for (const line of lines.filter((l) => l)) {
    const li = el("li", "", line);
    if (/^(CONFLICT|CANNOT)/.test(line)) li.className = "warn";
    plan.append(li);
  }
  const dialog = $("rewind-dialog");
  return new Promise((resolve) => {
    const done = (ok) => {
      dialog.onclose = null;
      if (dialog.open) dialog.close();
      resolve(ok);
    };
    $("rewind-confirm").onclick = () => done(true);
    $("rewind-cancel").onclick = () => done(false);
    dialog.onkeydown = (e) => {
      if (e.key === "Enter" && e.target !== $("rewind-cancel")) {
        e.preventDefault();
        done(true);
      }
    };
    dialog.onclose = () => done(false); // Escape (the dialog's own cancel)
    dialog.showModal();
    $("rewind-confirm").focus();
  });
}

// ctx: {sessionId(), reopen(), notice(text), compose(text), busy()}
export function rewindButton(node, entry, after, ctx) {
  if (!entry?.parentId || node.querySelector(".rewind")) return;
  const bt = button("Restore checkpoint", () => rewindTo(entry.id, ctx), "rewind");
  bt.title = "Bring back the files as they were before this message, and continue the conversation from there";
  after.after(bt);
}

// `/rewind`: the branch's prompts, latest first, each opening the flow its Restore checkpoint button opens.
export async function rewindPicker(ctx) {
  const sessionId = ctx.sessionId();
  if (!sessionId) {
    ctx.notice("Nothing to rewind: no session is open.");
    return;
  }
  let session;
  try {
    session = await api("GET", `/api/sessions/${encodeURIComponent(sessionId)}`);
  } catch (err) {
    ctx.notice(`rewind failed: ${err.message}`);
    return;
  }
  const onBranch = new Set(session.branch);
  const prompts = session.entries
    .filter((e) => onBranch.has(e.id) && e.parentId && e.type === "message" && e.message.role === "user")
    .reverse();
  if (!prompts.length) {
    ctx.notice("Nothing to rewind: this session has no message yet.");
    return;
  }
  const box = ctx.notice("Restore a checkpoint: the files and the conversation go back to before the message picked.");
  box.classList.add("rewind-picker");
  const list = el("div", "rewind-choices");
  for (const e of prompts) {
    const text = (e.typed || e.message.text).split("\n")[0].slice(0, 60) || "(image)";
    const bt = button(text, () => {
      box.remove();
      rewindTo(e.id, ctx);
    });
    bt.title = `Restore the checkpoint before “${text}”`;
    list.append(bt);
  }
  list.append(button("Cancel", () => box.remove(), "cancel"));
  box.append(list);
  list.querySelector("button").focus();
}

async function rewindTo(entryId, ctx) {
  if (ctx.busy()) {
    ctx.notice("a run is live: stop it before restoring a checkpoint");
    return;
  }
  const path = `/api/sessions/${encodeURIComponent(ctx.sessionId())}/rewind`;
  try {
    const plan = await api("POST", path, { entryId, dryRun: true });
    if (!(await confirmRewind(plan))) {
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
