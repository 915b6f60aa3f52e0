// Live runs: start one with a progress notification (cancellable), then summarise how it ended (open the changed
// files, the patch, the transcript); Kgent: Cancel Run, Steer Run and Follow Up.

import * as vscode from "vscode";
import { errorOf, type RunHandle, type RunOutcome } from "../client";
import { knownEvent } from "../protocol";
import type * as P from "../protocol";
import { changedFileUri, firstLine, shortId } from "../transcript";
import type { DaemonControl } from "./daemonControl";
import type { VirtualDocuments } from "./documents";
import type { Output } from "./output";
import { runParams } from "./settings";

export interface RunSummary {
  runId: string;
  sessionId: string;
  outcome: RunOutcome;
}

interface RunState {
  handle: RunHandle;
  label: string;
  workspace: string;
}

export class Runs {
  private readonly runs = new Map<string, RunState>();
  /** Told of every run that ends (the panel marks lost runs). */
  onRunEnd: ((runId: string, outcome: RunOutcome) => void) | undefined;
  /** Told of every run that starts (the panel follows it); `typed`: the prompt as the person typed it, if given. */
  onRunStart:
    | ((
        runId: string,
        sessionId: string,
        label: string,
        workspace: string,
        origin: "panel" | "task",
        typed?: string,
      ) => void)
    | undefined;

  /** `changed`: the number of live runs (shown in the status bar) changed. */
  constructor(
    private readonly daemon: DaemonControl,
    private readonly output: Output,
    private readonly docs: VirtualDocuments,
    private readonly changed: () => void,
  ) {}

  get size(): number {
    return this.runs.size;
  }

  liveRunIds(): string[] {
    return [...this.runs.keys()];
  }

  /**
   * Start a run (settings applied to `base`) and follow it to its end; `undefined` if it could not start. `quiet`:
   * no progress notification and no end-of-run message (the panel shows both). `typed`: the prompt as the person
   * typed it (the daemon expands a slash command; the panel shows what was typed).
   */
  async start(
    base: P.RunParams,
    label: string,
    workspace: string,
    quiet = false,
    typed?: string,
  ): Promise<RunSummary | undefined> {
    const client = await this.daemon.client();
    if (client === undefined) return undefined;
    let handle: RunHandle;
    try {
      handle = await client.run(runParams(base));
    } catch (e) {
      showRunError(e);
      return undefined;
    }
    const state: RunState = { handle, label: firstLine(label, 60), workspace };
    this.runs.set(handle.runId, state);
    this.onRunStart?.(handle.runId, handle.sessionId, state.label, workspace, quiet ? "panel" : "task", typed);
    this.changed();
    const outcome = quiet
      ? await handle.done
      : await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: `Kgent: ${state.label}`, cancellable: true },
          async (progress, token) => {
            const cancel = token.onCancellationRequested(() => void this.cancel(handle.runId));
            let last = "";
            const titles = new Map<string, string>();
            const sub = handle.onEvent((p) => {
              const msg = progressMessage(p, titles);
              if (msg !== undefined && msg !== last) {
                last = msg;
                progress.report({ message: msg });
              }
            });
            try {
              return await handle.done;
            } finally {
              sub.dispose();
              cancel.dispose();
            }
          },
        );
    this.runs.delete(handle.runId);
    this.onRunEnd?.(handle.runId, outcome);
    if (!this.output.disposed) {
      this.output.transcript.outcome(handle.runId, outcome);
      this.changed();
      if (!quiet) this.summarize(state, outcome);
    }
    return { runId: handle.runId, sessionId: handle.sessionId, outcome };
  }

  private summarize(state: RunState, outcome: RunOutcome): void {
    if (outcome.kind === "lost") return; // the crash message says it already
    const end = outcome.end;
    if (end.status === "settled") {
      const changed = end.changedPaths.length;
      const files = changed === 0 ? "no files changed" : `${changed} file${changed === 1 ? "" : "s"} changed`;
      const buttons = changed > 0 ? ["Open Changed Files", "Show Patch", "Show Transcript"] : ["Show Transcript"];
      const text = end.text ? `: ${firstLine(end.text, 120)}` : "";
      void vscode.window.showInformationMessage(`Kgent: done (${files})${text}`, ...buttons).then((pick) => {
        if (pick === "Open Changed Files") void openChangedFiles(state.workspace, end.changedPaths);
        else if (pick === "Show Patch") void this.showPatch(state.handle.runId, end.patch);
        else if (pick === "Show Transcript") this.output.showTranscript();
      });
    } else if (end.status === "cancelled") {
      void vscode.window.showInformationMessage("Kgent: task cancelled.", "Show Transcript").then((pick) => {
        if (pick === "Show Transcript") this.output.showTranscript();
      });
    } else {
      const why = end.error ? end.error.message : end.stopReason;
      const buttons = end.error?.code === "missing_api_key" ? ["Set API Key", "Show Transcript"] : ["Show Transcript"];
      void vscode.window.showErrorMessage(`Kgent: the task failed: ${why}`, ...buttons).then((pick) => {
        if (pick === "Set API Key") void vscode.commands.executeCommand("kgent.setApiKey");
        else if (pick === "Show Transcript") this.output.showTranscript();
      });
    }
  }

  async showPatch(runId: string, patch: string): Promise<void> {
    const uri = this.docs.add(`/${runId}/changes.diff`, patch);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  async cancel(runId: string): Promise<void> {
    const client = this.daemon.current;
    if (client === undefined) return;
    try {
      await client.cancel(runId);
    } catch (e) {
      this.output.log(`[kgent] cancel failed: ${errorOf(e).message}\n`);
    }
  }

  private async pickRun(action: string): Promise<RunState | undefined> {
    const live = [...this.runs.values()];
    if (live.length === 0) {
      void vscode.window.showInformationMessage("Kgent: no task is running.");
      return undefined;
    }
    if (live.length === 1) return live[0];
    type Item = vscode.QuickPickItem & { run: RunState };
    const pick = await vscode.window.showQuickPick<Item>(
      live.map((r) => ({ label: r.label, description: `${shortId(r.handle.runId)} · ${r.workspace}`, run: r })),
      { title: `Kgent: ${action}`, placeHolder: "Which task?" },
    );
    return pick?.run;
  }

  /** Kgent: Cancel Run. */
  async cancelRun(): Promise<void> {
    const run = await this.pickRun("Cancel Run");
    if (run !== undefined) await this.cancel(run.handle.runId);
  }

  /** Kgent: Steer Run and Kgent: Follow Up. */
  async queueMessage(kind: "steer" | "followUp"): Promise<void> {
    const run = await this.pickRun(kind === "steer" ? "Steer Run" : "Follow Up");
    if (run === undefined) return;
    const text = await vscode.window.showInputBox({
      title: kind === "steer" ? `Kgent: steer “${run.label}”` : `Kgent: follow up on “${run.label}”`,
      prompt:
        kind === "steer"
          ? "A message Kgent reads after its current step"
          : "A message Kgent reads when it would otherwise finish",
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === "" ? "Type a message" : undefined),
    });
    if (text === undefined || text.trim() === "") return;
    const client = this.daemon.current;
    if (client === undefined) {
      void vscode.window.showWarningMessage("Kgent: the daemon is not running; the task has ended.");
      return;
    }
    try {
      if (kind === "steer") await client.steer(run.handle.runId, text);
      else await client.followUp(run.handle.runId, text);
    } catch (e) {
      const err = errorOf(e);
      const msg =
        err.dataCode === "run_not_live"
          ? "that task has already finished; use “Kgent: Resume Session” to continue it."
          : err.message;
      void vscode.window.showWarningMessage(`Kgent: ${msg}`);
    }
  }
}

function showRunError(e: unknown): void {
  const err = errorOf(e);
  if (err.dataCode === "missing_api_key") {
    void vscode.window.showErrorMessage(`Kgent: ${err.message}`, "Set API Key", "Open Settings").then((pick) => {
      if (pick === "Set API Key") void vscode.commands.executeCommand("kgent.setApiKey");
      else if (pick === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "kgent");
    });
  } else if (err.dataCode === "session_busy") {
    void vscode.window.showWarningMessage(
      "Kgent: that session already has a running task. Use “Kgent: Follow Up” or “Kgent: Steer Run” to add to it, or wait for it to finish.",
    );
  } else if (err.code === -32001) {
    void vscode.window.showErrorMessage(`Kgent: ${err.message}`, "Open Settings").then((pick) => {
      if (pick === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "kgent");
    });
  } else {
    void vscode.window.showErrorMessage(`Kgent: could not start the task: ${err.message}`);
  }
}

export async function openChangedFiles(workspace: string, paths: string[]): Promise<void> {
  let chosen = paths;
  if (paths.length > 1) {
    const pick = await vscode.window.showQuickPick(paths, { title: "Kgent: changed files", canPickMany: true });
    if (pick === undefined) return;
    chosen = pick;
  }
  for (const p of chosen) {
    const uri = vscode.Uri.parse(changedFileUri(workspace, p));
    try {
      await vscode.window.showTextDocument(uri, { preview: chosen.length === 1 });
    } catch {
      void vscode.window.showWarningMessage(`Kgent: ${p} cannot be opened (deleted?).`);
    }
  }
}

/** The progress notification's message for an event (`titles` remembers tool titles by call id). */
function progressMessage(p: P.AgentEventParams, titles: Map<string, string>): string | undefined {
  const e = knownEvent(p.event);
  switch (e?.type) {
    case "tool_call":
      titles.set(e.toolCallId, e.title || e.name);
      return e.title || e.name;
    case "tool_update":
      return e.status === "in_progress" ? `${titles.get(e.toolCallId) ?? "tool"}: running…` : undefined;
    case "permission_request":
      return "waiting for your approval";
    case "message_delta":
      return e.kind === "thinking" ? "thinking…" : "writing…";
    case "retry":
      return "retrying the model call…";
    case "compaction":
      return "compacting the conversation…";
    default:
      return undefined;
  }
}
