// The palette commands (package.json `contributes.commands`), and their arguments when run from code or a keybinding.

import * as vscode from "vscode";
import type { ResumeArgs, RunTaskArgs } from "./tasks";

export interface CommandHandlers {
  runTask(args: RunTaskArgs): unknown;
  cancelRun(): unknown;
  queueMessage(kind: "steer" | "followUp"): unknown;
  resumeSession(args: ResumeArgs): unknown;
  showTranscript(): unknown;
  setApiKey(): unknown;
  restartDaemon(): unknown;
}

export function registerCommands(h: CommandHandlers): vscode.Disposable[] {
  const commands: [string, (...args: unknown[]) => unknown][] = [
    ["kgent.runTask", (a) => h.runTask(asRunTaskArgs(a))],
    ["kgent.cancelRun", () => h.cancelRun()],
    ["kgent.steerRun", () => h.queueMessage("steer")],
    ["kgent.followUp", () => h.queueMessage("followUp")],
    ["kgent.resumeSession", (a) => h.resumeSession(asResumeArgs(a))],
    ["kgent.showTranscript", () => h.showTranscript()],
    ["kgent.setApiKey", () => h.setApiKey()],
    ["kgent.restartDaemon", () => h.restartDaemon()],
  ];
  return commands.map(([id, fn]) => vscode.commands.registerCommand(id, fn));
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
