// The Kgent view (activity bar): a webview with a strict Content-Security-Policy that shows the conversation, tool
// cards, approval cards and the controls. The page (webview/main.ts) renders PanelModel snapshots, posted whole once
// and then as patches (what changed); this side runs what the person asks for and answers approvals.

import * as fs from "node:fs/promises";
import * as path from "node:path";
import * as vscode from "vscode";
import { errorOf, type RunOutcome } from "../client";
import { type PastedImage, withImages } from "../images";
import { mentionFor, promptWithMentions } from "../mentions";
import { PageMirror, parseFromPage, type FromPage, type ToPage } from "../panelMessages";
import { PanelModel } from "../panelModel";
import type * as P from "../protocol";
import { firstLine } from "../transcript";
import { approvalDiff, cardPrefix } from "./approvalDiff";
import type { ApprovalEdits, SelectedWithText } from "./approvalEdit";
import type { Approvals } from "./approvals";
import type { DaemonControl } from "./daemonControl";
import { PanelCommands } from "./panelCommands";
import { rewindAt } from "./panelRewind";
import { panelHtml } from "./panelHtml";
import { PanelSessions } from "./panelSessions";
import { openChangedFiles, type Runs } from "./runs";
import { currentModel, permissionMode, providerSetting, setModelNow } from "./settings";
import { sandboxStatus } from "../usage";
import { pickFolder } from "./tasks";

export const VIEW_ID = "kgent.panel";
const MAX_ATTACHMENT_BYTES = 256 * 1024;

interface Pending {
  params: P.PermissionParams;
  /** Settle the card; false when it was already settled. */
  resolve(result: P.PermissionResult): boolean;
}

export class Panel implements vscode.WebviewViewProvider, vscode.Disposable {
  readonly model = new PanelModel();
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private postTimer: NodeJS.Timeout | undefined;
  /** What the page holds: the state is posted whole to a new page, then only what changed (issue 37). */
  private readonly mirror = new PageMirror();
  private readonly pending = new Map<string, Pending>();
  private readonly patches = new Map<string, string>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly sessions: PanelSessions;
  private readonly commands: PanelCommands;
  /** The resumed session's own provider and model (what its runs used), until another model is picked. */
  private sessionModel: { sessionId: string; provider?: string; model?: string } | undefined;
  private lastCaps: P.ServerCapabilities | undefined;
  /** Queued messages runs ended without reading, on their way back into the input. */
  private readonly unread: string[] = [];

  /** `changed`: the number of waiting approvals (shown in the status bar) changed. */
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly daemon: DaemonControl,
    private readonly runs: Runs,
    private readonly approvals: Approvals,
    private readonly changed: () => void,
    private readonly edits?: ApprovalEdits,
  ) {
    this.model.trusted = vscode.workspace.isTrusted;
    this.sessions = new PanelSessions(
      daemon,
      this.model,
      () => this.refresh(),
      (m) => this.post(m),
    );
    this.sessions.afterPick = () => this.useSessionModel();
    this.commands = new PanelCommands(
      daemon,
      this.model,
      () => this.refresh(),
      (m) => this.post(m),
      {
        newConversation: () => this.newConversation(),
        useMode: (mode) => this.setMode(mode),
        useModel: (model) => this.setModel(model),
      },
    );
    this.disposables.push(
      vscode.window.registerWebviewViewProvider(VIEW_ID, this, { webviewOptions: { retainContextWhenHidden: true } }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.model.trusted = true;
        // The page's first words depend on trust (ui/panel.ts html): a new page, which asks for the state again.
        if (this.view !== undefined) {
          this.ready = false;
          this.view.webview.html = panelHtml(this.view.webview, this.extensionUri, vscode.workspace.isTrusted);
        }
        this.refresh();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("kgent")) void this.loadChoices(false);
      }),
    );
    if (edits !== undefined) {
      this.disposables.push(
        edits.onDidEdit((requestId) => {
          this.model.approvalEdited(requestId);
          this.refresh();
        }),
      );
    }
    runs.onRunStart = (runId, sessionId, label, workspace, origin, typed) => {
      this.model.runStarted(runId, sessionId, label, workspace, origin, typed);
      this.refresh();
    };
    runs.onRunEnd = (runId, outcome) => this.runEnded(runId, outcome);
  }

  /** Approval cards waiting for an answer. */
  get waiting(): number {
    return this.pending.size;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    view.webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
    view.webview.html = panelHtml(view.webview, this.extensionUri, vscode.workspace.isTrusted);
    view.webview.onDidReceiveMessage((m: unknown) => {
      const msg = parseFromPage(m);
      if (msg !== undefined) void this.onMessage(msg);
    });
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
    });
  }

  /** Post the model to the page, at most every 50 ms (streamed deltas come much faster). */
  refresh(): void {
    if (this.postTimer !== undefined) return;
    this.postTimer = setTimeout(() => {
      this.postTimer = undefined;
      this.postState();
    }, 50);
  }

  /** What changed since the page's state (all of it for a new page), if anything did. */
  private postState(): void {
    const view = this.view;
    if (view === undefined || !this.ready) return; // a page not there yet gets the whole state when it is ready
    const m = this.mirror.next(this.model.snapshot());
    if (m === undefined) return;
    // Lost (the page went away meanwhile): the next message is the whole state, so no later patch misses it.
    const lost = (): void => this.mirror.reset();
    void view.webview.postMessage(m).then((delivered) => {
      if (!delivered) lost();
    }, lost);
  }

  private post(m: ToPage): void {
    if (this.view !== undefined && this.ready) void this.view.webview.postMessage(m);
  }

  /** Show the view (and focus its input). */
  async reveal(focusInput: boolean): Promise<void> {
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    if (focusInput) this.post({ type: "focusInput" });
  }

  onEvent(params: P.AgentEventParams): void {
    this.model.event(params);
    this.giveBackUnread();
    this.refresh();
  }

  private runEnded(runId: string, outcome: RunOutcome): void {
    if (outcome.kind === "lost") this.model.runLost(runId, outcome.reason);
    else {
      this.patches.set(runId, outcome.end.patch);
      if (outcome.end.sessionId === this.model.sessionId) void this.readSessionUsage(outcome.end.sessionId);
    }
    this.giveBackUnread();
    this.refresh();
  }

  /**
   * A run ended (Stop, Kgent: Cancel Run, a failure, a lost daemon) with steering or follow-ups it never read: their
   * text goes back into the input, after what it holds (the model's note says so).
   */
  private giveBackUnread(): void {
    this.unread.push(...this.model.takeUnread());
    // Kept until the page is there to take them (a panel closed meanwhile gets them when it opens).
    if (this.unread.length === 0 || this.view === undefined || !this.ready) return;
    this.post({ type: "setInput", text: this.unread.splice(0).join("\n\n"), append: true });
  }

  /** The conversation's total so far, as the daemon counts and words it (`agent/session`'s `usage`). */
  private async readSessionUsage(sessionId: string): Promise<void> {
    try {
      const session = await this.daemon.current?.session(sessionId, true);
      if (session === undefined || this.model.sessionId !== sessionId) return;
      this.model.sessionUsage = session.usage;
      this.refresh();
    } catch {
      // the daemon went away: the line keeps the total it had
    }
  }

  /** Answer an `agent/permission` request with a card in the panel; `token` fires when the daemon withdraws it. */
  decide(params: P.PermissionParams, token: vscode.CancellationToken): Promise<P.PermissionResult> {
    const timeout = this.daemon.current?.initializeResult.capabilities.features?.approvalTimeout;
    const deadline = typeof timeout === "number" && timeout > 0 ? Date.now() + timeout * 1000 : undefined;
    const canOpenDiff =
      typeof params.toolCall.newText === "string" ||
      (typeof params.toolCall.diff === "string" && params.toolCall.diff !== "");
    const editable = this.edits?.editable(params) === true;
    const card = this.model.approvalRequested(params, deadline, canOpenDiff);
    if (editable) card.canEdit = true;
    this.refresh();
    void this.reveal(false);
    return new Promise<P.PermissionResult>((resolve) => {
      const sub = token.onCancellationRequested(() => finish({ outcome: "cancelled" }));
      const finish = (result: P.PermissionResult): boolean => {
        if (!this.pending.delete(params.requestId)) return false;
        sub.dispose();
        const option =
          result.outcome === "selected" ? params.options.find((o) => o.optionId === result.optionId) : undefined;
        const edited = option !== undefined && typeof (result as SelectedWithText).newText === "string";
        this.model.approvalSettled(
          params.requestId,
          option === undefined ? undefined : edited ? `${option.name}, with your changes` : option.name,
        );
        // The editable proposal is saved and closed first (closing a changed document would ask), then the rest.
        void (this.edits?.release(params.requestId) ?? Promise.resolve()).then(() =>
          this.approvals.closePreviews(cardPrefix(params.requestId)),
        );
        this.refresh();
        this.changed();
        resolve(option !== undefined ? result : { outcome: "cancelled" });
        return true;
      };
      this.pending.set(params.requestId, { params, resolve: finish });
      if (editable) this.edits?.register(params, finish, cardPrefix(params.requestId));
      this.changed();
      if (token.isCancellationRequested) finish({ outcome: "cancelled" });
      // An edit is reviewed where the code is: its diff opens in the editor, answerable from its title bar.
      else if (canOpenDiff && approvalDiff() === "editor")
        void this.approvals.openPreview(params, cardPrefix(params.requestId), true);
    });
  }

  /** A pending card's request (the diff editor's title bar answers it too). */
  params(requestId: string): P.PermissionParams | undefined {
    return this.pending.get(requestId)?.params;
  }

  /** Answer a pending card (the page's buttons; also for tests and keybindings). */
  answer(requestId: string, optionId: string): boolean {
    const p = this.pending.get(requestId);
    if (p === undefined) return false;
    return p.resolve({ outcome: "selected", optionId });
  }

  private async onMessage(m: FromPage): Promise<void> {
    switch (m.type) {
      case "ready":
        // A page (re)loaded: it holds nothing, it gets the whole state.
        this.ready = true;
        this.mirror.reset();
        this.postState();
        this.giveBackUnread();
        await this.loadChoices(true);
        return;
      case "send":
        return this.send(m.text, m.as, m.images);
      case "stop": {
        // What was queued for those runs and never read comes back into the box when each ends (giveBackUnread).
        const ids = m.runId !== undefined ? [m.runId] : this.model.liveRuns.map((r) => r.runId);
        for (const id of ids) await this.runs.cancel(id);
        return;
      }
      case "answer":
        this.answer(m.requestId, m.optionId);
        return;
      case "acceptMine": {
        const uri = this.edits?.uriFor(m.requestId);
        if (uri !== undefined) await this.edits?.acceptMine(uri);
        return;
      }
      case "openDiff": {
        const p = this.pending.get(m.requestId);
        if (p !== undefined) await this.approvals.openPreview(p.params, cardPrefix(m.requestId));
        return;
      }
      case "openFile":
        return openChangedFiles(m.workspace, [m.path]);
      case "review":
        await vscode.commands.executeCommand("kgent.reviewChanges", { sessionId: m.sessionId, runId: m.runId });
        return;
      case "showPatch":
        return this.runs.showPatch(m.runId, this.patches.get(m.runId) ?? "");
      case "setMode":
        return this.setMode(m.mode);
      case "setModel":
        return this.setModel(m.model);
      case "newConversation":
        return this.newConversation();
      case "history":
        return this.sessions.history();
      case "resume":
        return this.sessions.resume(m.sessionId, m.title).then(() => this.useSessionModel());
      case "fork":
        return this.sessions.fork(m.sessionId, m.title).then(() => this.useSessionModel());
      case "forkAt":
        return this.sessions.forkAt(m.sessionId, m.entryId).then(() => this.useSessionModel());
      case "rewindAt":
        return this.rewindAt(m.sessionId, m.entryId);
      case "clearQueue":
        return this.clearQueue(m.runId);
      case "attachSelection":
        return this.attachSelection();
      case "listCommands":
        return this.commands.list();
    }
  }

  /** The mode picker (and `/mode NAME`): the `kgent.permissionMode` setting, for the next runs. */
  private async setMode(mode: string): Promise<void> {
    if (mode !== "")
      await vscode.workspace
        .getConfiguration("kgent")
        .update("permissionMode", mode, vscode.ConfigurationTarget.Global);
  }

  /** The model picker (and `/model ID`): in effect at once, for a message sent before the setting is written. */
  private async setModel(model: string): Promise<void> {
    this.sessionModel = undefined;
    await setModelNow(model);
  }

  /** New (and `/clear`): the next message starts a new session; the old one stays in History. */
  private newConversation(): void {
    this.model.clear();
    this.sessionModel = undefined;
    void this.loadChoices(false);
    this.refresh();
  }

  /** Restore checkpoint (ui/panelRewind.ts): the files back as before the message, the conversation forked there. */
  private async rewindAt(sessionId: string, entryId: string): Promise<void> {
    const client = await this.daemon.client();
    if (client !== undefined) await rewindAt(client, this.model, (m) => this.post(m), sessionId, entryId);
    this.refresh();
  }

  /** A resumed (or forked) session goes on with its own provider and model, until another model is picked. */
  private useSessionModel(): void {
    this.sessionModel = this.sessions.lastModel;
    void this.loadChoices(false);
  }

  /** The mode and model pickers: modes and models come from the daemon's `initialize` answer. */
  private async loadChoices(start: boolean): Promise<void> {
    const client = start && this.model.trusted ? await this.daemon.client() : this.daemon.current;
    // While the daemon is down (it died; the next message restarts it) the pickers keep what it offered.
    const caps = client?.initializeResult.capabilities ?? this.lastCaps;
    this.lastCaps = caps;
    const own = this.sessionModel;
    const provider = own?.provider ?? (providerSetting() || caps?.defaultProvider || "");
    this.model.choices = {
      modes: caps?.modes ?? ["plan", "ask", "auto", "full", "risk_based"],
      mode: permissionMode(),
      models: caps?.models?.[provider] ?? [],
      model: own?.model ?? currentModel(),
      provider,
    };
    if (caps !== undefined) {
      const sb = sandboxStatus(caps.sandbox, caps.sandboxReason);
      this.model.sandbox = {
        text:
          caps.sandbox === "bwrap"
            ? "sandbox: bubblewrap"
            : caps.sandbox === "none"
              ? "no sandbox: every command asks"
              : "sandbox: unknown",
        tooltip: sb.tooltip,
        warn: sb.warn,
      };
    }
    if (client === undefined && start && this.daemon.lastStartError !== undefined) {
      this.model.note(`Kgent could not start the daemon: ${this.daemon.lastStartError}`, "error");
    }
    this.refresh();
  }

  private async send(text: string, as?: "steer" | "followUp", images: PastedImage[] = []): Promise<void> {
    if (!vscode.workspace.isTrusted) return;
    // The folder is picked once, by whichever asks first: a command without a session, or the run.
    let picked: Promise<vscode.WorkspaceFolder | undefined> | undefined;
    const pick = (): Promise<vscode.WorkspaceFolder | undefined> => {
      picked ??= pickFolder();
      return picked;
    };
    if (await this.commands.handle(text, images, async () => (await pick())?.uri.fsPath)) return;
    const live = this.model.liveRuns;
    if (as !== undefined && live.length > 0) {
      const run = live[live.length - 1];
      const client = this.daemon.current;
      try {
        if (client === undefined) throw new Error("the daemon is not running");
        if (as === "steer") await client.steer(run.runId, text);
        else await client.followUp(run.runId, text);
      } catch (e) {
        this.model.note(`Could not queue the message: ${errorOf(e).message}`, "error");
        this.refresh();
      }
      return;
    }
    const folder = await pick();
    if (folder === undefined) return;
    const workspace = folder.uri.fsPath;
    const prompt = withImages(await promptWithMentions(text, workspace, readAttachment), images);
    const base: P.RunParams = { prompt, workspace };
    if (this.model.sessionId !== undefined) base.sessionId = this.model.sessionId;
    if (this.sessionModel !== undefined && base.sessionId === this.sessionModel.sessionId) {
      if (this.sessionModel.provider !== undefined) base.provider = this.sessionModel.provider;
      if (this.sessionModel.model !== undefined) base.model = this.sessionModel.model;
    }
    const summary = await this.runs.start(base, firstLine(text, 60), workspace, true, text);
    if (summary === undefined) {
      // The run did not start (no daemon, no key, a bad setting): the message goes back into the input, not lost.
      this.post(images.length > 0 ? { type: "setInput", text, images } : { type: "setInput", text });
      if (this.daemon.lastStartError !== undefined)
        this.model.note(`Kgent could not start the daemon: ${this.daemon.lastStartError}`, "error");
      else
        this.model.note(
          "The message was not sent (see the error above the status bar); it is back in the input.",
          "error",
        );
      this.refresh();
    }
  }

  /** The queue's Clear button: drop the run's queued steering and follow-up messages (`agent/clearQueue`). */
  private async clearQueue(runId: string): Promise<void> {
    try {
      const client = this.daemon.current;
      if (client === undefined) throw new Error("the daemon is not running");
      await client.clearQueue(runId);
    } catch (e) {
      this.model.note(`Could not clear the queue: ${errorOf(e).message}`, "error");
      this.refresh();
    }
  }

  /** Kgent: Continue Latest Session: the panel shown, the folder's latest session resumed in it. */
  async continueLatest(): Promise<void> {
    await this.reveal(true);
    await this.sessions.continueLatest();
  }

  /** Kgent: Run on Selection: the panel, its input holding a mention of the selection. */
  async runOnSelection(): Promise<void> {
    await this.reveal(true);
    await this.attachSelection();
  }

  /** Put `@path#Lx-y` for the editor's selection (or `@path` for its file) into the input. */
  private async attachSelection(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const folder = editor === undefined ? undefined : vscode.workspace.getWorkspaceFolder(editor.document.uri);
    if (editor === undefined || folder === undefined) {
      void vscode.window.showInformationMessage("Kgent: open a file of this folder (and select lines) to mention it.");
      return;
    }
    const rel = path.relative(folder.uri.fsPath, editor.document.uri.fsPath);
    const sel = editor.selection;
    const mention = sel.isEmpty
      ? mentionFor(rel)
      : mentionFor(
          rel,
          sel.start.line + 1,
          sel.end.line + (sel.end.character === 0 && sel.end.line > sel.start.line ? 0 : 1),
        );
    this.post({ type: "insert", text: `${mention} ` });
    await this.reveal(true);
  }

  dispose(): void {
    for (const p of [...this.pending.values()]) p.resolve({ outcome: "cancelled" });
    if (this.postTimer !== undefined) clearTimeout(this.postTimer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

async function readAttachment(absPath: string): Promise<string | undefined> {
  try {
    const st = await fs.stat(absPath);
    if (!st.isFile() || st.size > MAX_ATTACHMENT_BYTES) return undefined;
    const open = vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === absPath);
    return open?.getText() ?? (await fs.readFile(absPath, "utf8"));
  } catch {
    return undefined;
  }
}
