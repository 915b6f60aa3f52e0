// The VS Code side: commands, settings, approvals (QuickPick + diff preview), transcript, status bar, progress.
// All protocol logic lives in the editor-agnostic modules (client, daemon, transcript, approval, prompt).

import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { approvalPrompt, type ApprovalChoice, type ApprovalPrompt } from "./approval";
import { describeExit, errorOf, splitCommandLine, type ExitInfo, type KgentClient, type RunHandle, type RunOutcome } from "./client";
import { DaemonManager, type DaemonConfig } from "./daemon";
import { buildPrompt, localTime, relativeTime, type PromptContext } from "./prompt";
import { knownEvent } from "./protocol";
import type * as P from "./protocol";
import { changedFileUri, firstLine, shortId, TranscriptWriter } from "./transcript";

export const SECRET_KEY = "kgent.apiKey";
export const SCHEME = "kgent";
const MODES = ["plan", "ask", "auto", "full"];

/** What `activate` returns (for other extensions and tests). */
export interface KgentApi {
  daemonPid(): number | undefined;
  liveRunIds(): string[];
}

export interface RunTaskArgs {
  prompt?: string;
  /** Skip the context question: "selection", "file" or "none". */
  context?: "selection" | "file" | "none";
}

export interface ResumeArgs {
  prompt?: string;
}

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

interface ApprovalItem extends vscode.QuickPickItem {
  choice: ApprovalChoice;
}

/** Virtual documents (diff sides, patches, call details): never written to disk. */
class VirtualDocuments implements vscode.TextDocumentContentProvider {
  private readonly docs = new Map<string, string>();
  private readonly order: string[] = [];

  add(docPath: string, text: string): vscode.Uri {
    if (!this.docs.has(docPath)) this.order.push(docPath);
    this.docs.set(docPath, text);
    while (this.order.length > 200) {
      const old = this.order.shift();
      if (old !== undefined) this.docs.delete(old);
    }
    return vscode.Uri.from({ scheme: SCHEME, path: docPath });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.path) ?? "(this Kgent preview is no longer available)\n";
  }
}

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("kgent");
}

function str(cfg: vscode.WorkspaceConfiguration, key: string): string | undefined {
  const v = cfg.get<string>(key);
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

function permissionMode(): string {
  const m = str(config(), "permissionMode") ?? "ask";
  return MODES.includes(m) ? m : "ask";
}

class KgentExtension implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly transcriptChannel: vscode.OutputChannel;
  private readonly daemonLog: vscode.OutputChannel;
  private readonly transcript: TranscriptWriter;
  private readonly status: vscode.StatusBarItem;
  private readonly docs = new VirtualDocuments();
  private readonly daemon: DaemonManager;
  private readonly runs = new Map<string, RunState>();
  private openPrompts = 0;
  private promptSeq = 0;
  private approvalQueue: Promise<void> = Promise.resolve();
  private crashed: ExitInfo | undefined;
  private disposed = false;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.transcriptChannel = vscode.window.createOutputChannel("Kgent");
    this.daemonLog = vscode.window.createOutputChannel("Kgent Daemon");
    this.transcript = new TranscriptWriter({ append: (t) => this.transcriptChannel.append(t) });
    this.status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
    this.status.command = "kgent.showTranscript";
    this.disposables.push(
      this.transcriptChannel,
      this.daemonLog,
      this.status,
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, this.docs),
    );
    this.daemon = new DaemonManager(() => this.daemonConfig(), {
      log: (t) => {
        if (!this.disposed) this.daemonLog.append(t);
      },
      onEvent: (e) => {
        if (!this.disposed) this.transcript.event(e);
      },
      decide: (params, token) => this.decide(params, token),
      onCrash: (info) => this.onCrash(info),
    });
    this.updateStatus();
    this.status.show();

    const commands: [string, (...args: unknown[]) => unknown][] = [
      ["kgent.runTask", (a) => this.runTask(asRunTaskArgs(a))],
      ["kgent.cancelRun", () => this.cancelRun()],
      ["kgent.steerRun", () => this.queueMessage("steer")],
      ["kgent.followUp", () => this.queueMessage("followUp")],
      ["kgent.resumeSession", (a) => this.resumeSession(asResumeArgs(a))],
      ["kgent.showTranscript", () => this.transcriptChannel.show(true)],
      ["kgent.setApiKey", () => this.setApiKey()],
      ["kgent.restartDaemon", () => this.restartDaemon()],
    ];
    for (const [id, fn] of commands) this.disposables.push(vscode.commands.registerCommand(id, fn));
  }

  readonly api: KgentApi = {
    daemonPid: () => this.daemon.current?.pid,
    liveRunIds: () => [...this.runs.keys()],
  };

  dispose(): void {
    this.disposed = true;
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  /** Send `exit` to the daemon and wait for it (deactivate). */
  async shutdown(): Promise<void> {
    await this.daemon.dispose();
    this.dispose();
  }

  // ------------------------------------------------------------------------------------------- daemon

  private async daemonConfig(): Promise<DaemonConfig> {
    const cfg = config();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const line = (str(cfg, "serverCommand") ?? "kgent serve --stdio")
      .replace(/\$\{workspaceFolder\}/g, folder ?? "")
      .replace(/\$\{userHome\}/g, os.homedir());
    const words = splitCommandLine(line);
    if (words.length === 0) throw new Error("kgent.serverCommand is empty");
    let command = words[0];
    if (command === "~" || command.startsWith("~/")) command = path.join(os.homedir(), command.slice(1));
    else if (!path.isAbsolute(command) && command.includes("/") && folder !== undefined) command = path.resolve(folder, command);
    const env: NodeJS.ProcessEnv = { ...process.env };
    const key = await this.context.secrets.get(SECRET_KEY);
    if (key) env.KGENT_API_KEY = key;
    const settings: P.InitializeSettings = { mode: permissionMode() };
    const provider = str(cfg, "provider");
    const model = str(cfg, "model");
    const baseUrl = str(cfg, "baseUrl");
    if (provider !== undefined) settings.provider = provider;
    if (model !== undefined) settings.model = model;
    if (baseUrl !== undefined) settings.baseUrl = baseUrl;
    const timeout = cfg.get<number | null>("approvalTimeout");
    if (typeof timeout === "number" && timeout > 0) settings.approvalTimeout = timeout;
    return { command: { command, args: words.slice(1), cwd: folder ?? os.homedir(), env }, settings };
  }

  /** The running daemon, started (or restarted after a crash, saying so) if needed. */
  private async client(): Promise<KgentClient | undefined> {
    const crashed = this.crashed;
    try {
      const ensured = await this.daemon.ensure();
      if (ensured.started) {
        this.crashed = undefined;
        const info = ensured.client.initializeResult.serverInfo;
        this.daemonLog.append(`[kgent] daemon started: ${info.name} ${info.version ?? ""} (pid ${ensured.client.pid ?? "?"})\n`);
        if (crashed !== undefined || ensured.restartedAfter !== undefined) {
          const why = describeExit(ensured.restartedAfter ?? crashed);
          const msg = `Kgent: the daemon had stopped unexpectedly (${why}); it has been restarted.`;
          this.transcript.note(`↻ ${msg.slice(7)}`);
          void vscode.window.showInformationMessage(msg);
        }
      }
      this.updateStatus();
      return ensured.client;
    } catch (e) {
      const err = errorOf(e);
      this.daemonLog.append(`[kgent] could not start the daemon: ${err.message}\n`);
      void vscode.window
        .showErrorMessage(`Kgent: could not start the daemon: ${err.message}`, "Open Settings", "Show Daemon Log")
        .then((pick) => {
          if (pick === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "kgent.serverCommand");
          else if (pick === "Show Daemon Log") this.daemonLog.show(true);
        });
      this.updateStatus();
      return undefined;
    }
  }

  private onCrash(info: ExitInfo): void {
    this.crashed = info;
    const why = describeExit(info);
    this.daemonLog.append(`[kgent] the daemon exited unexpectedly (${why})\n`);
    this.transcript.note(`✗ The Kgent daemon exited unexpectedly (${why}). It will be restarted on your next Kgent command.`);
    this.updateStatus();
    void vscode.window
      .showErrorMessage(
        `Kgent: the daemon exited unexpectedly (${why}). It will be restarted on your next Kgent command.`,
        "Restart Now",
        "Show Daemon Log",
      )
      .then((pick) => {
        if (pick === "Restart Now") void this.client();
        else if (pick === "Show Daemon Log") this.daemonLog.show(true);
      });
  }

  private async restartDaemon(): Promise<void> {
    const live = this.runs.size;
    if (live > 0) {
      const ok = await vscode.window.showWarningMessage(
        `Restarting the Kgent daemon cancels ${live} running task${live === 1 ? "" : "s"}.`,
        { modal: true },
        "Restart",
      );
      if (ok !== "Restart") return;
    }
    try {
      const ensured = await this.daemon.restart();
      this.crashed = undefined;
      this.daemonLog.append(`[kgent] daemon restarted (pid ${ensured.client.pid ?? "?"})\n`);
      this.transcript.note("↻ Kgent daemon restarted.");
      void vscode.window.showInformationMessage("Kgent: daemon restarted.");
    } catch (e) {
      void vscode.window.showErrorMessage(`Kgent: could not restart the daemon: ${errorOf(e).message}`);
    }
    this.updateStatus();
  }

  // ------------------------------------------------------------------------------------------- status

  private updateStatus(): void {
    const runs = this.runs.size;
    if (this.openPrompts > 0) {
      this.status.text = "$(bell) Kgent: waiting for approval";
      this.status.tooltip = "Kgent is waiting for you to approve or reject a tool call";
      this.status.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
    } else if (runs > 0) {
      this.status.text = `$(sync~spin) Kgent: running${runs > 1 ? ` (${runs})` : ""}`;
      this.status.tooltip = "Kgent is working: click for the transcript";
      this.status.backgroundColor = undefined;
    } else if (this.crashed !== undefined) {
      this.status.text = "$(warning) Kgent: daemon stopped";
      this.status.tooltip = "The Kgent daemon exited; it restarts on the next Kgent command";
      this.status.backgroundColor = undefined;
    } else {
      this.status.text = "$(hubot) Kgent: idle";
      this.status.tooltip = "Kgent: click for the transcript";
      this.status.backgroundColor = undefined;
    }
  }

  // ------------------------------------------------------------------------------------------- run task

  private async pickFolder(): Promise<vscode.WorkspaceFolder | undefined> {
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
  private async pickContext(folder: vscode.WorkspaceFolder, wanted?: RunTaskArgs["context"]): Promise<PromptContext | null | undefined> {
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
    const file: PromptContext = doc.isDirty ? { kind: "file", fileUri, relPath, text: doc.getText() } : { kind: "file", fileUri, relPath };
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
    items.push({ label: "$(file) Include the current file", description: relPath + (doc.isDirty ? " (unsaved changes included)" : ""), ctx: file });
    items.push({ label: "$(circle-slash) No context", ctx: null });
    const pick = await vscode.window.showQuickPick(items, { title: "Kgent: context for this task", placeHolder: "Give Kgent context from the editor?" });
    return pick === undefined ? undefined : pick.ctx;
  }

  private async runTask(args: RunTaskArgs): Promise<RunSummary | undefined> {
    const folder = await this.pickFolder();
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
    const ctx = await this.pickContext(folder, args.context);
    if (ctx === undefined) return undefined;
    return this.startRun({ prompt: buildPrompt(text, ctx ?? undefined), workspace: folder.uri.fsPath }, text, folder.uri.fsPath);
  }

  private runParams(base: P.RunParams): P.RunParams {
    const cfg = config();
    const params: P.RunParams = { ...base, mode: permissionMode() };
    const provider = str(cfg, "provider");
    const model = str(cfg, "model");
    if (provider !== undefined) params.provider = provider;
    if (model !== undefined) params.model = model;
    return params;
  }

  private async startRun(base: P.RunParams, label: string, workspace: string): Promise<RunSummary | undefined> {
    const client = await this.client();
    if (client === undefined) return undefined;
    let handle: RunHandle;
    try {
      handle = await client.run(this.runParams(base));
    } catch (e) {
      this.showRunError(e);
      return undefined;
    }
    const state: RunState = { handle, label: firstLine(label, 60), workspace };
    this.runs.set(handle.runId, state);
    this.updateStatus();
    const outcome = await vscode.window.withProgress(
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
    if (!this.disposed) {
      this.transcript.outcome(handle.runId, outcome);
      this.updateStatus();
      this.summarize(state, outcome);
    }
    return { runId: handle.runId, sessionId: handle.sessionId, outcome };
  }

  private showRunError(e: unknown): void {
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

  private summarize(state: RunState, outcome: RunOutcome): void {
    if (outcome.kind === "lost") return; // the crash message says it already
    const end = outcome.end;
    if (end.status === "settled") {
      const changed = end.changedPaths.length;
      const files = changed === 0 ? "no files changed" : `${changed} file${changed === 1 ? "" : "s"} changed`;
      const buttons = changed > 0 ? ["Open Changed Files", "Show Patch", "Show Transcript"] : ["Show Transcript"];
      const text = end.text ? `: ${firstLine(end.text, 120)}` : "";
      void vscode.window.showInformationMessage(`Kgent: done (${files})${text}`, ...buttons).then((pick) => {
        if (pick === "Open Changed Files") void this.openChangedFiles(state.workspace, end.changedPaths);
        else if (pick === "Show Patch") void this.showPatch(state.handle.runId, end.patch);
        else if (pick === "Show Transcript") this.transcriptChannel.show(true);
      });
    } else if (end.status === "cancelled") {
      void vscode.window.showInformationMessage("Kgent: task cancelled.", "Show Transcript").then((pick) => {
        if (pick === "Show Transcript") this.transcriptChannel.show(true);
      });
    } else {
      const why = end.error ? end.error.message : end.stopReason;
      const buttons = end.error?.code === "missing_api_key" ? ["Set API Key", "Show Transcript"] : ["Show Transcript"];
      void vscode.window.showErrorMessage(`Kgent: the task failed: ${why}`, ...buttons).then((pick) => {
        if (pick === "Set API Key") void vscode.commands.executeCommand("kgent.setApiKey");
        else if (pick === "Show Transcript") this.transcriptChannel.show(true);
      });
    }
  }

  private async openChangedFiles(workspace: string, paths: string[]): Promise<void> {
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

  private async showPatch(runId: string, patch: string): Promise<void> {
    const uri = this.docs.add(`/${runId}/changes.diff`, patch);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  // ------------------------------------------------------------------------------------------- run control

  private async cancel(runId: string): Promise<void> {
    const client = this.daemon.current;
    if (client === undefined) return;
    try {
      await client.cancel(runId);
    } catch (e) {
      this.daemonLog.append(`[kgent] cancel failed: ${errorOf(e).message}\n`);
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

  private async cancelRun(): Promise<void> {
    const run = await this.pickRun("Cancel Run");
    if (run !== undefined) await this.cancel(run.handle.runId);
  }

  private async queueMessage(kind: "steer" | "followUp"): Promise<void> {
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
      const msg = err.dataCode === "run_not_live" ? "that task has already finished; use “Kgent: Resume Session” to continue it." : err.message;
      void vscode.window.showWarningMessage(`Kgent: ${msg}`);
    }
  }

  private async resumeSession(args: ResumeArgs): Promise<RunSummary | undefined> {
    const folder = await this.pickFolder();
    if (folder === undefined) return undefined;
    const client = await this.client();
    if (client === undefined) return undefined;
    let sessions: P.SessionInfo[];
    try {
      sessions = (await client.sessions(folder.uri.fsPath)).sessions;
    } catch (e) {
      void vscode.window.showErrorMessage(`Kgent: could not list sessions: ${errorOf(e).message}`);
      return undefined;
    }
    if (sessions.length === 0) {
      void vscode.window.showInformationMessage(`Kgent: no sessions in ${folder.name} yet. Start one with “Kgent: Run Task”.`);
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
      this.transcript.history(await client.session(s.sessionId, true));
    } catch (e) {
      this.daemonLog.append(`[kgent] could not read session ${s.sessionId}: ${errorOf(e).message}\n`);
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
    return this.startRun({ prompt: text, sessionId: s.sessionId }, text, s.workspace);
  }

  // ------------------------------------------------------------------------------------------- api key

  private async setApiKey(): Promise<void> {
    const provider = str(config(), "provider") ?? "your provider";
    const key = await vscode.window.showInputBox({
      title: "Kgent: Set API Key",
      prompt: `API key for ${provider}. Stored in VS Code's secret storage and given to the Kgent daemon as KGENT_API_KEY. Leave empty to remove the stored key.`,
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return;
    if (key.trim() === "") {
      await this.context.secrets.delete(SECRET_KEY);
    } else {
      await this.context.secrets.store(SECRET_KEY, key.trim());
    }
    const now = await this.daemon.stopIfIdle();
    const when = now ? "" : " It applies once the running tasks finish.";
    void vscode.window.showInformationMessage(
      key.trim() === "" ? `Kgent: API key removed.${when}` : `Kgent: API key saved in VS Code's secret storage.${when}`,
    );
  }

  // ------------------------------------------------------------------------------------------- approvals

  private async decide(params: P.PermissionParams, token: vscode.CancellationToken): Promise<P.PermissionResult> {
    this.openPrompts++;
    this.updateStatus();
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
        return await this.showApproval(params, token);
      } finally {
        withdrawn?.dispose();
        release();
      }
    } finally {
      this.openPrompts--;
      this.updateStatus();
    }
  }

  private showApproval(params: P.PermissionParams, token: vscode.CancellationToken): Promise<P.PermissionResult> {
    const prompt = approvalPrompt(params);
    const n = ++this.promptSeq;
    const prefix = `/prompt-${n}/`;
    const qp = vscode.window.createQuickPick<ApprovalItem>();
    qp.title = prompt.title;
    qp.placeholder = prompt.placeholder;
    qp.ignoreFocusOut = true;
    qp.matchOnDescription = false;
    const items: ApprovalItem[] = prompt.choices.map((choice) => ({
      label: choice.label,
      description: choice.description,
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
        void this.closePreviews(prefix);
        resolve(result);
      };
      subs.push(
        qp.onDidAccept(() => {
          const item = qp.selectedItems[0] ?? qp.activeItems[0];
          if (item === undefined) return;
          const c = item.choice;
          if (c.kind === "option") finish({ outcome: "selected", optionId: c.optionId });
          else void this.showPreview(prompt, c.kind, prefix);
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

  private async showPreview(prompt: ApprovalPrompt, kind: "diff" | "details", prefix: string): Promise<void> {
    try {
      const pv = prompt.preview;
      if (kind === "diff" && pv !== undefined && pv.kind === "sides") {
        const left = this.docs.add(`${prefix}current/${pv.fileName}`, pv.before);
        const right = this.docs.add(`${prefix}proposed/${pv.fileName}`, pv.after);
        const title = `${pv.fileName}: ${pv.isNewFile ? "new file" : "current ↔ proposed"} (Kgent)`;
        await vscode.commands.executeCommand("vscode.diff", left, right, title, { preview: true, preserveFocus: true });
        return;
      }
      const text = kind === "diff" && pv !== undefined && pv.kind === "unified" ? pv.diff : prompt.details;
      const uri = this.docs.add(`${prefix}${kind === "diff" ? "proposed.diff" : "details.txt"}`, text);
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: true });
    } catch (e) {
      this.daemonLog.append(`[kgent] could not open the preview: ${errorOf(e).message}\n`);
    }
  }

  /** Close the preview editors of a prompt once it is answered or withdrawn. */
  private async closePreviews(prefix: string): Promise<void> {
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

let current: KgentExtension | undefined;

export function activate(context: vscode.ExtensionContext): KgentApi {
  const ext = new KgentExtension(context);
  current = ext;
  context.subscriptions.push(ext);
  return ext.api;
}

export async function deactivate(): Promise<void> {
  const ext = current;
  current = undefined;
  if (ext !== undefined) await ext.shutdown();
}
