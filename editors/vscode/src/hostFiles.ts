// Host-owned files (protocol.md § Host-owned files): the editor serves its open buffers to the daemon, which asks for
// them with `agent/readTextFile`, `agent/writeTextFile` and `agent/saveFiles`. Editor-agnostic: the editor side is a
// `FileHost` (ui/buffers.ts in VS Code; a map of buffers in the tests).

import type { MessageConnection } from "vscode-jsonrpc/node";
import * as P from "./protocol";

/** What an editor does with its open buffers when the daemon asks. Throwing answers an error: the daemon then uses
 * the disk and says so in the tool's result (never a lost edit). */
export interface FileHost {
  /** The buffer's text, or `null` when the file is not open (the daemon reads the disk). */
  read(params: P.ReadTextFileParams): Promise<string | null>;
  /** Put `content` into the open buffer as one undoable change, unsaved: `true`; not open: `false` (disk). */
  write(params: P.WriteTextFileParams): Promise<boolean>;
  /** Save these buffers (before a shell command reads the disk); the paths saved. */
  save(params: P.SaveFilesParams): Promise<string[]>;
}

/** What `initialize` declares for a client with a `FileHost`. */
export const FS_CAPABILITIES: P.ClientCapabilities = {
  fs: { readTextFile: true, writeTextFile: true, saveFiles: true },
};

/** Answer the daemon's file requests from `host`. */
export function serveFiles(conn: MessageConnection, host: FileHost): void {
  conn.onRequest(P.AgentReadTextFile, async (params) => ({ content: await host.read(params) }));
  conn.onRequest(P.AgentWriteTextFile, async (params) => ({ applied: await host.write(params) }));
  conn.onRequest(P.AgentSaveFiles, async (params) => ({ saved: await host.save(params) }));
}

/** The smallest replacement turning `before` into `after` (UTF-16 offsets): an edit that keeps the cursor, folds and
 * undo local, instead of replacing the whole buffer. */
export function minimalChange(before: string, after: string): { start: number; end: number; text: string } {
  let start = 0;
  const max = Math.min(before.length, after.length);
  while (start < max && before.charCodeAt(start) === after.charCodeAt(start)) start++;
  let tail = 0;
  while (
    tail < max - start &&
    before.charCodeAt(before.length - 1 - tail) === after.charCodeAt(after.length - 1 - tail)
  )
    tail++;
  return { start, end: before.length - tail, text: after.slice(start, after.length - tail) };
}
