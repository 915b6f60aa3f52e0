// An edit's approval answered where the code is: the panel's card opens the edit's side-by-side diff in the editor (by
// default; `kgent.approvalDiff` keeps it in the panel), and the diff's title bar answers it — Allow, Reject, and the
// daemon's other answers in a menu. The card in the panel stays and answers the same approval.

import * as vscode from "vscode";
import { approvalPrompt } from "../approval";
import type * as P from "../protocol";
import { EDIT_SCHEME, type ApprovalEdits } from "./approvalEdit";
import { SCHEME } from "./documents";

export const ALLOW = "kgent.approval.allow";
export const REJECT = "kgent.approval.reject";
export const MORE = "kgent.approval.answer";

/** Where an edit's approval shows its diff: in an editor beside the code (default), or in the panel's card only. */
export function approvalDiff(): "editor" | "panel" {
  return vscode.workspace.getConfiguration("kgent").get<string>("approvalDiff") === "panel" ? "panel" : "editor";
}

/** The approval's prefix of its diff documents (`kgent:/card-<requestId>/…`). */
export function cardPrefix(requestId: string): string {
  return `/card-${requestId}/`;
}

/** The pending approvals, and how to answer one (the panel's). */
export interface PendingApprovals {
  params(requestId: string): P.PermissionParams | undefined;
  /** Answer with an offered option; false when the approval is no longer pending. */
  answer(requestId: string, optionId: string): boolean;
}

export class ApprovalDiffCommands implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly pending: PendingApprovals,
    private readonly edits: ApprovalEdits | undefined,
  ) {
    const uriArg = (u: unknown): vscode.Uri | undefined => (u instanceof vscode.Uri ? u : undefined);
    this.disposables = [
      vscode.commands.registerCommand(ALLOW, (u: unknown) => this.allow(uriArg(u))),
      vscode.commands.registerCommand(REJECT, (u: unknown) => this.reject(uriArg(u))),
      vscode.commands.registerCommand(MORE, (u: unknown) => this.more(uriArg(u))),
    ];
  }

  /** The approval a panel card's diff document belongs to (`/card-<requestId>/…`, either side, editable or not). */
  requestOf(uri: vscode.Uri | undefined): string | undefined {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    if (target === undefined) return undefined;
    if (target.scheme !== SCHEME && target.scheme !== EDIT_SCHEME) return undefined;
    return /^\/card-([^/]+)\//.exec(target.path)?.[1];
  }

  private target(uri: vscode.Uri | undefined): { requestId: string; params: P.PermissionParams } | undefined {
    const requestId = this.requestOf(uri);
    const params = requestId === undefined ? undefined : this.pending.params(requestId);
    if (requestId === undefined || params === undefined) {
      void vscode.window.showInformationMessage("Kgent: this approval is no longer waiting for an answer.");
      return undefined;
    }
    return { requestId, params };
  }

  /** Allow once; on an editable proposal, with the person's text when they changed it ("approve with changes"). */
  async allow(uri?: vscode.Uri): Promise<boolean> {
    const t = this.target(uri);
    if (t === undefined) return false;
    const editable = this.edits?.uriFor(t.requestId);
    if (editable !== undefined) return this.edits?.acceptMine(editable) ?? false;
    return this.answerKind(t, ["allow_once", "allow_always"]);
  }

  async reject(uri?: vscode.Uri): Promise<boolean> {
    const t = this.target(uri);
    return t !== undefined && this.answerKind(t, ["reject_once", "reject_always"]);
  }

  /** Every answer the daemon offers, by its own names and the rule each "always" creates. */
  async more(uri?: vscode.Uri): Promise<boolean> {
    const t = this.target(uri);
    if (t === undefined) return false;
    const prompt = approvalPrompt(t.params);
    type Item = vscode.QuickPickItem & { optionId: string };
    const items: Item[] = [];
    for (const c of prompt.choices) {
      if (c.kind !== "option") continue;
      const item: Item = { label: c.label, optionId: c.optionId };
      if (c.description !== undefined) item.description = c.description;
      if (c.detail !== undefined) item.detail = c.detail;
      items.push(item);
    }
    const pick = await vscode.window.showQuickPick(items, { title: prompt.title, placeHolder: prompt.placeholder });
    return pick !== undefined && this.pending.answer(t.requestId, pick.optionId);
  }

  private answerKind(t: { requestId: string; params: P.PermissionParams }, kinds: string[]): boolean {
    for (const kind of kinds) {
      const option = t.params.options.find((o) => o.kind === kind);
      if (option !== undefined) return this.pending.answer(t.requestId, option.optionId);
    }
    return false;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
