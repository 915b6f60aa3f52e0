// Drives `kgent acp` with the official TypeScript SDK's client (`client()` / `connectWith`, SDK 2.x): a second ACP
// implementation no one here wrote. Run: `npm install && npm test` (KGENT: the kgent command; default ../../.venv).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { test } from "node:test";
import assert from "node:assert/strict";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const KGENT = process.env.KGENT ?? resolve(import.meta.dirname, "../../.venv/bin/kgent");

function startAgent(script) {
  const state = mkdtempSync(join(tmpdir(), "kgent-acp-ts-state-"));
  const env = { ...process.env, KGENT_STATE_DIR: state, KGENT_PROVIDER: "scripted", KGENT_MODEL: script };
  for (const name of Object.keys(env)) if (name.endsWith("_API_KEY")) delete env[name];
  const proc = spawn(KGENT, ["acp"], { env, stdio: ["pipe", "pipe", "inherit"] });
  return { proc, stream: ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)) };
}

test("a full run: initialize, session/new, prompt with an approval, the edit's diff, end_turn", async () => {
  const workspace = mkdtempSync(join(tmpdir(), "kgent-acp-ts-ws-"));
  const { proc, stream } = startAgent("two-writes");
  const updates = [];
  const asked = [];
  const app = client({ name: "kgent-ts-test" })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      asked.push(params);
      const option = asked.length === 1 ? "allow_once" : "reject_once";
      return { outcome: { outcome: "selected", optionId: option } };
    })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params.update);
    });
  const result = await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION });
    assert.equal(init.protocolVersion, PROTOCOL_VERSION);
    assert.equal(init.agentCapabilities.loadSession, true);
    const session = await ctx.request(methods.agent.session.new, { cwd: workspace, mcpServers: [] });
    assert.deepEqual(session.modes.availableModes.map((m) => m.id), ["plan", "ask", "auto", "full"]);
    return ctx.request(methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "write notes" }],
    });
  });
  proc.stdin.end();
  assert.equal(result.stopReason, "end_turn");
  assert.equal(readFileSync(join(workspace, "notes.txt"), "utf8"), "first\n");
  assert.deepEqual(asked[0].options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once", "reject_always"]);
  const text = updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
  assert.equal(text, "Writing notes.txt.Wrote notes.txt twice.");
  const diff = updates.find((u) => u.sessionUpdate === "tool_call_update" && u.content?.[0]?.type === "diff");
  assert.equal(diff.content[0].newText, "first\n");
  assert.equal(diff.content[0].path, join(workspace, "notes.txt"));
});
