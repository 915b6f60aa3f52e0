// The editor-agnostic client against the real daemon (scripted provider): no `vscode` anywhere.

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, test } from "node:test";
import type { CancellationToken } from "vscode-jsonrpc/node";
import { KgentClient, KgentError, splitCommandLine, type ClientHooks, type ExitInfo } from "../src/client";
import type * as P from "../src/protocol";
import { AGAINST_DAEMON, cleanEnv, isAlive, sandbox, serverCommand, waitFor, type Sandbox } from "./helpers";

type Decider = (params: P.PermissionParams, token: CancellationToken) => Promise<P.PermissionResult>;

interface Harness {
  client: KgentClient;
  sb: Sandbox;
  prompts: P.PermissionParams[];
  withdrawn: string[];
  exits: ExitInfo[];
  stderr: string[];
}

const started: Harness[] = [];

async function startClient(decide: Decider, settings: P.InitializeSettings = {}): Promise<Harness> {
  const sb = sandbox();
  const prompts: P.PermissionParams[] = [];
  const withdrawn: string[] = [];
  const exits: ExitInfo[] = [];
  const stderr: string[] = [];
  const hooks: ClientHooks = {
    log: (t) => stderr.push(t),
    decide: (params, token) => {
      prompts.push(params);
      token.onCancellationRequested(() => withdrawn.push(params.requestId));
      return decide(params, token);
    },
    onExit: (info) => exits.push(info),
  };
  const client = await KgentClient.start(serverCommand(cleanEnv(sb.stateDir)), hooks, { settings });
  const h = { client, sb, prompts, withdrawn, exits, stderr };
  started.push(h);
  return h;
}

afterEach(async () => {
  for (const h of started.splice(0)) {
    await h.client.stop();
    h.sb.cleanup();
  }
});

const pick =
  (byTool: Record<string, string>): Decider =>
  async (params) => {
    const optionId = byTool[params.toolCall.name];
    return optionId === undefined ? { outcome: "cancelled" } : { outcome: "selected", optionId };
  };

/** Never answers; resolves (as a reject) only when the prompt is withdrawn. */
const waitForWithdrawal: Decider = (_params, token) =>
  new Promise((resolve) => token.onCancellationRequested(() => resolve({ outcome: "cancelled" })));

describe("KgentClient against the daemon", () => {
  test("initialize reports the protocol, the scripted provider and its scripts", AGAINST_DAEMON, async () => {
    const { client } = await startClient(pick({}));
    const init = client.initializeResult;
    assert.equal(init.protocolVersion, 1);
    assert.equal(init.serverInfo.name, "kgent");
    assert.ok(init.capabilities.providers?.includes("scripted"));
    assert.ok(init.capabilities.models?.scripted?.includes("tool-loop"));
    assert.ok(init.capabilities.modes?.includes("ask"));
    assert.ok(init.capabilities.events?.includes("run_end"));
  });

  test("a hello run streams gap-free events ending in run_end", AGAINST_DAEMON, async () => {
    const { client, sb } = await startClient(pick({}));
    const run = await client.run({
      prompt: "Say hello.",
      workspace: sb.workspace,
      provider: "scripted",
      model: "hello",
    });
    const outcome = await run.done;
    assert.equal(outcome.kind, "ended");
    if (outcome.kind !== "ended") return;
    assert.equal(outcome.end.status, "settled");
    assert.equal(outcome.end.sessionId, run.sessionId);
    const seqs: number[] = [];
    const types: string[] = [];
    run.onEvent((e) => {
      seqs.push(e.seq);
      types.push(e.event.type);
    });
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i),
    );
    assert.equal(types[0], "run_start");
    assert.equal(types.at(-1), "run_end");
    assert.ok(types.includes("message_delta"));
  });

  test("tool-loop in ask mode: the edit is approved with its diff, the command rejected", AGAINST_DAEMON, async () => {
    const { client, sb, prompts } = await startClient(pick({ edit: "allow_once", bash: "reject_once" }));
    const run = await client.run({
      prompt: "Set value to 2",
      workspace: sb.workspace,
      mode: "ask",
      provider: "scripted",
      model: "tool-loop",
    });
    const outcome = await run.done;
    assert.equal(outcome.kind, "ended");
    assert.deepEqual(
      prompts.map((p) => p.toolCall.name),
      ["edit", "bash"],
    );
    const edit = prompts[0].toolCall;
    assert.equal(edit.oldText, "value = 1\nprint(value)\n");
    assert.equal(edit.newText, "value = 2\nprint(value)\n");
    assert.match(edit.diff ?? "", /-value = 1\n\+value = 2/);
    assert.ok(prompts[0].options.some((o) => o.kind === "allow_always"));
    assert.equal(prompts[1].toolCall.command?.includes("python3 sample.py"), true);
    assert.equal(fs.readFileSync(path.join(sb.workspace, "sample.py"), "utf8"), "value = 2\nprint(value)\n");
    const resolved: P.PermissionResolvedEvent[] = [];
    run.onEvent((e) => {
      if (e.event.type === "permission_resolved") resolved.push(e.event as P.PermissionResolvedEvent);
    });
    assert.deepEqual(
      resolved.map((r) => [r.decision, r.approved, r.source]),
      [
        ["allow_once", true, "host"],
        ["reject_once", false, "host"],
      ],
    );
    if (outcome.kind === "ended") assert.deepEqual(outcome.end.changedPaths, ["sample.py"]);
  });

  test("an answer naming an option that was not offered is a reject", AGAINST_DAEMON, async () => {
    const { client, sb } = await startClient(pick({ edit: "allow_everything", bash: "yes" }));
    const run = await client.run({
      prompt: "x",
      workspace: sb.workspace,
      mode: "ask",
      provider: "scripted",
      model: "tool-loop",
    });
    await run.done;
    assert.equal(fs.readFileSync(path.join(sb.workspace, "sample.py"), "utf8"), "value = 1\nprint(value)\n");
  });

  test("the daemon withdraws a prompt when the approval times out", AGAINST_DAEMON, async () => {
    const { client, sb, withdrawn, prompts } = await startClient(waitForWithdrawal, { approvalTimeout: 0.3 });
    const run = await client.run({
      prompt: "x",
      workspace: sb.workspace,
      mode: "ask",
      provider: "scripted",
      model: "tool-loop",
    });
    const outcome = await run.done;
    assert.equal(outcome.kind, "ended");
    assert.equal(prompts.length, 2);
    assert.deepEqual(
      withdrawn,
      prompts.map((p) => p.requestId),
    );
    const sources: string[] = [];
    run.onEvent((e) => {
      if (e.event.type === "permission_resolved") sources.push((e.event as P.PermissionResolvedEvent).source);
    });
    assert.deepEqual(sources, ["timeout", "timeout"]);
  });

  test("agent/cancel withdraws the open prompt and ends the run cancelled", AGAINST_DAEMON, async () => {
    const { client, sb, withdrawn, prompts } = await startClient(waitForWithdrawal);
    const run = await client.run({
      prompt: "x",
      workspace: sb.workspace,
      mode: "ask",
      provider: "scripted",
      model: "tool-loop",
    });
    await waitFor("the edit prompt", () => prompts.length === 1);
    assert.deepEqual(await client.cancel(run.runId), { cancelled: true });
    const outcome = await run.done;
    assert.equal(outcome.kind === "ended" && outcome.end.status, "cancelled");
    assert.deepEqual(withdrawn, [prompts[0].requestId]);
    assert.deepEqual(await client.cancel(run.runId), { cancelled: false });
  });

  test("errors carry the protocol's codes", AGAINST_DAEMON, async () => {
    const { client, sb } = await startClient(pick({}));
    await assert.rejects(
      client.run({ prompt: "x", workspace: "relative/dir", provider: "scripted", model: "hello" }),
      (e: unknown) => {
        assert.ok(e instanceof KgentError);
        assert.equal(e.code, -32602);
        return true;
      },
    );
    await assert.rejects(
      client.run({ prompt: "x", workspace: sb.workspace, provider: "scripted", model: "no-such-script" }),
      (e: unknown) => {
        assert.ok(e instanceof KgentError);
        assert.equal(e.code, -32001);
        assert.equal(e.dataCode, "config_error");
        return true;
      },
    );
    await assert.rejects(
      client.cancel("run-000000000000"),
      (e: unknown) => e instanceof KgentError && e.dataCode === "run_not_found",
    );
    await assert.rejects(client.session("0123456789ab"), (e: unknown) => e instanceof KgentError && e.code === -32002);
  });

  test("sessions: listed newest first, read back, and a run continues one", AGAINST_DAEMON, async () => {
    const { client, sb } = await startClient(pick({}));
    const first = await client.run({
      prompt: "First task",
      workspace: sb.workspace,
      provider: "scripted",
      model: "hello",
    });
    await first.done;
    const second = await client.run({
      prompt: "Second task\nmore",
      workspace: sb.workspace,
      provider: "scripted",
      model: "hello",
    });
    await second.done;
    const { sessions } = await client.sessions(sb.workspace);
    assert.deepEqual(
      sessions.map((s) => [s.sessionId, s.title]),
      [
        [second.sessionId, "Second task"],
        [first.sessionId, "First task"],
      ],
    );
    const again = await client.run({
      prompt: "Again",
      sessionId: first.sessionId,
      provider: "scripted",
      model: "hello",
    });
    await again.done;
    assert.equal(again.sessionId, first.sessionId);
    const s = await client.session(first.sessionId, true);
    const users = s.entries.filter((e) => e.message?.role === "user").map((e) => (e.message as P.UserMessage).text);
    assert.deepEqual(users, ["First task", "Again"]);
  });

  test(
    "a crash ends the runs as lost, closes open prompts and reports an unexpected exit",
    AGAINST_DAEMON,
    async () => {
      const h = await startClient(waitForWithdrawal);
      const run = await h.client.run({
        prompt: "x",
        workspace: h.sb.workspace,
        mode: "ask",
        provider: "scripted",
        model: "tool-loop",
      });
      await waitFor("the edit prompt", () => h.prompts.length === 1);
      const pid = h.client.pid!;
      h.client.kill();
      const outcome = await run.done;
      assert.equal(outcome.kind, "lost");
      assert.deepEqual(h.withdrawn, [h.prompts[0].requestId]);
      await waitFor("the exit report", () => h.exits.length === 1);
      assert.equal(h.exits[0].expected, false);
      assert.equal(h.exits[0].signal, "SIGKILL");
      assert.equal(isAlive(pid), false);
      await assert.rejects(
        h.client.sessions(h.sb.workspace),
        (e: unknown) => e instanceof KgentError && e.dataCode === "daemon_exited",
      );
    },
  );

  test("stop() sends exit and the daemon ends by itself, cancelling the live run", AGAINST_DAEMON, async () => {
    const h = await startClient(pick({ bash: "allow_once" }));
    const run = await h.client.run({
      prompt: "x",
      workspace: h.sb.workspace,
      mode: "ask",
      provider: "scripted",
      model: "long-bash",
    });
    await waitFor("bash output", () => {
      let started = false;
      run
        .onEvent((e) => {
          if (e.event.type === "tool_update" && String((e.event as P.ToolUpdateEvent).output ?? "").includes("started"))
            started = true;
        })
        .dispose();
      return started;
    });
    // Code 0: the daemon ended by itself (within the grace period, it would be killed otherwise), and well before
    // the command's 60 s sleep would have ended.
    const t0 = Date.now();
    const info = await h.client.stop(45_000);
    assert.equal(info.expected, true);
    assert.equal(info.code, 0, `exit status ${info.code} signal ${info.signal}`);
    assert.ok(Date.now() - t0 < 30_000, `stopped after ${Date.now() - t0} ms`);
  });

  test("a command that does not exist fails to start with a clear message", AGAINST_DAEMON, async () => {
    const sb = sandbox();
    try {
      await assert.rejects(
        KgentClient.start(
          { command: path.join(sb.workspace, "no-such-kgent"), args: ["serve", "--stdio"] },
          { decide: async () => ({ outcome: "cancelled" }) },
        ),
        (e: unknown) => e instanceof KgentError && /was not found/.test(e.message),
      );
    } finally {
      sb.cleanup();
    }
  });
});

describe("splitCommandLine", () => {
  test("splits words and honours quotes and escapes", () => {
    assert.deepEqual(splitCommandLine("kgent serve --stdio"), ["kgent", "serve", "--stdio"]);
    assert.deepEqual(splitCommandLine(`  '/a b/kgent'  serve "--x=\\"y\\"" c\\ d ''`), [
      "/a b/kgent",
      "serve",
      '--x="y"',
      "c d",
      "",
    ]);
    assert.throws(() => splitCommandLine("kgent 'serve"));
  });
});
