// The VS Code side, wired together here: `activate` builds one part per UI concern (src/ui/: output channels, status
// bar, approvals, daemon lifecycle, runs, tasks, commands), `deactivate` ends the daemon. All protocol logic lives in
// the editor-agnostic modules (client, daemon, transcript, approval, prompt).

import * as vscode from "vscode";
import type * as P from "./protocol";
import { ApprovalDiffCommands } from "./ui/approvalDiff";
import { ApprovalEdits } from "./ui/approvalEdit";
import { Approvals } from "./ui/approvals";
import { registerCommands } from "./ui/commands";
import { DaemonControl } from "./ui/daemonControl";
import { SCHEME, VirtualDocuments } from "./ui/documents";
import { Output } from "./ui/output";
import { Panel } from "./ui/panel";
import { PermissionsView } from "./ui/permissionsView";
import { Runs } from "./ui/runs";
import { Buffers } from "./ui/buffers";
import { EditorDiagnostics } from "./ui/diagnostics";
import { exportSession } from "./ui/exportSession";
import { Instructions } from "./ui/instructions";
import { Review } from "./ui/review";
import { approvalUi, chooseMode, chooseModel, daemonConfig, setApiKey } from "./ui/settings";
import { ChoicesStatus, StatusBar } from "./ui/status";
import { Tasks } from "./ui/tasks";

export { SCHEME } from "./ui/documents";
export type { RunSummary } from "./ui/runs";
export { SECRET_KEY } from "./ui/settings";
export type { ResumeArgs, RunTaskArgs } from "./ui/tasks";

/** What `activate` returns (for other extensions and tests). */
export interface KgentApi {
  daemonPid(): number | undefined;
  liveRunIds(): string[];
  /** The request ids of the approval cards waiting in the panel. */
  pendingApprovals(): string[];
}

class KgentExtension implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private readonly daemon: DaemonControl;
  readonly api: KgentApi;

  constructor(context: vscode.ExtensionContext) {
    const output = new Output();
    const docs = new VirtualDocuments();
    // The parts report changes through `changed`; the status bar reads them back (all are built before it is used).
    const status = new StatusBar(() => ({
      trusted: vscode.workspace.isTrusted,
      waitingApprovals: approvals.waiting + panel.waiting,
      liveRuns: runs.size,
      daemonStopped: daemon.crashed,
      startError: daemon.lastStartError,
      sandbox: daemon.current?.initializeResult.capabilities.sandbox,
      sandboxReason: daemon.current?.initializeResult.capabilities.sandboxReason,
    }));
    const changed = (): void => status.update();
    this.disposables.push(output, status, vscode.workspace.registerTextDocumentContentProvider(SCHEME, docs));
    const edits = new ApprovalEdits(() => daemon.current?.initializeResult.capabilities);
    const approvals = new Approvals(docs, output, changed, edits);
    const daemon: DaemonControl = new DaemonControl({
      config: () => daemonConfig(context.secrets),
      output,
      // Approvals are cards in the panel, unless the person prefers the QuickPick (kgent.approvalUi).
      decide: (params, token): Promise<P.PermissionResult> =>
        approvalUi() === "quickPick" ? approvals.decide(params, token) : panel.decide(params, token),
      changed,
      onEvent: (e) => {
        panel.onEvent(e);
        permissions.onEvent(e);
      },
      files: new Buffers(),
      diagnostics: new EditorDiagnostics(),
    });
    const runs = new Runs(daemon, output, docs, changed);
    const tasks = new Tasks(runs, daemon, output);
    const panel: Panel = new Panel(context.extensionUri, daemon, runs, approvals, changed, edits);
    const choices = new ChoicesStatus();
    const review = new Review(daemon, () => panel.model.lastChangingRun());
    // The Permissions view: the folder's rules by scope (agent/rules); session rules are the panel's conversation's.
    const permissions: PermissionsView = new PermissionsView(
      () => (vscode.workspace.isTrusted ? daemon.client() : Promise.resolve(undefined)),
      () => panel.model.sessionId,
    );
    const instructions = new Instructions(daemon, () => panel.model.sessionId);
    const diffAnswers = new ApprovalDiffCommands(panel, edits);
    this.disposables.push(panel, choices, review, edits, permissions, instructions, diffAnswers);
    this.daemon = daemon;
    this.api = {
      daemonPid: () => daemon.current?.pid,
      liveRunIds: () => runs.liveRunIds(),
      pendingApprovals: () => panel.model.pendingApprovals().map((a) => a.requestId),
    };
    status.update();
    status.show();
    choices.update();
    // Start the daemon now, in the background (its Python start-up takes about a second): the first message then
    // runs at once. Not in Restricted Mode, where Kgent is off; a failure shows in the status bar and the panel.
    if (vscode.workspace.isTrusted) void daemon.prewarm();

    this.disposables.push(
      ...registerCommands({
        runTask: (args) => tasks.runTask(args),
        cancelRun: () => runs.cancelRun(),
        queueMessage: (kind) => runs.queueMessage(kind),
        resumeSession: (args) => tasks.resumeSession(args),
        continueSession: () => panel.continueLatest(),
        showTranscript: () => output.showTranscript(),
        setApiKey: () => setApiKey(context.secrets, () => daemon.stopIfIdle()),
        restartDaemon: () => daemon.restart(runs.size),
        focusPanel: () => panel.reveal(true),
        runOnSelection: () => panel.runOnSelection(),
        chooseMode: () => chooseMode(),
        chooseModel: () => chooseModel(daemon.current?.initializeResult.capabilities),
        exportSession: () => exportSession(daemon, panel.model.sessionId),
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("kgent")) choices.update();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        status.update();
        void daemon.prewarm();
      }),
    );
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  /** Send `exit` to the daemon and wait for it (deactivate). */
  async shutdown(): Promise<void> {
    await this.daemon.dispose();
    this.dispose();
  }
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
