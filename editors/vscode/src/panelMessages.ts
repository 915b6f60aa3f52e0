// The messages between the Kgent panel's page (webview/main.ts) and the extension (ui/panel.ts). No `vscode`, no DOM.

import { parseImages, type PastedImage } from "./images";
import type { PanelState } from "./panelItems";

/** Extension → page. */
export type ToPage =
  | { type: "state"; state: PanelState }
  | { type: "focusInput" }
  | { type: "insert"; text: string }
  /** `append`: after what the input holds (a blank line between), not in its place. */
  | { type: "setInput"; text: string; images?: PastedImage[]; append?: boolean }
  | { type: "commands"; commands: SlashCommand[] };

/** A slash command the composer offers: an entry of `agent/commands`' menu, shown as it is. */
export interface SlashCommand {
  name: string;
  description: string;
  argumentHint?: string;
}

/** Page → extension. */
export type FromPage =
  | { type: "ready" }
  | { type: "send"; text: string; as?: "steer" | "followUp"; images?: PastedImage[] }
  | { type: "stop"; runId?: string }
  | { type: "answer"; requestId: string; optionId: string }
  | { type: "openDiff"; requestId: string }
  | { type: "acceptMine"; requestId: string }
  | { type: "openFile"; workspace: string; path: string }
  | { type: "showPatch"; runId: string }
  | { type: "review"; runId: string; sessionId: string }
  | { type: "setMode"; mode: string }
  | { type: "setModel"; model: string }
  | { type: "newConversation" }
  | { type: "history" }
  | { type: "resume"; sessionId: string; title: string }
  | { type: "fork"; sessionId: string; title: string }
  | { type: "forkAt"; sessionId: string; entryId: string }
  | { type: "rewindAt"; sessionId: string; entryId: string }
  | { type: "clearQueue"; runId: string }
  | { type: "attachSelection" }
  | { type: "listCommands" };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

/** Validate a message from the page (it is untrusted input as far as the extension is concerned). */
export function parseFromPage(m: unknown): FromPage | undefined {
  if (!isRecord(m) || typeof m.type !== "string") return undefined;
  const s = (k: string): string | undefined => (typeof m[k] === "string" ? (m[k] as string) : undefined);
  switch (m.type) {
    case "ready":
    case "newConversation":
    case "history":
    case "attachSelection":
    case "listCommands":
      return { type: m.type };
    case "send": {
      const text = s("text");
      if (text === undefined) return undefined;
      const as = m.as === "steer" || m.as === "followUp" ? m.as : undefined;
      const images = m.images === undefined ? undefined : parseImages(m.images);
      if (m.images !== undefined && (images === undefined || as !== undefined)) return undefined; // a run's prompt only
      if (images !== undefined) return { type: "send", text, images };
      return as === undefined ? { type: "send", text } : { type: "send", text, as };
    }
    case "stop":
      return { type: "stop", runId: s("runId") };
    case "answer": {
      const requestId = s("requestId");
      const optionId = s("optionId");
      return requestId !== undefined && optionId !== undefined ? { type: "answer", requestId, optionId } : undefined;
    }
    case "openDiff":
    case "acceptMine": {
      const requestId = s("requestId");
      return requestId !== undefined ? { type: m.type, requestId } : undefined;
    }
    case "openFile": {
      const workspace = s("workspace");
      const p = s("path");
      return workspace !== undefined && p !== undefined ? { type: "openFile", workspace, path: p } : undefined;
    }
    case "review": {
      const runId = s("runId");
      const sessionId = s("sessionId");
      return runId !== undefined && sessionId !== undefined ? { type: "review", runId, sessionId } : undefined;
    }
    case "showPatch": {
      const runId = s("runId");
      return runId !== undefined ? { type: "showPatch", runId } : undefined;
    }
    case "setMode": {
      const mode = s("mode");
      return mode !== undefined ? { type: "setMode", mode } : undefined;
    }
    case "setModel": {
      const model = s("model");
      return model !== undefined ? { type: "setModel", model } : undefined;
    }
    case "resume": {
      const sessionId = s("sessionId");
      return sessionId !== undefined ? { type: "resume", sessionId, title: s("title") ?? sessionId } : undefined;
    }
    case "fork": {
      const sessionId = s("sessionId");
      return sessionId !== undefined ? { type: "fork", sessionId, title: s("title") ?? sessionId } : undefined;
    }
    case "forkAt":
    case "rewindAt": {
      const sessionId = s("sessionId");
      const entryId = s("entryId");
      return sessionId !== undefined && entryId !== undefined ? { type: m.type, sessionId, entryId } : undefined;
    }
    case "clearQueue": {
      const runId = s("runId");
      return runId !== undefined ? { type: "clearQueue", runId } : undefined;
    }
    default:
      return undefined;
  }
}
