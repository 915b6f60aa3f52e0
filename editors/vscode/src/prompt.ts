// Prompt content for `agent/run`, and small formatting helpers. Editor-agnostic.

import type { ContentBlock } from "./protocol";

export type PromptContext =
  | { kind: "selection"; fileUri: string; relPath: string; startLine: number; endLine: number; text: string }
  | { kind: "file"; fileUri: string; relPath: string /** set when the editor holds unsaved changes */; text?: string };

/** The user's text plus the chosen context, as protocol content blocks (a plain string without context). */
export function buildPrompt(text: string, context?: PromptContext): string | ContentBlock[] {
  if (context === undefined) return text;
  const blocks: ContentBlock[] = [{ type: "text", text }];
  if (context.kind === "selection") {
    blocks.push({
      type: "resource",
      resource: { uri: `${context.fileUri}#L${context.startLine}-L${context.endLine}`, text: context.text },
    });
  } else if (context.text !== undefined) {
    blocks.push({ type: "resource", resource: { uri: context.fileUri, text: context.text } });
  } else {
    blocks.push({ type: "resource_link", uri: context.fileUri, name: context.relPath });
  }
  return blocks;
}

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", else the date. */
export function relativeTime(iso: string, now: Date = new Date()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.max(0, Math.round((now.getTime() - t) / 1000));
  if (s < 45) return "just now";
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 24) return `${h} h ago`;
  const d = Math.round(h / 24);
  if (d === 1) return "yesterday";
  if (d < 14) return `${d} days ago`;
  return new Date(t).toISOString().slice(0, 10);
}

export function localTime(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const d = new Date(t);
  const pad = (n: number): string => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
