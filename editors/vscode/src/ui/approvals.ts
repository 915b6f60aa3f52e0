// Approval prompts: one non-modal QuickPick at a time, the preview item first (Enter never approves by default),
// "Show diff"/"Show details" in a virtual document beside it, and the prompt closed when the daemon withdraws it.

import * as vscode from "vscode";
import { approvalPrompt, type ApprovalChoice, type ApprovalPrompt } from "../approval";
import { errorOf } from "../client";
import type * as P from "../protocol";
import type { ApprovalEdits } from "./approvalEdit";
import { SCHEME, type VirtualDocuments } from "./documents";
import type { Output } from "./output";

interface ApprovalItem extends vscode.QuickPickItem {
  choice: ApprovalChoice;
}

export class Approvals {
  private openPrompts = 0;
  private promptSeq = 0;
  private approvalQueue: Promise<void> = Promise.resolve();

  /** `changed`: the number of waiting prompts (shown in the status bar) changed. */
  constructor(
    private readonly docs: VirtualDocuments,
    private readonly output: Output,
    private readonly changed: () => void,
    private readonly edits?: ApprovalEdits,
  ) {}

  /** Prompts open or waiting their turn. */
  get waiting(): number {
    return this.openPrompts;
  }

  /** Answer an `agent/permission` request; `token` is cancelled when the daemon withdraws it. */
  async decide(params: P.PermissionParams, token: vscode.CancellationToken): Promise<P.PermissionResult> {
    this.openPrompts++;
    this.changed();
    try {
      // One prompt at a time: a second QuickPick would hide (and so reject) the first. A prompt withdrawn while it
      // waits its turn is answered at once, but the next one still waits for every prompt before it.
      const turn = this.approvalQueue;
      let release!: () => void;
      const mine = new Promise<void>((r) => (release = r));
      this.approvalQueue = turn.then(() => mine);
      let withdrawn: vscode.Disposable | undefined;
      try {
        await Promise.race([turn, new Promise<void>((r) => (withdrawn = token.onCancellationRequested(() => r())))]);
        withdrawn?.dispose();
        if (token.isCancellationRequested) return { outcome: "cancelled" };
        return await this.show(params, token);
      } finally {
        withdrawn?.dispose();
        release();
      }
    } finally {
      this.openPrompts--;
      this.changed();
    }
  }

  private show(params: P.PermissionParams, token: vscode.CancellationToken): Promise<P.PermissionResult> {
    const prompt = approvalPrompt(params);
    const n = ++this.promptSeq;
    const prefix = `/prompt-${n}/`;
    const editable = this.edits?.editable(params) === true;
    const qp = vscode.window.createQuickPick<ApprovalItem>();
    qp.title = prompt.title;
    qp.placeholder = prompt.placeholder;
    qp.ignoreFocusOut = true;
    qp.matchOnDescription = false;
    const items: ApprovalItem[] = prompt.choices.map((choice) => ({
      label: choice.label,
      description: choice.description,
      detail: choice.kind === "option" ? choice.detail : undefined,
      choice,
    }));
    qp.items = items;
    qp.activeItems = [items[0]]; // the preview: Enter never approves by default
    return new Promise<P.PermissionResult>((resolve) => {
      let done = false;
      const subs: vscode.Disposable[] = [];
      const finish = (result: P.PermissionResult): void => {
        if (done) return;
        done = true;
        for (const s of subs) s.dispose();
        qp.hide();
        qp.dispose();
        void (this.edits?.release(params.requestId) ?? Promise.resolve()).then(() => this.closePreviews(prefix));
        resolve(result);
      };
      // "Approve with changes": the diff's proposed side is editable; Accept my version answers with its text.
      if (editable) {
        this.edits?.register(params, (r) => {
          if (done) return false;
          finish(r);
          return true;
        });
      }
      subs.push(
        qp.onDidAccept(() => {
          const item = qp.selectedItems[0] ?? qp.activeItems[0];
          if (item === undefined) return;
          const c = item.choice;
          if (c.kind === "option") finish({ outcome: "selected", optionId: c.optionId });
          else void this.showPreview(prompt, c.kind, prefix, this.edits?.uriFor(params.requestId));
        }),
        qp.onDidHide(() => finish({ outcome: "cancelled" })),
        token.onCancellationRequested(() => finish({ outcome: "cancelled" })),
      );
      if (token.isCancellationRequested) {
        finish({ outcome: "cancelled" });
        return;
      }
      qp.show();
    });
  }

  /**
   * Open the call's diff (or, without one, its details) beside the editor: the panel's "Open diff in editor", and
   * every edit's approval by default (`keep`: a tab of its own, not the preview tab the next one would replace).
   */
  openPreview(params: P.PermissionParams, prefix: string, keep = false): Promise<void> {
    const prompt = approvalPrompt(params);
    return this.showPreview(
      prompt,
      prompt.preview !== undefined ? "diff" : "details",
      prefix,
      this.edits?.uriFor(params.requestId),
      keep,
    );
  }

  /** `editable`: the proposed side's writable document, when the approval takes the person's own text. */
  private async showPreview(
    prompt: ApprovalPrompt,
    kind: "diff" | "details",
    prefix: string,
    editable?: vscode.Uri,
    keep = false,
  ): Promise<void> {
    try {
      const pv = prompt.preview;
      if (kind === "diff" && pv !== undefined && pv.kind === "sides") {
        const left = this.docs.add(`${prefix}current/${pv.fileName}`, pv.before);
        const right = editable ?? this.docs.add(`${prefix}proposed/${pv.fileName}`, pv.after);
        const what = pv.isNewFile ? "new file" : "current ↔ proposed";
        const who = prompt.agent !== undefined ? `, asked by the sub-agent “${prompt.agent}”` : "";
        // A panel card's diff is answered from its title bar (Allow takes the person's text); a quick pick's has
        // Accept My Version there.
        const mine = editable?.path.startsWith("/card-") === true ? "Allow takes your changes" : "Accept my version";
        const title = `${pv.fileName}: ${what}${editable !== undefined ? ` (editable: ${mine})` : ""}${who} (Kgent)`;
        await vscode.commands.executeCommand("vscode.diff", left, right, title, {
          preview: !keep,
          preserveFocus: true,
        });
        return;
      }
      const text = kind === "diff" && pv !== undefined && pv.kind === "unified" ? pv.diff : prompt.details;
      const uri = this.docs.add(`${prefix}${kind === "diff" ? "proposed.diff" : "details.txt"}`, text);
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(doc, { preview: !keep, preserveFocus: true });
    } catch (e) {
      this.output.log(`[kgent] could not open the preview: ${errorOf(e).message}\n`);
    }
  }

  /** Close the preview editors of a prompt once it is answered or withdrawn. */
  async closePreviews(prefix: string): Promise<void> {
    const ours = (u: vscode.Uri): boolean => u.scheme === SCHEME && u.path.startsWith(prefix);
    const tabs: vscode.Tab[] = [];
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        const input = tab.input;
        if (input instanceof vscode.TabInputTextDiff && (ours(input.original) || ours(input.modified))) tabs.push(tab);
        else if (input instanceof vscode.TabInputText && ours(input.uri)) tabs.push(tab);
      }
    }
    if (tabs.length > 0) {
      try {
        await vscode.window.tabGroups.close(tabs, true);
      } catch {
        // already closed
      }
    }
  }
}
