// The folder's sessions in VS Code's quick input: whole titles, typed text filtering them (title, when, size), and on
// each row Fork, Rename (`agent/renameSession`) and Delete (`agent/deleteSession`, after a confirmation). Picking a
// row resumes it. The picker stays open across a rename or delete and shows the list as the daemon has it then.

import * as vscode from "vscode";
import { errorOf, type KgentClient } from "../client";
import { localTime, relativeTime } from "../prompt";
import type * as P from "../protocol";

export type SessionChoice = { action: "resume" | "fork"; session: P.SessionInfo };

type Item = vscode.QuickPickItem & { session: P.SessionInfo };

const FORK: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon("repo-forked"),
  tooltip: "Fork: continue from before its last message, on a new branch",
};
const RENAME: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("edit"), tooltip: "Rename" };
const DELETE: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("trash"), tooltip: "Delete" };

/** A picker for another purpose than History (Export Session): its own words, and no Fork button. */
export interface PickPurpose {
  title: string;
  placeholder: string;
}

function toItem(s: P.SessionInfo, buttons: vscode.QuickInputButton[]): Item {
  return {
    label: s.title || "(untitled)",
    description: `${relativeTime(s.updated)}${s.liveRunId ? " · running" : ""}`,
    detail: `${s.entryCount} entries · started ${localTime(s.created)}`,
    buttons,
    session: s,
  };
}

/** Let the person pick one of `workspace`'s sessions (or rename and delete them); `undefined`: Escape. */
export async function pickSession(
  client: KgentClient,
  workspace: string,
  onDeleted: (sessionId: string) => void,
  purpose?: PickPurpose,
): Promise<SessionChoice | undefined> {
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = purpose?.title ?? "Kgent: sessions in this folder";
  qp.placeholder =
    purpose?.placeholder ?? "Type to search the titles · Enter resumes · the row's buttons fork, rename or delete";
  const buttons = purpose === undefined ? [FORK, RENAME, DELETE] : [RENAME, DELETE];
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.ignoreFocusOut = true;
  const load = async (): Promise<void> => {
    qp.busy = true;
    try {
      const { sessions } = await client.sessions(workspace);
      qp.items = sessions.map((s) => toItem(s, buttons));
      if (sessions.length === 0) qp.placeholder = "No sessions in this folder yet: send a message to start one";
    } catch (e) {
      void vscode.window.showErrorMessage(`Kgent: could not list the sessions: ${errorOf(e).message}`);
    } finally {
      qp.busy = false;
    }
  };
  const chosen = await new Promise<SessionChoice | undefined>((resolve) => {
    // A rename's input box or a delete's confirmation hides the picker for a moment: that is not an Escape.
    let asking = false;
    qp.onDidAccept(() => {
      const item = qp.selectedItems[0] ?? qp.activeItems[0];
      if (item === undefined) return;
      resolve({ action: "resume", session: item.session });
      qp.hide();
    });
    qp.onDidTriggerItemButton(async (e) => {
      const s = e.item.session;
      if (e.button === FORK) {
        resolve({ action: "fork", session: s });
        qp.hide();
        return;
      }
      asking = true;
      try {
        if (e.button === RENAME) await rename(client, s);
        else if (e.button === DELETE && (await remove(client, s))) onDeleted(s.sessionId);
      } finally {
        asking = false;
      }
      await load();
      qp.show();
    });
    qp.onDidHide(() => {
      if (!asking) resolve(undefined);
    });
    qp.show();
    void load();
  });
  qp.dispose();
  return chosen;
}

async function rename(client: KgentClient, s: P.SessionInfo): Promise<void> {
  const title = await vscode.window.showInputBox({
    title: "Kgent: rename the session",
    prompt: "Its new title (empty: the first line of its first message again)",
    value: s.title,
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim().length > 200 ? "At most 200 characters" : undefined),
  });
  if (title === undefined) return;
  try {
    await client.renameSession(s.sessionId, title);
  } catch (e) {
    void vscode.window.showErrorMessage(`Kgent: could not rename the session: ${errorOf(e).message}`);
  }
}

async function remove(client: KgentClient, s: P.SessionInfo): Promise<boolean> {
  const ok = await vscode.window.showWarningMessage(
    `Delete the session “${s.title || s.sessionId}”?`,
    { modal: true, detail: `${s.entryCount} entries. Its file and images go; there is no undo.` },
    "Delete",
  );
  if (ok !== "Delete") return false;
  try {
    await client.deleteSession(s.sessionId);
    return true;
  } catch (e) {
    void vscode.window.showErrorMessage(`Kgent: could not delete the session: ${errorOf(e).message}`);
    return false;
  }
}
