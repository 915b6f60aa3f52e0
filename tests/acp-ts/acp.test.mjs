// Drives `kgent acp` with the official TypeScript SDK's client (`client()` / `connectWith`, SDK 2.x): a second ACP
// implementation no one here wrote. Run: `npm install && npm test` (KGENT: the kgent command; default ../../.venv).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
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
    assert.deepEqual(
      session.modes.availableModes.map((m) => m.id),
      ["plan", "ask", "auto", "full", "risk_based"],
    );
    // 'always' answers last this session unless the person picks the project (a config option, not more options)
    const lasting = await ctx.request(methods.agent.session.setConfigOption, {
      sessionId: session.sessionId,
      configId: "lasting",
      value: "project",
    });
    assert.equal(lasting.configOptions.find((o) => o.id === "lasting").currentValue, "project");
    const done = await ctx.request(methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "write notes" }],
    });
    const listed = await ctx.request(methods.agent.session.list, { cwd: workspace });
    assert.deepEqual(
      listed.sessions.map((s) => s.sessionId),
      [session.sessionId],
    );
    // session/delete (unstable; the SDK's own method): the session leaves the store
    await ctx.request(methods.agent.session.delete, { sessionId: session.sessionId });
    assert.deepEqual((await ctx.request(methods.agent.session.list, { cwd: workspace })).sessions, []);
    return done;
  });
  proc.stdin.end();
  assert.equal(result.stopReason, "end_turn");
  assert.equal(readFileSync(join(workspace, "notes.txt"), "utf8"), "first\n");
  // The options Kgent offers over ACP: one per kind (clients key them by kind), each id its kind, "Allow once" first.
  assert.deepEqual(
    asked[0].options.map((o) => [o.optionId, o.kind]),
    [
      ["allow_once", "allow_once"],
      ["allow_always", "allow_always"],
      ["reject_once", "reject_once"],
      ["reject_always", "reject_always"],
    ],
  );
  // The project is not trusted: its "always in this project" answers are kept in the user's own file, and say so.
  assert.match(
    asked[0].options[1].name,
    /^Always allow writes to `notes\.txt` in this project \(kept in your settings\)$/,
  );
  assert.equal(asked[0].options[1]._meta.kgent.scope, "project");
  assert.match(asked[0].options[3].name, /^Always reject .*this project/);
  // No blind approval: the edit's diff is in the permission request itself.
  assert.equal(asked[0].toolCall.content?.[0]?.type, "diff");
  const text = updates
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text)
    .join("");
  assert.equal(text, "Writing notes.txt.Wrote notes.txt twice.");
  const diff = updates.find((u) => u.sessionUpdate === "tool_call_update" && u.content?.[0]?.type === "diff");
  assert.equal(diff.content[0].newText, "first\n");
  assert.equal(diff.content[0].path, join(workspace, "notes.txt"));
});

test("commands run in the client's terminal (terminal/*), each one asked, the terminal embedded in the tool call", async () => {
  const workspace = mkdtempSync(join(tmpdir(), "kgent-acp-ts-ws-"));
  writeFileSync(join(workspace, "sample.txt"), "x\n");
  const { proc, stream } = startAgent("list-then-count");
  const updates = [];
  const asked = [];
  const terminals = new Map(); // id → { child, output, exit, released }
  const exited = (t) => new Promise((ok) => (t.exit ? ok() : t.child.once("close", () => ok())));
  const status = (t) => (t.exit.signal ? { signal: t.exit.signal } : { exitCode: t.exit.code });
  const app = client({ name: "kgent-ts-terminal-test" })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params.update);
    })
    .onRequest(methods.client.terminal.create, ({ params }) => {
      const child = spawn(params.command, params.args ?? [], { cwd: params.cwd, stdio: ["ignore", "pipe", "pipe"] });
      const t = { child, output: "", exit: null, released: false, command: [params.command, ...(params.args ?? [])] };
      child.stdout.on("data", (d) => (t.output += d));
      child.stderr.on("data", (d) => (t.output += d));
      child.once("close", (code, signal) => (t.exit = { code, signal }));
      const id = `ts-term-${terminals.size + 1}`;
      terminals.set(id, t);
      return { terminalId: id };
    })
    .onRequest(methods.client.terminal.waitForExit, async ({ params }) => {
      const t = terminals.get(params.terminalId);
      await exited(t);
      return status(t);
    })
    .onRequest(methods.client.terminal.output, ({ params }) => {
      const t = terminals.get(params.terminalId);
      return { output: t.output, truncated: false, exitStatus: t.exit ? status(t) : null };
    })
    .onRequest(methods.client.terminal.kill, ({ params }) => {
      terminals.get(params.terminalId).child.kill();
      return {};
    })
    .onRequest(methods.client.terminal.release, ({ params }) => {
      const t = terminals.get(params.terminalId);
      t.released = true;
      if (!t.exit) t.child.kill();
      return {};
    });
  const result = await app.connectWith(stream, async (ctx) => {
    await ctx.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { terminal: true },
    });
    const session = await ctx.request(methods.agent.session.new, { cwd: workspace, mcpServers: [] });
    await ctx.request(methods.agent.session.setMode, { sessionId: session.sessionId, modeId: "auto" });
    return ctx.request(methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "list and count" }],
    });
  });
  proc.stdin.end();
  assert.equal(result.stopReason, "end_turn");
  assert.equal(asked.length, 2); // `ls` too: in the client's terminal nothing runs unasked outside full mode
  assert.deepEqual(
    [...terminals.values()].map((t) => t.command.slice(1, 2)),
    [["-c"], ["-c"]],
  );
  assert.ok([...terminals.values()].every((t) => t.released));
  const done = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
  assert.deepEqual(
    done.map((u) => u.content[0]),
    [
      { type: "terminal", terminalId: "ts-term-1" },
      { type: "terminal", terminalId: "ts-term-2" },
    ],
  );
  assert.match(done[0].rawOutput.output, /sample\.txt/);
  assert.match(done[1].rawOutput.output, /line 3/);
});
