// Kgent: Export Session: the panel's session (without one, a session picked from the folder's History) as Markdown,
// HTML or JSON (`agent/exportSession`: the active branch, redacted by the daemon), opened in a new untitled editor
// for the person to save where they want.

import * as vscode from "vscode";
import { errorOf, type KgentClient } from "../client";
import type { DaemonControl } from "./daemonControl";
import { pickSession } from "./sessionPicker";
import { pickFolder } from "./tasks";

interface Format extends vscode.QuickPickItem {
  format: "md" | "html" | "json";
  language: string;
}

const FORMATS: Format[] = [
  { label: "Markdown", description: "to read or paste anywhere", format: "md", language: "markdown" },
  { label: "HTML", description: "one page, no script, images inline", format: "html", language: "html" },
  { label: "JSON", description: "every entry, for tools", format: "json", language: "json" },
];

/** Export `sessionId` (the panel's; undefined: pick one from History), in the format the person picks. */
export async function exportSession(daemon: DaemonControl, sessionId: string | undefined): Promise<void> {
  const client = await daemon.client();
  if (client === undefined) return; // the daemon's start failure is shown by DaemonControl
  const chosen = sessionId ?? (await pickToExport(client));
  if (chosen === undefined) return;
  const format = await vscode.window.showQuickPick(FORMATS, {
    title: "Kgent: export the session as",
    placeHolder: "It opens in a new editor: save it where you want (keys and secrets are redacted)",
  });
  if (format === undefined) return;
  try {
    const out = await client.exportSession({ sessionId: chosen, format: format.format });
    const doc = await vscode.workspace.openTextDocument({ content: out.text, language: format.language });
    await vscode.window.showTextDocument(doc);
  } catch (e) {
    void vscode.window.showErrorMessage(`Kgent: could not export the session: ${errorOf(e).message}`);
  }
}

/** One of the folder's sessions, from History's picker; undefined (and a word) when there is none. */
async function pickToExport(client: KgentClient): Promise<string | undefined> {
  const folder = await pickFolder();
  if (folder === undefined) return undefined;
  try {
    if ((await client.sessions(folder.uri.fsPath)).sessions.length === 0) {
      void vscode.window.showInformationMessage(
        `Kgent: no session in ${folder.name} to export yet: send a message in the Kgent panel to start one.`,
      );
      return undefined;
    }
  } catch (e) {
    void vscode.window.showErrorMessage(`Kgent: could not list the sessions: ${errorOf(e).message}`);
    return undefined;
  }
  const choice = await pickSession(client, folder.uri.fsPath, () => undefined, {
    title: "Kgent: export which session?",
    placeholder: "Type to search the titles · Enter exports · the row's buttons rename or delete",
  });
  return choice?.session.sessionId;
}
