// Starting a task: Kgent: Run Task (the folder, the prompt, the editor context) and Kgent: Resume Session (pick one
// of the folder's sessions, show its history, continue it).

import * as path from "node:path";
import * as vscode from "vscode";
import { errorOf } from "../client";
import { buildPrompt, localTime, relativeTime, type PromptContext } from "../prompt";
import type * as P from "../protocol";
import { firstLine } from "../transcript";
import type { DaemonControl } from "./daemonControl";
import type { Output } from "./output";
import type { Runs, RunSummary } from "./runs";
import { permissionMode } from "./settings";

export interface RunTaskArgs {
  prompt?: string;
  /** Skip the context question: "selection", "file" or "none". */
  context?: "selection" | "file" | "none";
}

export interface ResumeArgs {
  prompt?: string;
}

export class Tasks {
  constructor(
    private readonly runs: Runs,
    private readonly daemon: DaemonControl,
    private readonly output: Output,
  ) {}

  /** Kgent: Run Task. */
  async runTask(args: RunTaskArgs): Promise<RunSummary | undefined> {
    const folder = await pickFolder();
    if (folder === undefined) return undefined;
    const text =
      args.prompt ??
      (await vscode.window.showInputBox({
        title: "Kgent: Run Task",
        prompt: `What should Kgent do in ${folder.name}? (mode: ${permissionMode()})`,
        placeHolder: "e.g. make the failing test pass",
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() === "" ? "Describe the task" : undefined),
      }));
    if (text === undefined || text.trim() === "") return undefined;
    const ctx = await pickContext(folder, args.context);
    if (ctx === undefined) return undefined;
    return this.runs.start(
      { prompt: buildPrompt(text, ctx ?? undefined), workspace: folder.uri.fsPath },
      text,
      folder.uri.fsPath,
    );
  }

  /** Kgent: Resume Session. */
  async resumeSession(args: ResumeArgs): Promise<RunSummary | undefined> {
    const folder = await pickFolder();
    if (folder === undefined) return undefined;
    const client = await this.daemon.client();
    if (client === undefined) return undefined;
    let sessions: P.SessionInfo[];
    try {
      sessions = (await client.sessions(folder.uri.fsPath)).sessions;
    } catch (e) {
      void vscode.window.showErrorMessage(`Kgent: could not list sessions: ${errorOf(e).message}`);
      return undefined;
    }
    if (sessions.length === 0) {
      void vscode.window.showInformationMessage(
        `Kgent: no sessions in ${folder.name} yet. Start one with “Kgent: Run Task”.`,
      );
      return undefined;
    }
    type Item = vscode.QuickPickItem & { session: P.SessionInfo };
    const items: Item[] = sessions.map((s) => ({
      label: s.title || "(untitled)",
      description: `${relativeTime(s.updated)}${s.liveRunId ? " · running" : ""}`,
      detail: `${s.entryCount} entries · started ${localTime(s.created)} · ${s.sessionId}`,
      session: s,
    }));
    const pick = await vscode.window.showQuickPick(items, {
      title: "Kgent: Resume Session",
      placeHolder: "Pick a session to continue",
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (pick === undefined) return undefined;
    const s = pick.session;
    if (s.liveRunId) {
      void vscode.window.showWarningMessage(
        "Kgent: that session has a running task. Use “Kgent: Follow Up” or “Kgent: Steer Run” to add to it.",
      );
      return undefined;
    }
    try {
      this.output.transcript.history(await client.session(s.sessionId, true));
    } catch (e) {
      this.output.log(`[kgent] could not read session ${s.sessionId}: ${errorOf(e).message}\n`);
    }
    const text =
      args.prompt ??
      (await vscode.window.showInputBox({
        title: `Kgent: continue “${firstLine(s.title, 60)}”`,
        prompt: "What should Kgent do next in this session?",
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() === "" ? "Describe the task" : undefined),
      }));
    if (text === undefined || text.trim() === "") return undefined;
    return this.runs.start({ prompt: text, sessionId: s.sessionId }, text, s.workspace);
  }
}

/** The folder of the active editor, the only folder, or the one the user picks. */
export async function pickFolder(): Promise<vscode.WorkspaceFolder | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) {
    void vscode.window.showErrorMessage("Kgent: open a folder first: Kgent works in a workspace folder.");
    return undefined;
  }
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active !== undefined) {
    const f = vscode.workspace.getWorkspaceFolder(active);
    if (f !== undefined) return f;
  }
  if (folders.length === 1) return folders[0];
  return vscode.window.showWorkspaceFolderPick({ placeHolder: "The folder Kgent works in" });
}

/** Offer the selection or the current file as context. `undefined`: the user backed out. */
async function pickContext(
  folder: vscode.WorkspaceFolder,
  wanted?: RunTaskArgs["context"],
): Promise<PromptContext | null | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (wanted === "none" || editor === undefined || editor.document.uri.scheme !== "file") return null;
  const doc = editor.document;
  const relPath = path.relative(folder.uri.fsPath, doc.uri.fsPath) || path.basename(doc.uri.fsPath);
  const fileUri = doc.uri.toString();
  const sel = editor.selection;
  const selection: PromptContext | undefined =
    sel !== undefined && !sel.isEmpty
      ? {
          kind: "selection",
          fileUri,
          relPath,
          startLine: sel.start.line + 1,
          endLine: sel.end.line + 1,
          text: doc.getText(sel),
        }
      : undefined;
  const file: PromptContext = doc.isDirty
    ? { kind: "file", fileUri, relPath, text: doc.getText() }
    : { kind: "file", fileUri, relPath };
  if (wanted === "selection") return selection ?? file;
  if (wanted === "file") return file;
  type Item = vscode.QuickPickItem & { ctx: PromptContext | null };
  const items: Item[] = [];
  if (selection !== undefined && selection.kind === "selection") {
    items.push({
      label: "$(selection) Include the selection",
      description: `${relPath}:${selection.startLine}-${selection.endLine}`,
      ctx: selection,
    });
  }
  items.push({
    label: "$(file) Include the current file",
    description: relPath + (doc.isDirty ? " (unsaved changes included)" : ""),
    ctx: file,
  });
  items.push({ label: "$(circle-slash) No context", ctx: null });
  const pick = await vscode.window.showQuickPick(items, {
    title: "Kgent: context for this task",
    placeHolder: "Give Kgent context from the editor?",
  });
  return pick === undefined ? undefined : pick.ctx;
}
