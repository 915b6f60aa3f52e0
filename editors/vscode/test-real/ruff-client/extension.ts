// Test only: a language extension as people install them — vscode-languageclient (from npm) wrapping a real language
// server, `ruff server` (the program in KGENT_TEST_RUFF, else `ruff` on PATH), for Python files. The status bar says
// "ruff server ready" once the server has answered `initialize`, which the real suite waits for.

import * as vscode from "vscode";
import { LanguageClient } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const command = process.env.KGENT_TEST_RUFF || "ruff";
  client = new LanguageClient(
    "kgentTestRuff",
    "Ruff (Kgent tests)",
    { command, args: ["server"] },
    { documentSelector: [{ scheme: "file", language: "python" }] },
  );
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left);
  status.text = "ruff server starting";
  status.show();
  context.subscriptions.push(status);
  try {
    await client.start();
    status.text = "ruff server ready";
  } catch (e) {
    status.text = `ruff server failed: ${e instanceof Error ? e.message : String(e)}`;
  }
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
