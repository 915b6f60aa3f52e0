// The status bar item: off (Restricted Mode), waiting for approval, running (n), daemon stopped, or idle. A click shows
// the transcript (in Restricted Mode: Manage Workspace Trust).

import * as vscode from "vscode";
import { sandboxStatus } from "../usage";
import { permissionMode } from "./settings";

export interface StatusState {
  /** VS Code trusts the folder (in Restricted Mode Kgent is off). */
  trusted: boolean;
  /** Approval prompts open or waiting their turn. */
  waitingApprovals: number;
  liveRuns: number;
  /** The daemon exited unexpectedly and has not been restarted yet. */
  daemonStopped: boolean;
  /** Why the daemon could not start, when its last start failed. */
  startError?: string;
  /** The daemon's `capabilities.sandbox` and its reason, once it answered initialize. */
  sandbox?: string;
  sandboxReason?: string;
}

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  /** `read` gives the current state; call `update()` whenever it may have changed. */
  constructor(private readonly read: () => StatusState) {
    this.item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
    this.item.command = "kgent.showTranscript";
  }

  show(): void {
    this.item.show();
  }

  update(): void {
    const {
      trusted,
      waitingApprovals,
      liveRuns: runs,
      daemonStopped,
      startError,
      sandbox,
      sandboxReason,
    } = this.read();
    const shell = sandboxStatus(sandbox, sandboxReason);
    const status = this.item;
    status.command = trusted ? "kgent.showTranscript" : "workbench.trust.manage";
    if (!trusted) {
      status.text = "$(circle-slash) Kgent: off (Restricted Mode)";
      status.tooltip =
        "Kgent is off in Restricted Mode: it would read, edit and run commands in this folder. Click to manage Workspace Trust.";
      status.backgroundColor = undefined;
    } else if (waitingApprovals > 0) {
      // sub-agents side by side (or several runs) may ask together: say how many wait
      status.text = `$(bell) Kgent: waiting for approval${waitingApprovals > 1 ? ` (${waitingApprovals})` : ""}`;
      status.tooltip =
        waitingApprovals > 1
          ? `Kgent is waiting for you to approve or reject ${waitingApprovals} tool calls`
          : "Kgent is waiting for you to approve or reject a tool call";
      status.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
    } else if (runs > 0) {
      status.text = `$(sync~spin) Kgent: running${runs > 1 ? ` (${runs})` : ""}`;
      status.tooltip = "Kgent is working: click for the transcript";
      status.backgroundColor = undefined;
    } else if (startError !== undefined) {
      status.text = "$(error) Kgent: failed";
      status.tooltip = `The Kgent daemon could not start: ${startError}\nClick for the log; fix kgent.serverCommand (or install kgent), then use Kgent again.`;
      status.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
    } else if (daemonStopped) {
      status.text = "$(warning) Kgent: daemon stopped";
      status.tooltip = "The Kgent daemon exited; it restarts on the next Kgent command";
      status.backgroundColor = undefined;
    } else {
      status.text = `$(hubot) Kgent: idle${shell.suffix}`;
      status.tooltip = `Kgent: click for the transcript\n${shell.tooltip}`;
      status.backgroundColor = shell.warn ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** The status bar's mode and model items (click to change them). */
export class ChoicesStatus implements vscode.Disposable {
  private readonly mode = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 49);
  private readonly model = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 48);

  constructor() {
    this.mode.command = "kgent.chooseMode";
    this.model.command = "kgent.chooseModel";
  }

  update(): void {
    const cfg = vscode.workspace.getConfiguration("kgent");
    this.mode.text = `$(shield) ${permissionMode()}`;
    this.mode.tooltip = "Kgent permission mode: click to change";
    const model = cfg.get<string>("model")?.trim();
    this.model.text = `$(sparkle) ${model || "default model"}`;
    this.model.tooltip = "Kgent model: click to change";
    this.mode.show();
    this.model.show();
  }

  dispose(): void {
    this.mode.dispose();
    this.model.dispose();
  }
}
