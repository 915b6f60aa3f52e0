// The editor's language features as the daemon's diagnostics (a DiagnosticsHost, diagnostics.ts): the file is loaded
// (so its language server sees it), then its diagnostics are read once they have changed and gone quiet — or after a
// quiet moment with no change at all (nothing was pending) — never later than a bound below the daemon's timeout.

import * as vscode from "vscode";
import type { DiagnosticsHost } from "../diagnostics";
import type * as P from "../protocol";

// vscode.DiagnosticSeverity's values, in order: Error 0, Warning 1, Information 2, Hint 3.
const SEVERITY: readonly P.EditorDiagnostic["severity"][] = ["error", "warning", "information", "hint"];

function toWire(d: vscode.Diagnostic): P.EditorDiagnostic {
  const code = typeof d.code === "object" ? d.code.value : d.code;
  return {
    line: d.range.start.line + 1,
    column: d.range.start.character + 1,
    severity: SEVERITY[d.severity] ?? "error",
    message: d.message,
    ...(d.source ? { source: d.source } : {}),
    ...(code !== undefined && code !== "" ? { code } : {}),
  };
}

/** Resolves once `uri`'s diagnostics changed and then stayed quiet for `afterChangeMs`, or stayed quiet for `quietMs`
 * from the start, and at the latest after `maxMs`. */
function settled(uri: vscode.Uri, quietMs: number, afterChangeMs: number, maxMs: number): Promise<void> {
  return new Promise((resolve) => {
    const key = uri.toString();
    let quiet: NodeJS.Timeout | undefined;
    const finish = (): void => {
      clearTimeout(quiet);
      clearTimeout(bound);
      sub.dispose();
      resolve();
    };
    // Subscribed before the timers start: a timer's `finish` disposes `sub`.
    const sub = vscode.languages.onDidChangeDiagnostics((e) => {
      if (!e.uris.some((u) => u.toString() === key)) return;
      clearTimeout(quiet);
      quiet = setTimeout(finish, afterChangeMs);
    });
    const bound = setTimeout(finish, maxMs);
    quiet = setTimeout(finish, quietMs);
  });
}

export class EditorDiagnostics implements DiagnosticsHost {
  constructor(
    private readonly quietMs = 1500,
    private readonly afterChangeMs = 300,
    private readonly maxMs = 8000,
  ) {}

  async diagnostics(p: P.DiagnosticsParams): Promise<P.EditorDiagnostic[]> {
    const uri = vscode.Uri.file(p.path);
    const done = settled(uri, this.quietMs, this.afterChangeMs, this.maxMs); // listening before the file loads
    try {
      await vscode.workspace.openTextDocument(uri); // loaded: a language client opens it on its server
    } catch {
      return []; // gone (a deleted file has nothing to say)
    }
    await done;
    return vscode.languages.getDiagnostics(uri).map(toWire);
  }
}
