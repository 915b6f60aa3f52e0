// "Approve with changes": the proposed side of an edit approval's diff is a writable document (an in-memory file
// system, scheme `kgent-proposed`); "Accept my version" (the diff editor's title button, or the command) answers the
// approval allow_once with `newText` = that document's text. Reverting some of the diff's blocks in the editor and
// accepting is the "partly accept an edit's hunks" answer: the same field. Offered only when the daemon says it takes
// the field (`capabilities.permissionNewText`) and the call proposes a whole text (`toolCall.newText`).

import * as path from "node:path";
import * as vscode from "vscode";
import type * as P from "../protocol";

export const EDIT_SCHEME = "kgent-proposed";
export const ACCEPT_MINE = "kgent.acceptMyVersion";

/** An allow answer that may carry the user's text (protocol.md, Approve with changes). */
export type SelectedWithText = P.PermissionSelected & { newText?: string };

interface Entry {
  requestId: string;
  uri: vscode.Uri;
  proposed: string;
  /** Answer the approval with the person's text; false when it is no longer pending. */
  accept(text: string): boolean;
}

/** The answer "Accept my version" gives: allow once, with the text when it differs from the proposal. */
export function acceptAnswer(params: P.PermissionParams, proposed: string, text: string): SelectedWithText | undefined {
  const allow =
    params.options.find((o) => o.kind === "allow_once") ?? params.options.find((o) => o.kind === "allow_always");
  if (allow === undefined) return undefined;
  return text === proposed
    ? { outcome: "selected", optionId: allow.optionId }
    : { outcome: "selected", optionId: allow.optionId, newText: text };
}

export class ApprovalEdits implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly files = new Map<string, { data: Uint8Array; mtime: number }>();
  private readonly byRequest = new Map<string, Entry>();
  private readonly changeEmitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  private readonly editedEmitter = new vscode.EventEmitter<string>();
  private readonly disposables: vscode.Disposable[] = [];
  private seq = 0;
  readonly onDidChangeFile = this.changeEmitter.event;
  /** A request id whose proposed text the person changed (the panel's card then offers "Accept my version"). */
  readonly onDidEdit = this.editedEmitter.event;

  /** `capabilities`: the daemon's current capabilities (undefined while it is down). */
  constructor(private readonly capabilities: () => P.ServerCapabilities | undefined) {
    this.disposables.push(
      vscode.workspace.registerFileSystemProvider(EDIT_SCHEME, this, { isCaseSensitive: true }),
      vscode.commands.registerCommand(ACCEPT_MINE, (uri?: unknown) =>
        this.acceptMine(uri instanceof vscode.Uri ? uri : undefined),
      ),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.scheme !== EDIT_SCHEME || e.contentChanges.length === 0) return;
        const entry = this.entryFor(e.document.uri);
        if (entry !== undefined) this.editedEmitter.fire(entry.requestId);
      }),
    );
  }

  /** True when this approval may be answered with the person's own text. */
  editable(params: P.PermissionParams): boolean {
    const caps = this.capabilities() as (P.ServerCapabilities & { permissionNewText?: unknown }) | undefined;
    return (
      caps?.permissionNewText === true &&
      typeof params.toolCall.newText === "string" &&
      params.options.some((o) => o.kind === "allow_once")
    );
  }

  /**
   * Offer the approval's proposed text for editing; `answer` settles the approval. Returns the document's uri, under
   * `folder` when given (a panel card's `/card-<requestId>/`, whose diff title bar answers it).
   */
  register(params: P.PermissionParams, answer: (result: SelectedWithText) => boolean, folder?: string): vscode.Uri {
    const existing = this.byRequest.get(params.requestId);
    if (existing !== undefined) return existing.uri;
    const proposed = params.toolCall.newText ?? "";
    const target =
      params.toolCall.path ?? (typeof params.toolCall.args.path === "string" ? params.toolCall.args.path : "file");
    const name = path.basename(target) || "file";
    const uri = vscode.Uri.from({
      scheme: EDIT_SCHEME,
      path: folder !== undefined ? `${folder}proposed/${name}` : `/approval-${++this.seq}/${name}`,
    });
    this.files.set(uri.path, { data: Buffer.from(proposed, "utf8"), mtime: Date.now() });
    this.byRequest.set(params.requestId, {
      requestId: params.requestId,
      uri,
      proposed,
      accept: (text) => {
        const result = acceptAnswer(params, proposed, text);
        return result !== undefined && answer(result);
      },
    });
    return uri;
  }

  /** The writable document of a registered approval. */
  uriFor(requestId: string): vscode.Uri | undefined {
    return this.byRequest.get(requestId)?.uri;
  }

  /** The approval was answered or withdrawn: its document closes (saved first, so closing never asks) and goes. */
  async release(requestId: string): Promise<void> {
    const entry = this.byRequest.get(requestId);
    if (entry === undefined) return;
    this.byRequest.delete(requestId);
    const key = entry.uri.toString();
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
    if (doc?.isDirty) await doc.save().then(undefined, () => false);
    const tabs: vscode.Tab[] = [];
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        const input = tab.input;
        if (input instanceof vscode.TabInputTextDiff && input.modified.toString() === key) tabs.push(tab);
        else if (input instanceof vscode.TabInputText && input.uri.toString() === key) tabs.push(tab);
      }
    }
    if (tabs.length > 0) await Promise.resolve(vscode.window.tabGroups.close(tabs, true)).then(undefined, () => false);
    this.files.delete(entry.uri.path);
  }

  /** "Accept my version": answer the approval of `uri` (else the active editor's) with the document's current text. */
  async acceptMine(uri?: vscode.Uri): Promise<boolean> {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    const entry = target === undefined ? undefined : this.entryFor(target);
    if (entry === undefined) {
      void vscode.window.showInformationMessage(
        "Kgent: open an approval's editable diff (its proposed side) to accept your version.",
      );
      return false;
    }
    const key = entry.uri.toString();
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
    const text =
      doc?.getText() ?? Buffer.from(this.files.get(entry.uri.path)?.data ?? new Uint8Array()).toString("utf8");
    const answered = entry.accept(text);
    if (!answered)
      void vscode.window.showInformationMessage("Kgent: this approval is no longer waiting for an answer.");
    return answered;
  }

  private entryFor(uri: vscode.Uri): Entry | undefined {
    if (uri.scheme !== EDIT_SCHEME) return undefined;
    for (const e of this.byRequest.values()) if (e.uri.path === uri.path) return e;
    return undefined;
  }

  // ------------------------------------------------------------------------------------------ FileSystemProvider

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const f = this.files.get(uri.path);
    if (f !== undefined) return { type: vscode.FileType.File, ctime: f.mtime, mtime: f.mtime, size: f.data.byteLength };
    if ([...this.files.keys()].some((k) => k.startsWith(`${uri.path.replace(/\/$/, "")}/`))) {
      return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
    }
    throw vscode.FileSystemError.FileNotFound(uri);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions("the proposed text's folder is fixed");
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const f = this.files.get(uri.path);
    if (f === undefined) throw vscode.FileSystemError.FileNotFound(uri);
    return f.data;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    if (!this.files.has(uri.path))
      throw vscode.FileSystemError.NoPermissions("only an approval's proposed text can be saved here");
    this.files.set(uri.path, { data: content, mtime: Date.now() });
    this.changeEmitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  delete(): void {
    throw vscode.FileSystemError.NoPermissions("the proposed text goes when its approval is answered");
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions("the proposed text cannot be renamed");
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    this.changeEmitter.dispose();
    this.editedEmitter.dispose();
  }
}
