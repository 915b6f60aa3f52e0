// `@file` mentions in a panel message: `@src/app.py` or `@src/app.py#L10-20` attach that file (or those lines) as a
// resource block. Editor-agnostic: the caller reads the files.

import * as path from "node:path";
import { pathToFileURL } from "node:url";
import type { ContentBlock } from "./protocol";

export interface Mention {
  path: string;
  startLine?: number;
  endLine?: number;
}

const MENTION = /(?:^|\s)@([^\s@#]+)(?:#L(\d+)(?:-L?(\d+))?)?/g;

export function parseMentions(text: string): Mention[] {
  const out: Mention[] = [];
  for (const m of text.matchAll(MENTION)) {
    const mention: Mention = { path: m[1].replace(/[.,;:!?)]+$/, "") };
    if (m[2] !== undefined) {
      mention.startLine = Number(m[2]);
      mention.endLine = Number(m[3] ?? m[2]);
    }
    if (!out.some((o) => o.path === mention.path && o.startLine === mention.startLine)) out.push(mention);
  }
  return out;
}

/** The message as content blocks: the text, then one resource per mention that names a readable file. */
export async function promptWithMentions(
  text: string,
  workspace: string,
  read: (absPath: string) => Promise<string | undefined>,
): Promise<string | ContentBlock[]> {
  const blocks: ContentBlock[] = [{ type: "text", text }];
  for (const m of parseMentions(text)) {
    const abs = path.resolve(workspace, m.path);
    const content = await read(abs);
    if (content === undefined) continue;
    let body = content;
    let uri = pathToFileURL(abs).href;
    if (m.startLine !== undefined && m.endLine !== undefined) {
      body = content
        .split("\n")
        .slice(m.startLine - 1, m.endLine)
        .join("\n");
      uri = `${uri}#L${m.startLine}-L${m.endLine}`;
    }
    blocks.push({ type: "resource", resource: { uri, text: body } });
  }
  return blocks.length === 1 ? text : blocks;
}

/** The mention for a selection (lines are 1-based), e.g. `@src/app.py#L3-9`, or the whole file. */
export function mentionFor(relPath: string, startLine?: number, endLine?: number): string {
  const p = relPath.split(path.sep).join("/");
  return startLine === undefined ? `@${p}` : `@${p}#L${startLine}-${endLine ?? startLine}`;
}
