// Kgent: Open Instructions — the AGENTS.md files and skills the panel's session loaded (agent/session); the one
// picked opens in an editor.

import * as vscode from "vscode";
import { errorOf } from "../client";
import { type LoadedItem, loadedItems } from "../instructionsModel";
import type { DaemonControl } from "./daemonControl";

export class Instructions implements vscode.Disposable {
  private readonly command: vscode.Disposable;

  constructor(
    private readonly daemon: DaemonControl,
    private readonly sessionId: () => string | undefined,
  ) {
    this.command = vscode.commands.registerCommand("kgent.openInstructions", () => this.open());
  }

  async open(): Promise<void> {
    const sid = this.sessionId();
    if (sid === undefined) {
      void vscode.window.showInformationMessage(
        "Kgent: no session yet. Its AGENTS.md files and skills show here after a run.",
      );
      return;
    }
    const client = await this.daemon.client();
    if (client === undefined) return;
    let items: LoadedItem[];
    try {
      items = loadedItems(await client.session(sid, true));
    } catch (e) {
      void vscode.window.showErrorMessage(`Kgent: ${errorOf(e).message}`);
      return;
    }
    if (items.length === 0) {
      void vscode.window.showInformationMessage("Kgent: this session loaded no AGENTS.md, CLAUDE.md or skills.");
      return;
    }
    const pick = await vscode.window.showQuickPick(items, { title: "Kgent: instructions and skills of this session" });
    if (pick !== undefined) await vscode.window.showTextDocument(vscode.Uri.file(pick.path));
  }

  dispose(): void {
    this.command.dispose();
  }
}
