// Diagnostics after edits (protocol.md § Diagnostics): the daemon asks `agent/diagnostics` for a file before a run's
// first change to it and after each change; the editor answers with its language servers' findings once they have
// settled. Editor-agnostic: the editor side is a `DiagnosticsHost` (ui/diagnostics.ts in VS Code).

import type { MessageConnection } from "vscode-jsonrpc/node";
import * as P from "./protocol";

/** What an editor knows about a file's problems. Throwing answers an error: the daemon notes it once and stops
 * asking for the rest of that run. */
export interface DiagnosticsHost {
  /** The file's diagnostics once its language server has settled; `null` when nothing speaks for the file. */
  diagnostics(params: P.DiagnosticsParams): Promise<P.EditorDiagnostic[] | null>;
}

/** Answer the daemon's `agent/diagnostics` from `host`. */
export function serveDiagnostics(conn: MessageConnection, host: DiagnosticsHost): void {
  conn.onRequest(P.AgentDiagnostics, async (params) => ({ diagnostics: await host.diagnostics(params) }));
}
