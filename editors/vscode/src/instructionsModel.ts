// What a session's context loaded (agent/session's `instructions` and `skills`), as pickable items: editor-agnostic.

import type { SessionResult } from "./protocol";

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
