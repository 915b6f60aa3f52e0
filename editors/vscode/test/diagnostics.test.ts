// Diagnostics after edits, the client side against the real daemon (scripted provider): an editor whose "language
// server" reads the disk answers agent/diagnostics (diagnostics.ts); the edit that breaks the file reports the new
// finding in its result and its tool_update, the edit that fixes it reports none.

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { KgentClient } from "../src/client";
import type { DiagnosticsHost } from "../src/diagnostics";
import type * as P from "../src/protocol";
import { AGAINST_DAEMON, cleanEnv, sandbox, serverCommand } from "./helpers";

const UNDEFINED: P.EditorDiagnostic = {
  line: 2,
  column: 7,
  severity: "error",
  message: "Undefined name `valu`",
  source: "Ruff",
  code: "F821",
};

class Linter implements DiagnosticsHost {
  readonly asked: string[] = [];
  async diagnostics(p: P.DiagnosticsParams): Promise<P.EditorDiagnostic[]> {
    this.asked.push(path.basename(p.path));
    return fs.readFileSync(p.path, "utf8").includes("valu)") ? [UNDEFINED] : [];
  }
}

describe("diagnostics after edits, against the daemon", () => {
  test("the breaking edit reports the editor's new diagnostic, the fix reports none", AGAINST_DAEMON, async () => {
    const sb = sandbox();
    const linter = new Linter();
    const client = await KgentClient.start(serverCommand(cleanEnv(sb.stateDir)), {
      diagnostics: linter,
      decide: async () => ({ outcome: "cancelled" }),
    });
    try {
      assert.equal(client.initializeResult.protocolVersion, 1);
      fs.writeFileSync(path.join(sb.workspace, "sample.py"), "value = 1\nprint(value)\n");
      const edit = (oldText: string, newText: string) => [
        { tool: "edit", args: { path: "sample.py", oldText, newText } },
      ];
      const script = path.join(sb.workspace, "..", "script.json");
      fs.writeFileSync(
        script,
        JSON.stringify([edit("print(value)", "print(valu)"), edit("print(valu)", "print(value)"), [{ text: "ok" }]]),
      );
      const events: P.AgentEventParams[] = [];
      const run = await client.run({
        prompt: "break, then fix",
        workspace: sb.workspace,
        mode: "auto",
        provider: "scripted",
        model: script,
      });
      run.onEvent((e) => events.push(e));
      const outcome = await run.done;
      assert.ok(outcome.kind === "ended" && outcome.end.status === "settled", JSON.stringify(outcome));
      const done = events.flatMap((e) =>
        e.event.type === "tool_update" && e.event.status === "completed" ? [e.event] : [],
      );
      assert.equal(done.length, 2);
      assert.deepEqual(done[0].diagnostics, [{ path: "sample.py", ...UNDEFINED }]);
      assert.match(String(done[0].output), /sample\.py:2:7: error F821 Undefined name `valu` \(Ruff\)/);
      assert.deepEqual(done[1].diagnostics, []);
      assert.deepEqual(linter.asked, ["sample.py", "sample.py", "sample.py"]);
    } finally {
      await client.stop();
      sb.cleanup();
    }
  });
});
