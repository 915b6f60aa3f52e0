// The editor's buffers as the agent's files (a FileHost, hostFiles.ts): a file with unsaved changes is read from its
// TextDocument; a file shown in a tab is written there, as one undoable WorkspaceEdit, and never saved here (the
// person saves, or the daemon asks before a shell command). Every other file is the disk's.

import * as vscode from "vscode";
import { minimalChange, type FileHost } from "../hostFiles";
import type * as P from "../protocol";

/** The loaded document of a file, if any. */
function documentOf(fsPath: string): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === fsPath);
}

/** The file is shown in a tab (an editor, or the right side of a diff). */
function shown(fsPath: string): boolean {
  const same = (uri: vscode.Uri): boolean => uri.scheme === "file" && uri.fsPath === fsPath;
  return vscode.window.tabGroups.all.some((g) =>
    g.tabs.some(
      (t) =>
        (t.input instanceof vscode.TabInputText && same(t.input.uri)) ||
        (t.input instanceof vscode.TabInputTextDiff && same(t.input.modified)),
    ),
  );
}

const lf = (text: string): string => text.replace(/\r\n/g, "\n");

export class Buffers implements FileHost {
  /** Unsaved text only: a saved buffer is the disk's text, which the daemon reads itself (never a stale copy). */
  async read(p: P.ReadTextFileParams): Promise<string | null> {
    const doc = documentOf(p.path);
    return doc?.isDirty ? doc.getText() : null;
  }

  async write(p: P.WriteTextFileParams): Promise<boolean> {
    const doc = documentOf(p.path);
    if (doc === undefined || !(doc.isDirty || shown(p.path))) return false;
    const before = doc.getText();
    if (lf(before) === lf(p.content)) return true;
    const change = minimalChange(before, p.content);
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(doc.positionAt(change.start), doc.positionAt(change.end)), change.text);
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`VS Code did not apply the change to ${p.path}`);
    if (lf(doc.getText()) !== lf(p.content))
      throw new Error(`the buffer of ${p.path} changed while Kgent's edit was applied`);
    return true;
  }

  async save(p: P.SaveFilesParams): Promise<string[]> {
    const saved: string[] = [];
    for (const f of p.paths) {
      const doc = documentOf(f);
      if (doc === undefined || !doc.isDirty || (await doc.save())) saved.push(f);
    }
    return saved;
  }
}
