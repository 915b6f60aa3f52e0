// Restore checkpoint, editor-agnostic: what a rewind (`agent/rewind`) will do or did, in words for the person. The
// dry run's answer becomes the confirmation's text; the rewind's answer the note left in the panel.

import type * as P from "./protocol";
import { firstLine } from "./transcript";

const VERB: Record<string, string | undefined> = {
  restored: "restore",
  conflict: "conflict — left as it is",
  unchanged: "unchanged",
  unrestorable: "cannot restore",
};

/** The confirmation: a question naming the message, and a detail listing each file and every note. */
export function confirmation(plan: P.RewindResult): { message: string; detail: string } {
  const lines = plan.files.map((f) => `${VERB[f.outcome] ?? f.outcome}: ${f.path}${f.reason ? ` (${f.reason})` : ""}`);
  if (lines.length === 0) lines.push("No file to restore.");
  for (const n of plan.notes) lines.push("", `Not restored: ${n}`);
  return {
    message: `Restore the files to before “${firstLine(plan.prompt, 60)}” and continue the conversation from there?`,
    detail: lines.join("\n"),
  };
}

/** The note after a rewind: how many files came back, which conflicts were left alone. */
export function outcomeNote(done: P.RewindResult): string {
  const count = (o: P.RewindOutcome): number => done.files.filter((f) => f.outcome === o).length;
  const conflicts = done.files.filter((f) => f.outcome === "conflict").map((f) => f.path);
  const unrestorable = done.files.filter((f) => f.outcome === "unrestorable").map((f) => f.path);
  let note = `Restored the checkpoint before “${firstLine(done.prompt, 60)}”: ${count("restored")} file(s) restored`;
  if (conflicts.length > 0) note += `; changed since, left as they are: ${conflicts.join(", ")}`;
  if (unrestorable.length > 0) note += `; could not be restored: ${unrestorable.join(", ")}`;
  if (done.notes.length > 0) note += `; shell commands' effects not restored (outside git)`;
  return `${note}. Edit the message below and send it to continue on a new branch.`;
}
