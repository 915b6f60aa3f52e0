// A stored session (`agent/session`) as panel items, for a resume or a fork: what the live events showed, read back
// from the session's entries. Editor-agnostic (no `vscode`).

import type { Attachment, NoteItem, PanelItem, ToolItem, UserItem } from "./panelItems";
import { cancelledResult, oneLine } from "./panelItems";
import type * as P from "./protocol";

const RESOURCE = /\n\n<resource uri="([^"]*)">\n([\s\S]*?)\n<\/resource>/g;

/** A user message as the daemon stores it (resource blocks joined to the text, protocol.md) split back into the text
 * the person wrote and its attachments. */
export function splitAttachments(message: string): { text: string; attachments: Attachment[] } {
  const attachments: Attachment[] = [];
  const text = message.replace(RESOURCE, (_all, uri: string, body: string) => {
    attachments.push({ uri, name: decodeURIComponent(uri.replace(/^.*\//, "")), text: body });
    return "";
  });
  return { text, attachments };
}

export function userItem(
  id: string,
  runId: string,
  message: string,
  source: string,
  sessionId: string,
  entryId: string | undefined,
  images?: P.ImageRef[] | null,
): UserItem {
  const item: UserItem = { type: "user", id, rev: 0, runId, ...splitAttachments(message), source, sessionId, entryId };
  if (images) item.images = images;
  return item;
}

/** A tool call read back from a session (no live events): its title from the name and arguments. */
function storedToolCall(id: string, call: P.ToolCallRef): ToolItem {
  const args = call.arguments;
  const command = typeof args.command === "string" ? args.command : undefined;
  const path = typeof args.path === "string" ? args.path : undefined;
  const title =
    command !== undefined
      ? `Run ${oneLine(command, 80)}`
      : path !== undefined
        ? `${call.name[0].toUpperCase()}${call.name.slice(1)} ${path}`
        : call.name;
  return {
    type: "tool",
    id,
    rev: 0,
    runId: "",
    toolCallId: call.id,
    name: call.name,
    kind: "other",
    title,
    command,
    path,
    status: "pending",
    output: "",
    isError: false,
  };
}

function note(id: string, text: string, severity: "info" | "error" = "info"): NoteItem {
  return { type: "note", id, rev: 0, runId: "", text, severity };
}

/** The items of a session's active branch, in order; `nextId(prefix)` gives each a new id. */
export function storedItems(session: P.SessionResult, nextId: (prefix: string) => string): PanelItem[] {
  const out: PanelItem[] = [];
  const onBranch = new Set(session.branch);
  const tools = new Map<string, ToolItem>();
  for (const entry of session.entries) {
    if (!onBranch.has(entry.id)) continue;
    if (entry.type === "compaction")
      out.push(note(nextId("note"), "Earlier messages were summarised here to save context (compaction)."));
    const m = entry.message;
    if (entry.type !== "message" || m === undefined || m === null) continue;
    switch (m.role) {
      case "user": {
        const item = userItem(nextId("user"), "", m.text, "prompt", session.sessionId, entry.id, m.images);
        // A slash command's prompt: the entry keeps what was typed (`/review`) beside its expansion.
        if (typeof entry.typed === "string" && entry.typed !== "") item.text = entry.typed;
        out.push(item);
        break;
      }
      case "assistant":
        if (m.thinking) out.push({ type: "thinking", id: nextId("thinking"), rev: 0, runId: "", text: m.thinking });
        if (m.text) out.push({ type: "assistant", id: nextId("assistant"), rev: 0, runId: "", text: m.text });
        for (const call of m.toolCalls ?? []) {
          const t = storedToolCall(nextId("tool"), call);
          tools.set(call.id, t);
          out.push(t);
        }
        if (m.error) out.push(note(nextId("note"), `The model call failed: ${m.error}`, "error"));
        break;
      case "tool": {
        const t = tools.get(m.toolCallId);
        if (t === undefined) break;
        t.status = m.isError ? "failed" : "completed";
        t.isError = m.isError;
        t.output = m.content;
        if (m.isError && cancelledResult(m.content)) t.cancelled = true;
        const diff = m.details?.diff;
        if (typeof diff === "string" && diff !== "") t.diff = diff;
        break;
      }
      case "summary":
        out.push(note(nextId("note"), `Summary of the earlier conversation: ${m.text}`));
        break;
    }
  }
  for (const t of tools.values()) {
    if (t.status === "pending") {
      t.status = "failed";
      t.output = "(no result was recorded: the run ended first)";
    }
  }
  for (const w of session.warnings) out.push(note(nextId("note"), `While loading the session: ${w}`, "error"));
  return out;
}
