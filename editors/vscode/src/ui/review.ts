// Kgent: Review Changes — a run's changes hunk by hunk, in the diff editor: the file before the run (its pending hunks
// undone) against the file as it is now, with Accept / Reject on each hunk (CodeLens) and Accept / Reject for the
// whole file (CodeLens and the editor's title bar) and the whole run. Rejections land in the buffer, unsaved.

import * as fs from "node:fs/promises";
import * as vscode from "vscode";
import { errorOf, type KgentClient } from "../client";
import { filesToReview, hunkLine, problems, withoutHunks, type FileToReview } from "../reviewModel";
import type { DaemonControl } from "./daemonControl";

export const REVIEW_SCHEME = "kgent-review";

/** The run a review is about. */
export interface ReviewTarget {
  sessionId: string;
  runId: string;
}

interface Current extends ReviewTarget {
  files: FileToReview[];
}

function asTarget(a: unknown): ReviewTarget | undefined {
  if (typeof a !== "object" || a === null) return undefined;
  const r = a as Record<string, unknown>;
  return typeof r.sessionId === "string" && typeof r.runId === "string"
    ? { sessionId: r.sessionId, runId: r.runId }
    : undefined;
}

export class Review implements vscode.CodeLensProvider, vscode.TextDocumentContentProvider, vscode.Disposable {
  private current: Current | undefined;
  private readonly lenses = new vscode.EventEmitter<void>();
  private readonly docs = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChangeCodeLenses = this.lenses.event;
  readonly onDidChange = this.docs.event;
  private readonly disposables: vscode.Disposable[] = [];
  private reloadTimer: NodeJS.Timeout | undefined;

  /** `lastRun`: the run to review when none is named (the panel's last run that changed files). */
  constructor(
    private readonly daemon: DaemonControl,
    private readonly lastRun: () => ReviewTarget | undefined,
  ) {
    const ids = (a: unknown): string[] =>
      typeof a === "string" ? [a] : Array.isArray(a) ? a.filter((x): x is string => typeof x === "string") : [];
    this.disposables.push(
      this.lenses,
      this.docs,
      vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, this),
      vscode.languages.registerCodeLensProvider({ scheme: "file" }, this),
      vscode.commands.registerCommand("kgent.reviewChanges", (a: unknown) => this.open(asTarget(a))),
      vscode.commands.registerCommand("kgent.review.accept", (a: unknown) => this.apply(ids(a), [])),
      vscode.commands.registerCommand("kgent.review.reject", (a: unknown) => this.apply([], ids(a))),
      vscode.commands.registerCommand("kgent.review.acceptFile", (u: unknown) => this.file(u, "accept")),
      vscode.commands.registerCommand("kgent.review.rejectFile", (u: unknown) => this.file(u, "reject")),
      vscode.commands.registerCommand("kgent.review.acceptRun", () => this.run("accept")),
      vscode.commands.registerCommand("kgent.review.rejectRun", () => this.run("reject")),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (this.fileOf(e.document.uri) !== undefined) this.reloadSoon();
      }),
    );
  }

  /** Kgent: Review Changes: open a diff per file of the run that still has undecided hunks. */
  async open(target?: ReviewTarget): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage("Kgent is off in Restricted Mode: trust the folder to review its changes.");
      return;
    }
    const run = target ?? this.lastRun();
    if (run === undefined) {
      void vscode.window.showInformationMessage(
        "Kgent: no run to review yet. Changes show here after a run that edits files.",
      );
      return;
    }
    const client = await this.daemon.client();
    if (client === undefined || !(await this.load(client, run))) return;
    const files = this.current?.files ?? [];
    if (files.length === 0) {
      void vscode.window.showInformationMessage(
        "Kgent: nothing to review: every change of that run has been kept or reverted.",
      );
      return;
    }
    for (const f of files) {
      const right = vscode.Uri.file(f.file.absolutePath);
      await vscode.commands.executeCommand(
        "vscode.diff",
        this.leftUri(f),
        right,
        `${f.file.path}: before the run ↔ now (Kgent review)`,
        { preview: false },
      );
    }
  }

  private leftUri(f: FileToReview): vscode.Uri {
    return vscode.Uri.from({ scheme: REVIEW_SCHEME, path: f.file.absolutePath });
  }

  private fileOf(uri: vscode.Uri): FileToReview | undefined {
    return this.current?.files.find((f) => f.file.absolutePath === uri.fsPath);
  }

  /** Read the run's review again; false (after saying why) if it cannot be read. */
  private async load(client: KgentClient, target: ReviewTarget): Promise<boolean> {
    try {
      const review = await client.review(target);
      const files = filesToReview(review.runs.find((r) => r.runId === target.runId));
      const before = this.current?.files ?? [];
      this.current = { ...target, files };
      await vscode.commands.executeCommand(
        "setContext",
        "kgent.reviewFiles",
        files.map((f) => f.file.absolutePath),
      );
      await vscode.commands.executeCommand("setContext", "kgent.reviewing", files.length > 0);
      for (const f of [...before, ...files]) this.docs.fire(this.leftUri(f));
      this.lenses.fire();
      return true;
    } catch (e) {
      void vscode.window.showErrorMessage(`Kgent: could not read the run's changes: ${errorOf(e).message}`);
      return false;
    }
  }

  private reloadSoon(): void {
    if (this.reloadTimer !== undefined) clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = undefined;
      const client = this.daemon.current;
      if (client !== undefined && this.current !== undefined) void this.load(client, this.current);
    }, 300);
  }

  /** Keep `accept` and revert `reject` (hunk ids); say what could not be done; show what is left. */
  private async apply(accept: string[], reject: string[]): Promise<void> {
    const cur = this.current;
    const client = await this.daemon.client();
    if (cur === undefined || client === undefined || accept.length + reject.length === 0) return;
    try {
      const result = await client.applyReview({ sessionId: cur.sessionId, accept, reject });
      const bad = problems(result);
      if (bad.length > 0)
        void vscode.window.showWarningMessage(
          `Kgent: left as ${bad.length === 1 ? "it is" : "they are"} (changed since the run): ${bad.join("; ")}`,
        );
    } catch (e) {
      void vscode.window.showErrorMessage(`Kgent: could not apply the review: ${errorOf(e).message}`);
    }
    await this.load(client, cur);
    if (this.current?.files.length === 0) {
      const note = reject.length > 0 ? " Reverted lines are in the editor, unsaved: save to keep them that way." : "";
      void vscode.window.showInformationMessage(`Kgent: review done.${note}`);
    }
  }

  private file(u: unknown, how: "accept" | "reject"): Promise<void> {
    const uri = u instanceof vscode.Uri ? u : vscode.window.activeTextEditor?.document.uri;
    const f = uri === undefined ? undefined : this.fileOf(uri);
    if (f === undefined) return Promise.resolve();
    if (how === "reject" && f.placed.length === 0) return nothingToReject([f]);
    const ids = (how === "accept" ? [...f.placed, ...f.changedSince] : f.placed).map((h) => h.id);
    return how === "accept" ? this.apply(ids, []) : this.apply([], ids);
  }

  /**
   * Accept or reject every change of the run under review — or, with no review open, of the last run that changed
   * files. Rejecting leaves the hunks you edited since the run as they are, and says so first.
   */
  private async run(how: "accept" | "reject"): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage("Kgent is off in Restricted Mode: trust the folder to review its changes.");
      return;
    }
    if (this.current === undefined || this.current.files.length === 0) {
      const target = this.lastRun();
      if (target === undefined) {
        void vscode.window.showInformationMessage(
          "Kgent: no run to review yet. Changes show here after a run that edits files.",
        );
        return;
      }
      const client = await this.daemon.client();
      if (client === undefined || !(await this.load(client, target))) return;
    }
    const files = this.current?.files ?? [];
    if (files.length === 0) {
      void vscode.window.showInformationMessage(
        "Kgent: nothing to review: every change of that run has been kept or reverted.",
      );
      return;
    }
    const edited = files.filter((f) => f.changedSince.length > 0);
    if (how === "reject" && files.every((f) => f.placed.length === 0)) return nothingToReject(edited);
    if (how === "reject" && edited.length > 0) {
      const n = edited.reduce((k, f) => k + f.changedSince.length, 0);
      const where = edited.map((f) => f.file.path).join(", ");
      const pick = await vscode.window.showWarningMessage(
        `Kgent: ${n} change${n === 1 ? "" : "s"} of the run ${n === 1 ? "was" : "were"} edited by you since (${where}): ${n === 1 ? "it is" : "they are"} left as ${n === 1 ? "it is" : "they are"}; the other changes are reverted.`,
        { modal: true },
        "Reject the Others",
      );
      if (pick !== "Reject the Others") return;
    }
    const ids = files.flatMap((f) => (how === "accept" ? [...f.placed, ...f.changedSince] : f.placed)).map((h) => h.id);
    return how === "accept" ? this.apply(ids, []) : this.apply([], ids);
  }

  /** The left side of a file's review diff: the file now, with its undecided hunks undone. */
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const f = this.fileOf(uri);
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === uri.fsPath);
    const now = doc !== undefined ? doc.getText() : await fs.readFile(uri.fsPath, "utf8").catch(() => "");
    return f === undefined ? now : withoutHunks(now, [...f.placed, ...f.changedSince]);
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const f = this.fileOf(doc.uri);
    if (f === undefined || this.current === undefined) return [];
    const top = new vscode.Range(0, 0, 0, 0);
    const total = this.current.files.reduce((n, x) => n + x.placed.length + x.changedSince.length, 0);
    const mine = f.placed.length + f.changedSince.length;
    const out = [
      new vscode.CodeLens(top, {
        title: `Kgent: accept file (${mine})`,
        command: "kgent.review.acceptFile",
        arguments: [doc.uri],
      }),
      new vscode.CodeLens(top, { title: "reject file", command: "kgent.review.rejectFile", arguments: [doc.uri] }),
      new vscode.CodeLens(top, { title: `accept run (${total})`, command: "kgent.review.acceptRun" }),
      new vscode.CodeLens(top, { title: "reject run", command: "kgent.review.rejectRun" }),
    ];
    if (f.changedSince.length > 0) {
      const ids = f.changedSince.map((h) => h.id);
      out.push(
        new vscode.CodeLens(top, {
          title: `⚠ ${ids.length} edited since the run: accept`,
          command: "kgent.review.accept",
          arguments: [ids],
        }),
      );
    }
    for (const h of f.placed) {
      const at = new vscode.Range(hunkLine(h, doc.lineCount), 0, hunkLine(h, doc.lineCount), 0);
      const what =
        h.newCount === 0
          ? `deleted ${h.oldCount} line${h.oldCount === 1 ? "" : "s"}`
          : `${h.newCount} line${h.newCount === 1 ? "" : "s"}`;
      out.push(
        new vscode.CodeLens(at, {
          title: "Accept",
          command: "kgent.review.accept",
          arguments: [h.id],
          tooltip: `Keep this change (${what})`,
        }),
        new vscode.CodeLens(at, {
          title: "Reject",
          command: "kgent.review.reject",
          arguments: [h.id],
          tooltip: `Revert this change (${what}) in the editor`,
        }),
      );
    }
    return out;
  }

  dispose(): void {
    if (this.reloadTimer !== undefined) clearTimeout(this.reloadTimer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** Reject where every change left was edited by the person since the run: nothing is reverted, and it says why. */
async function nothingToReject(edited: FileToReview[]): Promise<void> {
  const n = edited.reduce((k, f) => k + f.changedSince.length, 0);
  const where = edited.map((f) => f.file.path).join(", ");
  void vscode.window.showInformationMessage(
    `Kgent: nothing was rejected: the ${n === 1 ? "change" : `${n} changes`} left in ${where} ${n === 1 ? "was" : "were"} edited by you since the run, and ${n === 1 ? "stays" : "stay"} as you made ${n === 1 ? "it" : "them"}. Accept ${n === 1 ? "it" : "them"}, or undo your edit to reject the run's.`,
  );
}
