// The panel's "Restore checkpoint": ask the daemon what rewinding to a message would do (`agent/rewind` dryRun),
// show it in a modal confirmation (files, conflicts, what cannot be restored), then rewind: the files come back
// (open documents through the editor's buffers: the daemon writes them with agent/writeTextFile), the conversation
// forks before the message, which goes back into the input. `/rewind` first asks which message (`pickCheckpoint`).

import * as vscode from "vscode";
import { errorOf, type KgentClient } from "../client";
import { splitAttachments } from "../panelHistory";
import type { ToPage } from "../panelMessages";
import type { PanelModel } from "../panelModel";
import { relativeTime } from "../prompt";
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
    // A restore that completed is no failure, even with files left as they were (the note names them).
    model.note(outcomeNote(done));
    post({ type: "setInput", text: splitAttachments(done.prompt).text });
    return true;
  } catch (e) {
    model.note(`Could not restore the checkpoint: ${errorOf(e).message}`, "error");
    return false;
  }
}

/**
 * `/rewind`: the person picks one of the session's prompts on its active branch (latest first) in VS Code's quick
 * input; its entry id, or undefined (Escape, no prompt yet: a note says so, a failure too).
 */
export async function pickCheckpoint(
  client: KgentClient,
  model: PanelModel,
  sessionId: string,
): Promise<string | undefined> {
  try {
    const branch = await client.session(sessionId, true);
    const items = [...branch.entries].reverse().flatMap((e) =>
      e.message?.role === "user"
        ? [
            {
              label: firstLine(splitAttachments(e.message.text).text, 80) || "(a message without text)",
              description: relativeTime(e.timestamp),
              entryId: e.id,
            },
          ]
        : [],
    );
    if (items.length === 0) {
      model.note("Nothing to rewind: this conversation has no message yet.");
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(items, {
      title: "Kgent: rewind to before which message?",
      placeHolder: "The files it and the later messages changed come back, and the conversation continues from there",
    });
    return pick?.entryId;
  } catch (e) {
    model.note(`Could not list the session's messages: ${errorOf(e).message}`, "error");
    return undefined;
  }
}
