// The messages between the Kgent panel's page (webview/main.ts) and the extension (ui/panel.ts). No `vscode`, no DOM.

import { parseImages, type PastedImage } from "./images";
import type { PanelItem, PanelState } from "./panelItems";

/** Extension → page. */
export type ToPage =
  /** The whole state: the first message to a page (it was loaded, or loaded again). */
  | { type: "state"; state: PanelState }
  /** What changed since the page's state (PageMirror makes it, applyPatch applies it). */
  | { type: "patch"; patch: PanelPatch }
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

/**
 * What changed in the panel's state since the last message to its page. Posting the whole state at every update
 * (20 a second while an answer streams) costs the length of the transcript each time: quadratic over a long answer
 * or a long session (issue 37). A patch costs what changed: one answer's new text, the cards that changed.
 */
export interface PanelPatch {
  /** Items gone (an answered approval folded into its tool card, a cleared conversation), by id. */
  removed?: string[];
  /** Items new (they follow the others, in this order) or changed (each replaces the item of its id, in place). */
  items?: PanelItem[];
  /** Answers and thinking blocks whose text only grew: the text to add, and the item's rev after it. */
  appended?: { id: string; rev: number; append: string }[];
  /** Every field but the items, whole, when any of them changed (they are small: runs, pickers, session line). */
  rest?: Omit<PanelState, "items">;
}

/** What was posted of an item: the object (the model changes it in place), its rev, and its text's length. */
interface Posted {
  item: PanelItem;
  rev: number;
  textLength: number;
}

/**
 * The extension's record of what its page holds, to post only what changed since (ui/panel.ts). An item changed
 * when the model gave it a new rev (PanelModel bumps it at every change) or put another object in its place: no
 * item is compared field by field. An answer or thinking block changes only by growing (PanelModel appends each
 * delta to it), so a new rev of the same one posts only its new text.
 */
export class PageMirror {
  /** What the page holds, by id in its order; undefined: nothing known (a new page), the next message is whole. */
  private posted: Map<string, Posted> | undefined;
  private restJson = "";

  /** The page is new (loaded, reloaded, recreated): the next message is the whole state. */
  reset(): void {
    this.posted = undefined;
  }

  /** The message that brings the page to `state`, recorded as posted; undefined when nothing changed. */
  next(state: PanelState): ToPage | undefined {
    const { items, ...rest } = state;
    const restJson = JSON.stringify(rest);
    const before = this.posted;
    const beforeRest = this.restJson;
    this.posted = new Map(
      items.map((item) => [item.id, { item, rev: item.rev, textLength: isText(item) ? item.text.length : 0 }]),
    );
    this.restJson = restJson;
    if (before === undefined || !appendedOnly(before, items)) return { type: "state", state };
    const patch: PanelPatch = {};
    const removed = [...before.keys()].filter((id) => !this.posted?.has(id));
    if (removed.length > 0) patch.removed = removed;
    for (const item of items) {
      const was = before.get(item.id);
      if (was?.item === item && was.rev === item.rev) continue;
      if (was?.item === item && isText(item) && item.text.length >= was.textLength) {
        patch.appended ??= [];
        patch.appended.push({ id: item.id, rev: item.rev, append: item.text.slice(was.textLength) });
      } else {
        patch.items ??= [];
        patch.items.push(item);
      }
    }
    if (restJson !== beforeRest) patch.rest = rest;
    return Object.keys(patch).length === 0 ? undefined : { type: "patch", patch };
  }
}

function isText(item: PanelItem): item is Extract<PanelItem, { type: "assistant" | "thinking" }> {
  return item.type === "assistant" || item.type === "thinking";
}

/**
 * Whether `items` are the items `before` lists (less the removed ones), in their order, then new ones only: where
 * a patch puts them on the page. The model only adds items at the end; anything else is posted as the whole state.
 */
function appendedOnly(before: Map<string, Posted>, items: PanelItem[]): boolean {
  const ids = new Set(items.map((i) => i.id));
  const kept = [...before.keys()].filter((id) => ids.has(id));
  return items.every((item, i) => (i < kept.length ? item.id === kept[i] : !before.has(item.id)));
}

/**
 * The page's state after `patch` (the page's copy of the state is its own: changed in place where it is cheap). An
 * answer's text grows by the patch's new text alone, so a page receives each byte of it once.
 */
export function applyPatch(state: PanelState, patch: PanelPatch): PanelState {
  const gone = new Set(patch.removed);
  const items = gone.size === 0 ? state.items : state.items.filter((i) => !gone.has(i.id));
  if (patch.items !== undefined || patch.appended !== undefined) {
    const at = new Map(items.map((item, i) => [item.id, i]));
    for (const item of patch.items ?? []) {
      const i = at.get(item.id);
      if (i !== undefined) items[i] = item;
      else at.set(item.id, items.push(item) - 1);
    }
    for (const a of patch.appended ?? []) {
      const i = at.get(a.id);
      const item = i === undefined ? undefined : items[i];
      if (i !== undefined && item !== undefined && isText(item))
        items[i] = { ...item, text: item.text + a.append, rev: a.rev };
    }
  }
  return patch.rest !== undefined ? { ...patch.rest, items } : { ...state, items };
}

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
