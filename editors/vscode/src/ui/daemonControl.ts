// The daemon's lifecycle as the user sees it: started on first use, a crash reported and the daemon restarted at once
// (under a progress notification that ends when it is back), Kgent: Restart Daemon, and a clear message when it cannot start.

import * as vscode from "vscode";
import { describeExit, errorOf, type ExitInfo, type KgentClient } from "../client";
import type { DiagnosticsHost } from "../diagnostics";
import type { FileHost } from "../hostFiles";
import { DaemonManager, type DaemonConfig, type DaemonHooks } from "../daemon";
import type { AgentEventParams } from "../protocol";
import type { Output } from "./output";

/** A crash this soon after an automatic restart is a crash loop: the daemon waits for the next command. */
const CRASH_LOOP_MS = 60_000;

export interface DaemonControlDeps {
  config: () => Promise<DaemonConfig>;
  output: Output;
  /** Answers the daemon's `agent/permission` requests. */
  decide: DaemonHooks["decide"];
  /** The status bar may have changed. */
  changed: () => void;
  /** Every `agent/event` (the panel's conversation). */
  onEvent?: (params: AgentEventParams) => void;
  /** The editor's buffers, served to the daemon. */
  files?: FileHost;
  /** The editor's diagnostics, served to the daemon. */
  diagnostics?: DiagnosticsHost;
}

export class DaemonControl {
  private readonly daemon: DaemonManager;
  private readonly output: Output;
  private readonly changed: () => void;
  private crash: ExitInfo | undefined;
  /** When a crash last restarted the daemon by itself (a second crash soon after is not restarted again). */
  private autoRestartedAt: number | undefined;
  /** Why the last start failed (the panel shows it). */
  lastStartError: string | undefined;

  constructor(deps: DaemonControlDeps) {
    this.output = deps.output;
    this.changed = deps.changed;
    this.daemon = new DaemonManager(deps.config, {
      log: (t) => this.output.log(t),
      onEvent: (e) => {
        if (!this.output.disposed) this.output.transcript.event(e);
        deps.onEvent?.(e);
      },
      decide: deps.decide,
      files: deps.files,
      diagnostics: deps.diagnostics,
      onCrash: (info) => this.onCrash(info),
    });
  }

  /** The running daemon, if any (never starts one). */
  get current(): KgentClient | undefined {
    return this.daemon.current;
  }

  /** The daemon exited unexpectedly and has not been restarted yet. */
  get crashed(): boolean {
    return this.crash !== undefined;
  }

  /** The running daemon, started (or restarted after a crash, saying so) if needed; `undefined` if it cannot start. */
  async client(): Promise<KgentClient | undefined> {
    const crashed = this.crash;
    try {
      const ensured = await this.daemon.ensure();
      this.lastStartError = undefined;
      if (ensured.started) {
        this.crash = undefined;
        const info = ensured.client.initializeResult.serverInfo;
        this.output.log(
          `[kgent] daemon started: ${info.name} ${info.version ?? ""} (pid ${ensured.client.pid ?? "?"})\n`,
        );
        if (crashed !== undefined || ensured.restartedAfter !== undefined) {
          const why = describeExit(ensured.restartedAfter ?? crashed);
          const msg = `Kgent: the daemon had stopped unexpectedly (${why}); it has been restarted.`;
          this.output.transcript.note(`↻ ${msg.slice(7)}`);
          void vscode.window.showInformationMessage(msg);
        }
      }
      this.changed();
      return ensured.client;
    } catch (e) {
      const err = errorOf(e);
      this.output.log(`[kgent] could not start the daemon: ${err.message}\n`);
      this.lastStartError = err.message;
      void vscode.window
        .showErrorMessage(`Kgent: could not start the daemon: ${err.message}`, "Open Settings", "Show Daemon Log")
        .then((pick) => {
          if (pick === "Open Settings")
            void vscode.commands.executeCommand("workbench.action.openSettings", "kgent.serverCommand");
          else if (pick === "Show Daemon Log") this.output.showDaemonLog();
        });
      this.changed();
      return undefined;
    }
  }

  /** Start the daemon in the background (at activation) without a message on failure: the status bar says it. */
  async prewarm(): Promise<void> {
    try {
      const ensured = await this.daemon.ensure();
      this.lastStartError = undefined;
      if (ensured.started) {
        const info = ensured.client.initializeResult.serverInfo;
        this.output.log(
          `[kgent] daemon started (prewarm): ${info.name} ${info.version ?? ""} (pid ${ensured.client.pid ?? "?"})\n`,
        );
        // It answers `initialize` before loading what requests need (its session store, the kernel: seconds on a busy
        // machine); one cheap request pays that now instead of on the first message.
        const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
        if (folder !== undefined) await ensured.client.sessions(folder).catch(() => undefined);
      }
    } catch (e) {
      this.lastStartError = errorOf(e).message;
      this.output.log(`[kgent] could not start the daemon: ${this.lastStartError}\n`);
    }
    this.changed();
  }

  /**
   * An unexpected exit: the daemon is started again at once, under a progress notification that closes when it is
   * back (no toast is left saying it is down once it is up). A daemon that crashes again soon after such a restart is
   * left down until the next Kgent command, with an error that says so (and stays true: nothing offers to restart it).
   */
  private onCrash(info: ExitInfo): void {
    this.crash = info;
    const why = describeExit(info);
    this.output.log(`[kgent] the daemon exited unexpectedly (${why})\n`);
    this.changed();
    const now = Date.now();
    const loop = this.autoRestartedAt !== undefined && now - this.autoRestartedAt < CRASH_LOOP_MS;
    if (loop) {
      this.output.transcript.note(
        `✗ The Kgent daemon exited unexpectedly again (${why}). It will be started on your next Kgent command.`,
      );
      void vscode.window
        .showErrorMessage(
          `Kgent: the daemon exited unexpectedly again (${why}), soon after a restart. It will be started on your next Kgent command.`,
          "Show Daemon Log",
        )
        .then((pick) => {
          if (pick === "Show Daemon Log") this.output.showDaemonLog();
        });
      return;
    }
    this.autoRestartedAt = now;
    this.output.transcript.note(`✗ The Kgent daemon exited unexpectedly (${why}); restarting it.`);
    void vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Kgent: the daemon exited unexpectedly (${why}); restarting it…`,
      },
      async () => {
        await this.client();
      },
    );
  }

  /** Kgent: Restart Daemon. Asks first when `liveRuns` tasks would be cancelled. */
  async restart(liveRuns: number): Promise<void> {
    if (liveRuns > 0) {
      const ok = await vscode.window.showWarningMessage(
        `Restarting the Kgent daemon cancels ${liveRuns} running task${liveRuns === 1 ? "" : "s"}.`,
        { modal: true },
        "Restart",
      );
      if (ok !== "Restart") return;
    }
    try {
      const ensured = await this.daemon.restart();
      this.crash = undefined;
      this.output.log(`[kgent] daemon restarted (pid ${ensured.client.pid ?? "?"})\n`);
      this.output.transcript.note("↻ Kgent daemon restarted.");
      void vscode.window.showInformationMessage("Kgent: daemon restarted.");
    } catch (e) {
      void vscode.window.showErrorMessage(`Kgent: could not restart the daemon: ${errorOf(e).message}`);
    }
    this.changed();
  }

  /** Stop the daemon if it has no live run (so the next command starts it with new settings). */
  stopIfIdle(): Promise<boolean> {
    return this.daemon.stopIfIdle();
  }

  /** Send `exit` and wait for the daemon to end (deactivate). */
  dispose(): Promise<void> {
    return this.daemon.dispose();
  }
}
