// The panel's "Restore checkpoint": ask the daemon what rewinding to a message would do (`agent/rewind` dryRun),
// show it in a modal confirmation (files, conflicts, what cannot be restored), then rewind: the files come back
// (open documents through the editor's buffers: the daemon writes them with agent/writeTextFile), the conversation
// forks before the message, which goes back into the input.

import * as vscode from "vscode";
import { errorOf, type KgentClient } from "../client";
import { splitAttachments } from "../panelHistory";
import type { ToPage } from "../panelMessages";
import type { PanelModel } from "../panelModel";
import { confirmation, outcomeNote } from "../rewind";
import { firstLine } from "../transcript";

export const RESTORE = "Restore";

export async function rewindAt(
  client: KgentClient,
  model: PanelModel,
  post: (m: ToPage) => void,
  sessionId: string,
  entryId: string,
): Promise<boolean> {
  try {
    const plan = await client.rewind({ sessionId, entryId, dryRun: true });
    const { message, detail } = confirmation(plan);
    const pick = await vscode.window.showWarningMessage(message, { modal: true, detail }, RESTORE);
    if (pick !== RESTORE) {
      model.note("Checkpoint not restored: nothing changed.");
      return false;
    }
    const done = await client.rewind({ sessionId, entryId });
    const branch = await client.session(sessionId, true);
    model.showSession(branch, `restored “${firstLine(done.prompt, 60)}”`);
    model.note(outcomeNote(done), done.files.some((f) => f.outcome === "conflict") ? "error" : undefined);
    post({ type: "setInput", text: splitAttachments(done.prompt).text });
    return true;
  } catch (e) {
    model.note(`Could not restore the checkpoint: ${errorOf(e).message}`, "error");
    return false;
  }
}
