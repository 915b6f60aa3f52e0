// What a session's context loaded (agent/session's `instructions` and `skills`), as pickable items: editor-agnostic.

import type { LoadedFile, SessionResult } from "./protocol";

export interface LoadedItem {
  label: string;
  description: string;
  path: string;
}

const SOURCES: Record<string, string> = { user: "yours", project: "project root", directory: "directory" };

/** Instruction files first (general → specific, as the daemon orders them), then skills. */
export function loadedItems(session: Pick<SessionResult, "instructions" | "skills">): LoadedItem[] {
  const items: LoadedItem[] = [];
  for (const f of session.instructions ?? []) {
    const notes = [SOURCES[f.source] ?? f.source];
    if (f.change === "changed") notes.push("re-read");
    if (f.truncated === true) notes.push("cut at 32 KiB");
    items.push({ label: f.path, description: notes.join(", "), path: f.path });
  }
  for (const s of session.skills ?? [])
    items.push({ label: `skill ${s.name}`, description: s.description, path: s.path });
  return items;
}

const WHERE: Record<string, string> = { user: "yours", project: "the project's", directory: "its directory's" };

/** The panel's line for an `instructions` event: which files entered the model's context (paths from the workspace). */
export function instructionsNote(files: LoadedFile[], workspace: string): string {
  const rel = (p: string): string =>
    workspace !== "" && p.startsWith(`${workspace.replace(/\/$/, "")}/`)
      ? p.slice(workspace.replace(/\/$/, "").length + 1)
      : p;
  const parts = files.map((f) => {
    const what = `${rel(f.path)} (${WHERE[f.source] ?? f.source})`;
    if (f.change === "removed") return `${what} is gone: the model was told`;
    const how = f.change === "changed" ? "read again" : "read";
    return `${what} ${how}${f.truncated === true ? ", its first 32 KiB" : ""}`;
  });
  return `Instructions: ${parts.join("; ")}. Kgent: Open Instructions shows them.`;
}
