// The palette commands (package.json `contributes.commands`), and their arguments when run from code or a keybinding.

import * as vscode from "vscode";
import type { ResumeArgs, RunTaskArgs } from "./tasks";

export interface CommandHandlers {
  runTask(args: RunTaskArgs): unknown;
  cancelRun(): unknown;
  queueMessage(kind: "steer" | "followUp"): unknown;
  resumeSession(args: ResumeArgs): unknown;
  continueSession(): unknown;
  showTranscript(): unknown;
  setApiKey(): unknown;
  restartDaemon(): unknown;
  focusPanel(): unknown;
  runOnSelection(): unknown;
  chooseMode(): unknown;
  chooseModel(): unknown;
  exportSession(): unknown;
}

/** Commands that would let Kgent read, write or run in the folder: refused, with a word, in Restricted Mode. */
const NEEDS_TRUST = new Set([
  "kgent.runTask",
  "kgent.steerRun",
  "kgent.followUp",
  "kgent.resumeSession",
  "kgent.continueSession",
  "kgent.runOnSelection",
  "kgent.exportSession",
]);

function refuseUntrusted(): void {
  void vscode.window
    .showWarningMessage(
      "Kgent is off in Restricted Mode: it reads, edits and runs commands in the folder. Trust the folder to use it.",
      "Manage Workspace Trust",
    )
    .then((pick) => {
      if (pick !== undefined) void vscode.commands.executeCommand("workbench.trust.manage");
    });
}

export function registerCommands(h: CommandHandlers): vscode.Disposable[] {
  const commands: [string, (...args: unknown[]) => unknown][] = [
    ["kgent.runTask", (a) => h.runTask(asRunTaskArgs(a))],
    ["kgent.cancelRun", () => h.cancelRun()],
    ["kgent.steerRun", () => h.queueMessage("steer")],
    ["kgent.followUp", () => h.queueMessage("followUp")],
    ["kgent.resumeSession", (a) => h.resumeSession(asResumeArgs(a))],
    ["kgent.continueSession", () => h.continueSession()],
    ["kgent.showTranscript", () => h.showTranscript()],
    ["kgent.setApiKey", () => h.setApiKey()],
    ["kgent.restartDaemon", () => h.restartDaemon()],
    ["kgent.focusPanel", () => h.focusPanel()],
    ["kgent.runOnSelection", () => h.runOnSelection()],
    ["kgent.chooseMode", () => h.chooseMode()],
    ["kgent.chooseModel", () => h.chooseModel()],
    ["kgent.exportSession", () => h.exportSession()],
  ];
  return commands.map(([id, fn]) =>
    vscode.commands.registerCommand(id, (...args: unknown[]) => {
      if (NEEDS_TRUST.has(id) && !vscode.workspace.isTrusted) return refuseUntrusted();
      return fn(...args);
    }),
  );
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

function asRunTaskArgs(a: unknown): RunTaskArgs {
  if (typeof a === "string") return { prompt: a };
  if (!isRecord(a)) return {};
  const out: RunTaskArgs = {};
  if (typeof a.prompt === "string") out.prompt = a.prompt;
  if (a.context === "selection" || a.context === "file" || a.context === "none") out.context = a.context;
  return out;
}

function asResumeArgs(a: unknown): ResumeArgs {
  return isRecord(a) && typeof a.prompt === "string" ? { prompt: a.prompt } : {};
}
