// The bundled extension (dist/extension.js) in a fake VS Code, against the real daemon on the scripted provider.

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import * as path from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { KgentApi, RunSummary } from "../src/extension";
import {
  editorOn,
  fakeContext,
  installFakeVscode,
  resetFake,
  Selection,
  state,
  TabInputTextDiff,
  type FakeContext,
  type FakeQuickPick,
  type FakeUi,
  type TextDocumentContentProvider,
  Uri,
} from "./fake-vscode";
import {
  AGAINST_DAEMON,
  extensionRoot,
  gateScript,
  isAlive,
  KEY_VARIABLES,
  sandbox,
  serverCommandLine,
  waitFor,
  type Sandbox,
} from "./helpers";

installFakeVscode();
const extension = createRequire(__filename)(path.join(extensionRoot(), "dist", "extension.js")) as {
  activate(context: FakeContext): KgentApi;
  deactivate(): Promise<void>;
};

// The daemon inherits this process's environment: no keys or provider settings from the developer's shell.
for (const k of [
  ...KEY_VARIABLES,
  "KGENT_PROVIDER",
  "KGENT_MODEL",
  "KGENT_BASE_URL",
  "KGENT_PERMISSION_MODE",
  "KGENT_APPROVAL_TIMEOUT",
]) {
  delete process.env[k];
}

const SAMPLE = "value = 1\nprint(value)\n";
const EDITED = "value = 2\nprint(value)\n";

interface World {
  ui: FakeUi;
  sb: Sandbox;
  api: KgentApi;
  ctx: FakeContext;
  pids: Set<number>;
}

let world: World | undefined;

function w(): World {
  assert.ok(world);
  return world;
}

function open(config: Record<string, unknown> = {}): World {
  const sb = sandbox();
  process.env.KGENT_STATE_DIR = sb.stateDir;
  process.env.KGENT_CONFIG_DIR = path.join(sb.stateDir, "config"); // no user config (extensions) of the machine's
  const ui = resetFake({
    folders: [sb.workspace],
    config: {
      "kgent.serverCommand": serverCommandLine(),
      "kgent.provider": "scripted",
      "kgent.model": "tool-loop",
      "kgent.permissionMode": "ask",
      // These tests answer through the QuickPick flow; the panel's cards have their own tests (panel.test.ts).
      "kgent.approvalUi": "quickPick",
      ...config,
    },
  });
  const ctx = fakeContext(extensionRoot());
  const api = extension.activate(ctx);
  world = { ui, sb, api, ctx, pids: new Set() };
  return world;
}

beforeEach(() => {
  world = undefined;
});

afterEach(async () => {
  const cur = world;
  if (cur === undefined) return;
  const pid = cur.api.daemonPid();
  if (pid !== undefined) cur.pids.add(pid);
  await extension.deactivate(); // sends exit and waits for the process
  for (const d of cur.ctx.subscriptions) d.dispose();
  for (const p of cur.pids) assert.equal(isAlive(p), false, `daemon ${p} still running after deactivate`);
  cur.sb.cleanup();
});

function transcript(): string {
  return w().ui.output("Kgent").text;
}

function daemonLog(): string {
  return w().ui.output("Kgent Daemon").text;
}

async function exec<T>(command: string, ...args: unknown[]): Promise<T> {
  const fn = state.commands.get(command);
  assert.ok(fn, `command ${command} is registered`);
  return (await fn(...args)) as T;
}

function runTask(args: unknown): Promise<RunSummary | undefined> {
  return exec<RunSummary | undefined>("kgent.runTask", args);
}

function isEditPrompt(qp: FakeQuickPick): boolean {
  return (qp.title ?? "").startsWith("Kgent wants to edit");
}

function isBashPrompt(qp: FakeQuickPick): boolean {
  return (qp.title ?? "").startsWith("Kgent wants to run `");
}

function ended(summary: RunSummary | undefined): { status: string; changedPaths: string[]; sessionId: string } {
  assert.ok(summary, "the run started");
  assert.equal(summary.outcome.kind, "ended", JSON.stringify(summary.outcome));
  if (summary.outcome.kind !== "ended") throw new Error("unreachable");
  return summary.outcome.end;
}

function readSample(): string {
  return fs.readFileSync(path.join(w().sb.workspace, "sample.py"), "utf8");
}

function provider(): TextDocumentContentProvider {
  const p = state.providers.get("kgent");
  assert.ok(p, "the kgent: content provider is registered");
  return p;
}

describe("Kgent extension in a fake VS Code", () => {
  test("status bar: a daemon without a shell sandbox is named, with a warning", AGAINST_DAEMON, async () => {
    process.env.KGENT_SANDBOX = "none";
    try {
      const { ui } = open({ "kgent.model": "hello" });
      ui.onInputBox = (o) => (o.title === "Kgent: Run Task" ? "hi" : undefined);
      assert.equal(ended(await runTask(undefined)).status, "settled");
      assert.equal(ui.statusHistory.at(-1), "$(hubot) Kgent: idle (no sandbox)");
    } finally {
      delete process.env.KGENT_SANDBOX;
    }
  });

  test(
    "Run Task: the palette prompt, approvals allowed, transcript, status bar and progress",
    AGAINST_DAEMON,
    async () => {
      const { ui } = open();
      ui.onInputBox = (o) => (o.title === "Kgent: Run Task" ? "Set value to 2" : undefined);
      ui.onQuickPick = (qp) => {
        // Nothing is approved by default: the item active when the prompt opens only previews.
        assert.match(qp.activeItems[0]?.label ?? "", /Show (diff|details)/);
        qp.pick("Allow once");
      };
      const end = ended(await runTask(undefined));
      assert.equal(end.status, "settled");
      assert.deepEqual(end.changedPaths, ["sample.py"]);
      assert.equal(readSample(), EDITED);

      const [edit, bash] = ui.quickPicks;
      assert.equal(ui.quickPicks.length, 2);
      assert.equal(edit.title, "Kgent wants to edit sample.py");
      assert.ok(isBashPrompt(bash), bash.title);
      assert.match(bash.title ?? "", /python3 sample\.py/);
      assert.match(edit.placeholder ?? "", /^Escape rejects · medium risk · /, "the hint VS Code may cut comes last");
      // The preview first, then whatever options the daemon offered (not a fixed four), the "always" ones with the
      // rule each creates (an edit of sample.py: that file, this session).
      const labels = edit.labels();
      assert.equal(labels[0], "$(diff) Show diff");
      assert.equal(labels[1], "$(check) Allow once");
      assert.ok(labels.includes("$(close) Reject"), labels.join());
      const always = edit.items.find((i) => i.label.startsWith("$(check-all)"));
      assert.ok(always, labels.join());
      assert.equal(always.description, "session");
      assert.match(always.detail ?? "", /^creates: .*sample\.py/);
      assert.equal(edit.ignoreFocusOut, true);

      const t = transcript();
      assert.match(t, /▶ Run .* ask · scripted\/tool-loop/);
      assert.match(t, /You: Set value to 2/);
      assert.match(t, /Kgent: Let me read sample\.py\./);
      assert.match(t, /⚙ Edit sample\.py \[edit\]/);
      assert.match(t, /✔ allowed once$/m);
      assert.match(t, /\$ grep -n 'value = 2' sample\.py && python3 sample\.py/);
      assert.match(t, /■ Run settled \(end\)/);
      assert.ok(t.includes(`Changed files:\n    ${Uri.file(path.join(w().sb.workspace, "sample.py")).toString()}`), t);
      assert.match(t, /Patch:\n( {4}diff --git .*\n)? {4}--- a\/sample\.py\n/);

      assert.deepEqual(ui.statusHistory.slice(0, 1), ["$(hubot) Kgent: idle"]);
      assert.ok(ui.statusHistory.includes("$(sync~spin) Kgent: running"));
      assert.ok(ui.statusHistory.includes("$(bell) Kgent: waiting for approval"));
      assert.equal(ui.statusHistory.at(-1), "$(hubot) Kgent: idle");

      assert.equal(ui.progress.length, 1);
      assert.equal(ui.progress[0].title, "Kgent: Set value to 2");
      assert.equal(ui.progress[0].cancellable, true);
      assert.equal(ui.progress[0].done, true);
      assert.ok(ui.progress[0].messages.includes("waiting for your approval"));

      const done = ui.messages.find((m) => m.severity === "info" && m.message.startsWith("Kgent: done"));
      assert.ok(done, JSON.stringify(ui.messages));
      assert.match(done.message, /1 file changed/);
      assert.deepEqual(done.items, ["Open Changed Files", "Show Patch", "Show Transcript"]);
    },
  );

  test("Run Task: a rejected edit and an Escaped command change nothing", AGAINST_DAEMON, async () => {
    const { ui } = open();
    ui.onQuickPick = (qp) => {
      if (isEditPrompt(qp)) qp.pick("Reject");
      else qp.escape(); // Escape is a reject, never an approval
    };
    const end = ended(await runTask({ prompt: "Set value to 2" }));
    assert.equal(end.status, "settled");
    assert.deepEqual(end.changedPaths, []);
    assert.equal(readSample(), SAMPLE);
    const t = transcript();
    assert.equal(t.match(/✗ rejected$/gm)?.length, 2, t);
    assert.match(t, /✗ failed: permission_denied/);
    assert.match(t, /No files changed\./);
  });

  test("Show diff opens current ↔ proposed as virtual documents, closed after the answer", AGAINST_DAEMON, async () => {
    const { ui, sb } = open();
    let diffChecked = false;
    ui.onQuickPick = (qp) => {
      if (!isEditPrompt(qp)) return qp.pick("Reject");
      qp.pick("Show diff");
      void (async () => {
        const call = await waitFor("vscode.diff", () => ui.executed.find((e) => e.command === "vscode.diff"));
        const [left, right, title] = call.args as [Uri, Uri, string];
        assert.equal(left.scheme, "kgent");
        // The proposed side is editable (the daemon takes the person's own text: Accept my version).
        assert.equal(right.scheme, "kgent-proposed");
        assert.equal(path.basename(left.path), "sample.py");
        assert.equal(path.basename(right.path), "sample.py");
        assert.equal(await provider().provideTextDocumentContent(left), SAMPLE);
        const proposed = state.fileSystems.get("kgent-proposed") as { readFile(u: Uri): Uint8Array };
        assert.equal(Buffer.from(proposed.readFile(right)).toString("utf8"), EDITED);
        assert.equal(title, "sample.py: current ↔ proposed (editable: Accept my version) (Kgent)");
        assert.equal(qp.visible, true, "the prompt stays open while the diff is shown");
        assert.equal(ui.tabs.length, 1);
        diffChecked = true;
        qp.pick("Reject");
      })();
    };
    ended(await runTask({ prompt: "Set value to 2" }));
    assert.ok(diffChecked);
    assert.equal(
      ui.tabs.filter((t) => t.input instanceof TabInputTextDiff).length,
      0,
      "the diff editor is closed once answered",
    );
    assert.equal(readSample(), SAMPLE);
    assert.deepEqual(fs.readdirSync(sb.workspace), ["sample.py"], "no temp files in the workspace");
  });

  test("Cancel from the progress notification stops a running command", AGAINST_DAEMON, async () => {
    const { ui } = open({ "kgent.model": "long-bash" });
    ui.onQuickPick = (qp) => qp.pick("Allow once");
    const pending = runTask({ prompt: "Run the long command" });
    const progress = await waitFor("the progress notification", () => ui.progress[0]);
    await waitFor("the command to run", () => progress.messages.some((m) => m.endsWith("running…")));
    const cancelled = Date.now();
    progress.cancel();
    const end = ended(await pending);
    assert.equal(end.status, "cancelled");
    const took = Date.now() - cancelled;
    assert.ok(took < 30_000, `cancelled well before the 60 s sleep would end (took ${took} ms)`);
    assert.equal(progress.done, true);
    assert.match(transcript(), /■ Run cancelled \(cancelled\)/);
    assert.ok(ui.messages.some((m) => m.message === "Kgent: task cancelled."));
    assert.equal(ui.statusHistory.at(-1), "$(hubot) Kgent: idle");
  });

  test("kgent.maxTurns reaches the daemon: the run stops after that many model turns", AGAINST_DAEMON, async () => {
    open({ "kgent.maxTurns": 1 });
    const end = ended(await runTask({ prompt: "Set value to 2" })) as {
      status: string;
      stopReason?: string;
      turns?: number;
    };
    assert.equal(end.status, "failed");
    assert.equal(end.stopReason, "max_turns");
    assert.equal(end.turns, 1);
    assert.equal(readSample(), SAMPLE);
  });

  test(
    "the daemon withdraws an unanswered prompt (approval timeout) and the prompt closes",
    AGAINST_DAEMON,
    async () => {
      const { ui } = open({ "kgent.approvalTimeout": 0.5 });
      ui.onQuickPick = () => undefined; // the user never answers
      const end = ended(await runTask({ prompt: "Set value to 2" }));
      assert.equal(end.status, "settled");
      assert.equal(ui.quickPicks.length, 2);
      for (const qp of ui.quickPicks) {
        assert.equal(qp.visible, false);
        assert.equal(qp.hiddenBy, "extension", "closed by the withdrawal, not by the user");
      }
      assert.equal(transcript().match(/✗ rejected: no answer in time/g)?.length, 2);
      assert.equal(readSample(), SAMPLE);
      assert.equal(ui.statusHistory.at(-1), "$(hubot) Kgent: idle");
    },
  );

  test(
    "Cancel Run while a prompt is open: the daemon withdraws it and the run ends cancelled",
    AGAINST_DAEMON,
    async () => {
      const { ui } = open();
      ui.onQuickPick = () => undefined;
      const pending = runTask({ prompt: "Set value to 2" });
      const qp = await waitFor("the edit prompt", () => ui.quickPicks.find((q) => isEditPrompt(q) && q.visible));
      await exec("kgent.cancelRun");
      const end = ended(await pending);
      assert.equal(end.status, "cancelled");
      await waitFor("the prompt to close", () => !qp.visible);
      assert.equal(qp.hiddenBy, "extension");
      assert.equal(readSample(), SAMPLE);
    },
  );

  test(
    "a daemon crash closes the prompt and says so; the daemon is back at once, and no toast says it is down",
    AGAINST_DAEMON,
    async () => {
      const { ui, api, pids } = open();
      ui.onQuickPick = () => undefined;
      const pending = runTask({ prompt: "Set value to 2" });
      const qp = await waitFor("the edit prompt", () => ui.quickPicks.find((q) => isEditPrompt(q) && q.visible));
      const pid = api.daemonPid();
      assert.ok(pid !== undefined);
      pids.add(pid);
      process.kill(pid, "SIGKILL");
      const summary = await pending;
      assert.equal(summary?.outcome.kind, "lost");
      assert.equal(qp.visible, false);
      assert.match(transcript(), /■ Run lost: the Kgent daemon exited \(killed by SIGKILL\)/);
      // The restart is shown as progress, which closes once the daemon is back; nothing sticky (an error with a
      // "Restart Now" button) is left behind to say otherwise.
      const progress = await waitFor("the restart's progress", () =>
        ui.progress.find((p) => p.title?.startsWith("Kgent: the daemon exited unexpectedly (killed by SIGKILL)")),
      );
      await waitFor("the restart to finish", () => progress.done);
      const newPid = api.daemonPid();
      assert.ok(newPid !== undefined && newPid !== pid);
      pids.add(newPid);
      assert.deepEqual(
        ui.messages.filter((m) => m.severity === "error"),
        [],
        "no error toast after a crash that was restarted",
      );
      assert.ok(
        ui.messages.some(
          (m) =>
            m.severity === "info" &&
            m.message === "Kgent: the daemon had stopped unexpectedly (killed by SIGKILL); it has been restarted.",
        ),
        JSON.stringify(ui.messages),
      );
      assert.equal(ui.statusHistory.at(-1), "$(hubot) Kgent: idle");
      assert.match(transcript(), /✗ The Kgent daemon exited unexpectedly \(killed by SIGKILL\); restarting it\./);

      state.config["kgent.model"] = "hello";
      const end = ended(await runTask({ prompt: "Say hello." }));
      assert.equal(end.status, "settled");
      assert.equal(api.daemonPid(), newPid, "the restarted daemon runs the next task");

      // A second crash right after that restart is a crash loop: left down until the next command, and the error
      // says exactly that (no button that would be stale once it is up).
      process.kill(newPid, "SIGKILL");
      const again = await waitFor("the crash-loop message", () => ui.messages.find((m) => m.severity === "error"));
      assert.match(again.message, /^Kgent: the daemon exited unexpectedly again \(killed by SIGKILL\)/);
      assert.deepEqual(again.items, ["Show Daemon Log"]);
      await waitFor(
        "the status bar to say stopped",
        () => ui.statusHistory.at(-1) === "$(warning) Kgent: daemon stopped",
      );
      assert.equal(api.daemonPid(), undefined);
      const third = ended(await runTask({ prompt: "Say hello." }));
      assert.equal(third.status, "settled");
      const thirdPid = api.daemonPid();
      assert.ok(thirdPid !== undefined);
      pids.add(thirdPid);
    },
  );

  test("Resume Session lists the folder's sessions and continues the one picked", AGAINST_DAEMON, async () => {
    const { ui } = open({ "kgent.model": "hello" });
    const first = ended(await runTask({ prompt: "First task" }));
    const second = ended(await runTask({ prompt: "Second task" }));
    assert.notEqual(first.sessionId, second.sessionId);

    let items: string[] = [];
    ui.onQuickPick = (qp) => {
      items = qp.labels();
      assert.equal(qp.title, "Kgent: Resume Session");
      assert.match(qp.items[1].description ?? "", /just now/);
      assert.match(qp.items[1].detail ?? "", new RegExp(`entries · started .* · ${first.sessionId}`));
      qp.pick("First task");
    };
    ui.onInputBox = (o) => {
      assert.equal(o.title, "Kgent: continue “First task”");
      return "Continue please";
    };
    const resumed = ended(await exec<RunSummary>("kgent.resumeSession"));
    assert.deepEqual(items, ["Second task", "First task"]);
    assert.equal(resumed.sessionId, first.sessionId);
    assert.equal(resumed.status, "settled");
    const t = transcript();
    assert.match(t, /↺ Session .* “First task”/);
    assert.match(t, /You: Continue please/);
  });

  test("Run Task offers the selection as context and sends it as a resource", AGAINST_DAEMON, async () => {
    const { ui, sb } = open({ "kgent.model": "hello" });
    const file = path.join(sb.workspace, "sample.py");
    state.activeTextEditor = editorOn(file, SAMPLE, new Selection(0, 0, 0, 9));
    let offered: string[] = [];
    ui.onQuickPick = (qp) => {
      offered = qp.labels();
      qp.pick("Include the selection");
    };
    const end = ended(await runTask({ prompt: "Explain this line" }));
    assert.equal(end.status, "settled");
    assert.deepEqual(offered, [
      "$(selection) Include the selection",
      "$(file) Include the current file",
      "$(circle-slash) No context",
    ]);
    assert.ok(
      transcript().includes(`<resource uri="${Uri.file(file).toString()}#L1-L1">\n  value = 1\n  </resource>`),
      transcript(),
    );
  });

  test("Set API Key: kept in secret storage, given to the daemon in its environment only", AGAINST_DAEMON, async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(String(req.headers.authorization ?? ""));
      req.resume();
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "invalid key (test server)", type: "authentication_error" } }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const port = (server.address() as AddressInfo).port;
      // The default (remote) base URL without a key: the daemon refuses the run before any network access, and the
      // message offers to set a key.
      const { ui, ctx } = open({ "kgent.provider": "openai", "kgent.model": "test-model" });
      assert.equal(await runTask({ prompt: "hi" }), undefined);
      const missing = await waitFor("the missing-key message", () => ui.messages.find((m) => m.severity === "error"));
      assert.match(missing.message, /KGENT_API_KEY/);
      assert.deepEqual(missing.items, ["Set API Key", "Open Settings"]);

      // A local OpenAI-compatible server (this test's) records the key the daemon sends.
      state.config["kgent.baseUrl"] = `http://127.0.0.1:${port}/v1`;
      ui.onInputBox = (o) => {
        assert.equal(o.password, true);
        return "sk-test-0123456789";
      };
      await exec("kgent.setApiKey");
      assert.equal(ctx.secrets.values.get("kgent.apiKey"), "sk-test-0123456789");
      assert.ok(!JSON.stringify(state.config).includes("sk-test"), "the key is not in the settings");

      const summary = await runTask({ prompt: "hi" });
      assert.ok(summary);
      assert.ok(seen.includes("Bearer sk-test-0123456789"), JSON.stringify(seen));
      assert.ok(!transcript().includes("sk-test-0123456789") && !daemonLog().includes("sk-test-0123456789"));
    } finally {
      server.close();
    }
  });

  test("kgent.trustProjectExtensions lets the project's own extension run", AGAINST_DAEMON, async () => {
    const { sb } = open({ "kgent.trustProjectExtensions": true });
    fs.mkdirSync(path.join(sb.workspace, ".kgent"));
    fs.writeFileSync(path.join(sb.workspace, ".kgent", "config.toml"), '[extensions]\nload = [".kgent/calc.py"]\n');
    fs.writeFileSync(
      path.join(sb.workspace, ".kgent", "calc.py"),
      'from kgent.tools import CalculatorTool\ndef register(api):\n    t = CalculatorTool(); t.name = "project_calc"; api.tool(t)\n',
    );
    const script = path.join(path.dirname(sb.stateDir), "calc.json");
    const turns = [[{ tool: "project_calc", args: { expression: "2+3" } }], [{ text: "five" }]];
    fs.writeFileSync(script, JSON.stringify({ turns }));
    state.config["kgent.model"] = script;
    const end = ended(await runTask({ prompt: "add" }));
    assert.equal(end.status, "settled");
    assert.ok(!transcript().includes("Unknown tool"), transcript());
    assert.ok(transcript().includes("Calculate 2+3"), transcript());
  });

  test(
    "kgent.trustProjectExtensions unset leaves trust to `kgent extensions --trust` (the trust file)",
    AGAINST_DAEMON,
    async () => {
      const { sb } = open();
      const config = process.env.KGENT_CONFIG_DIR;
      assert.ok(config !== undefined);
      fs.mkdirSync(config, { recursive: true });
      fs.writeFileSync(path.join(config, "trusted-projects.json"), JSON.stringify([fs.realpathSync(sb.workspace)]));
      fs.mkdirSync(path.join(sb.workspace, ".kgent"));
      fs.writeFileSync(path.join(sb.workspace, ".kgent", "config.toml"), '[extensions]\nload = [".kgent/calc.py"]\n');
      fs.writeFileSync(
        path.join(sb.workspace, ".kgent", "calc.py"),
        'from kgent.tools import CalculatorTool\ndef register(api):\n    t = CalculatorTool(); t.name = "project_calc"; api.tool(t)\n',
      );
      const script = path.join(path.dirname(sb.stateDir), "calc.json");
      fs.writeFileSync(
        script,
        JSON.stringify({ turns: [[{ tool: "project_calc", args: { expression: "2+3" } }], [{ text: "five" }]] }),
      );
      state.config["kgent.model"] = script;
      const end = ended(await runTask({ prompt: "add" }));
      assert.equal(end.status, "settled");
      assert.ok(transcript().includes("Calculate 2+3"), transcript());
    },
  );

  test("Steer Run and Follow Up queue messages into the running task", AGAINST_DAEMON, async () => {
    const { ui, sb } = open();
    // The run waits at its first approval until the message is queued (no race with a model that is about to end).
    state.config["kgent.model"] = gateScript(path.dirname(sb.stateDir));
    for (const [command, text, who] of [
      ["kgent.steerRun", "Also mention the tests.", "You (steer)"],
      ["kgent.followUp", "Then summarise.", "You (follow-up)"],
    ] as const) {
      let gate: FakeQuickPick | undefined;
      ui.onQuickPick = (qp) => {
        if (gate === undefined) gate = qp;
        else qp.pick("Reject");
      };
      const pending = runTask({ prompt: `Task for ${command}` });
      const held = await waitFor("the run waiting at its approval", () => gate);
      assert.equal(w().api.liveRunIds().length, 1);
      ui.onInputBox = () => text;
      await exec(command); // resolves once the daemon has queued the message
      held.pick("Reject");
      const end = ended(await pending);
      assert.equal(end.status, "settled");
      assert.ok(transcript().includes(`${who}: ${text}`), transcript());
    }
    assert.ok(transcript().includes("… queued: 1 steering, 0 follow-up"));
    assert.ok(transcript().includes("… queued: 0 steering, 1 follow-up"));
    // With no task running, the commands say so instead of asking for text.
    const asked = ui.inputBoxes.length;
    await exec("kgent.steerRun");
    await exec("kgent.cancelRun");
    assert.equal(ui.inputBoxes.length, asked);
    assert.equal(ui.messages.filter((m) => m.message === "Kgent: no task is running.").length, 2);
  });

  test("prompts of concurrent runs are shown one at a time", AGAINST_DAEMON, async () => {
    const { ui, api } = open({ "kgent.model": "two-writes" });
    let maxVisible = 0;
    ui.onQuickPick = (qp) => {
      maxVisible = Math.max(maxVisible, ui.quickPicks.filter((q) => q.visible).length);
      setTimeout(() => qp.pick("Allow once"), 30);
    };
    const runs = [runTask({ prompt: "first writer" }), runTask({ prompt: "second writer" })];
    await waitFor("two live runs", () => api.liveRunIds().length === 2 || undefined);
    const ends = (await Promise.all(runs)).map(ended);
    assert.deepEqual(
      ends.map((e) => e.status),
      ["settled", "settled"],
    );
    assert.equal(ui.quickPicks.length, 4);
    assert.equal(maxVisible, 1);
    assert.ok(ui.statusHistory.includes("$(sync~spin) Kgent: running (2)"));
    assert.match(transcript(), /^\[[0-9a-f]{8}\] /m, "interleaved runs are tagged");
  });

  test(
    "a queued prompt withdrawn before its turn is never shown, and the prompts behind it still wait",
    AGAINST_DAEMON,
    async () => {
      const { ui, api } = open();
      ui.onQuickPick = () => undefined;
      const first = runTask({ prompt: "first" });
      const open1 = await waitFor("the first prompt", () => ui.quickPicks.find((q) => q.visible));
      state.config["kgent.model"] = "two-writes";
      const second = runTask({ prompt: "second" });
      await waitFor("the second run's request", () => transcript().match(/\? approval needed/g)?.length === 2);
      const third = runTask({ prompt: "third" });
      await waitFor("the third run's request", () => transcript().match(/\? approval needed/g)?.length === 3);
      assert.equal(api.liveRunIds().length, 3);
      assert.equal(ui.quickPicks.length, 1, "the other prompts wait for the first");
      // the status bar follows the third request a moment later (its count is updated on the next state change)
      await waitFor(
        "the status bar to count three",
        () => ui.statusHistory.at(-1) === "$(bell) Kgent: waiting for approval (3)",
      );
      // Cancel the second run from its notification: the daemon withdraws its queued prompt.
      ui.progress[1].cancel();
      assert.equal(ended(await second).status, "cancelled");
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(open1.visible, true);
      assert.equal(ui.quickPicks.length, 1, "the third run's prompt still waits for the first");
      ui.onQuickPick = (qp) => qp.pick("Reject");
      open1.pick("Reject");
      assert.equal(ended(await first).status, "settled");
      assert.equal(ended(await third).status, "settled");
      assert.equal(ui.quickPicks.length, 1 + 1 + 2, "first: edit + bash; third: two writes; second: none");
      assert.equal(ui.quickPicks.filter((q) => q.visible).length, 0);
    },
  );

  test("without a workspace folder Run Task explains what to do", AGAINST_DAEMON, async () => {
    const { ui } = open();
    state.workspaceFolders = undefined;
    assert.equal(await runTask({ prompt: "x" }), undefined);
    assert.deepEqual(
      ui.messages.map((m) => m.message),
      ["Kgent: open a folder first: Kgent works in a workspace folder."],
    );
    assert.equal(w().api.daemonPid(), undefined, "the daemon is started lazily");
  });

  test(
    "a server command that does not exist: a clear error, and the next command tries again",
    AGAINST_DAEMON,
    async () => {
      const { ui, sb } = open({ "kgent.serverCommand": "/nonexistent/kgent serve --stdio", "kgent.model": "hello" });
      assert.equal(await runTask({ prompt: "x" }), undefined);
      const err = await waitFor("the error", () => ui.messages.find((m) => m.severity === "error"));
      assert.match(err.message, /^Kgent: could not start the daemon: '\/nonexistent\/kgent' was not found/);
      assert.equal(err.message.match(/could not start/g)?.length, 1, "no doubled prefix");
      assert.deepEqual(err.items, ["Open Settings", "Show Daemon Log"]);
      // The status bar says it failed (not "idle") until the daemon starts.
      await waitFor("the failed status", () => ui.statusHistory.at(-1) === "$(error) Kgent: failed");
      state.config["kgent.serverCommand"] = serverCommandLine();
      assert.equal(ended(await runTask({ prompt: "x" })).status, "settled");
      assert.equal(ui.statusHistory.at(-1), "$(hubot) Kgent: idle");
      assert.ok(sb.workspace);
    },
  );

  test(
    "a server command that is not the daemon: the error names it, its exit status and its own words",
    AGAINST_DAEMON,
    async () => {
      // `kgent` without `serve --stdio` prints its usage (to stderr) and exits 2.
      const kgent = serverCommandLine().split(" ")[0];
      const { ui } = open({ "kgent.serverCommand": kgent, "kgent.model": "hello" });
      assert.equal(await runTask({ prompt: "x" }), undefined);
      const err = await waitFor("the error", () => ui.messages.find((m) => m.severity === "error"));
      assert.match(
        err.message,
        /^Kgent: could not start the daemon: '[^']*kgent' exited before answering initialize \(exit status 2\)\./,
      );
      assert.match(err.message, /It said: .*usage: kgent.*choose a subcommand/);
      assert.match(err.message, /kgent serve --stdio/);
      assert.equal(err.message.match(/could not start/g)?.length, 1, "no doubled prefix");
      assert.match(daemonLog(), /usage: kgent/, "the usage is in the Kgent Daemon output");
      assert.doesNotMatch(daemonLog(), /Sending (request|notification) failed/);
    },
  );

  test("the happy path leaves nothing that looks like an error in the daemon log", AGAINST_DAEMON, async () => {
    open({ "kgent.model": "hello" });
    assert.equal(ended(await runTask({ prompt: "Say hello." })).status, "settled");
    await exec("kgent.restartDaemon");
    assert.equal(ended(await runTask({ prompt: "Say hello." })).status, "settled");
    assert.doesNotMatch(daemonLog(), /\[kgent-client\]|failed|error/i);
  });

  test("the daemon's stderr goes to the Kgent Daemon output channel", AGAINST_DAEMON, async () => {
    const { ui } = open({
      "kgent.serverCommand": `sh -c 'echo kgent-stderr-probe >&2; exec "$@"' sh ${serverCommandLine()}`,
      "kgent.model": "hello",
    });
    assert.equal(ended(await runTask({ prompt: "Say hello." })).status, "settled");
    await waitFor("the daemon's stderr in its channel", () => daemonLog().includes("kgent-stderr-probe\n"));
    assert.ok(!transcript().includes("kgent-stderr-probe"), "not in the transcript");
    assert.equal(ui.messages.filter((m) => m.severity === "error").length, 0);
  });

  test("Restart Daemon replaces the process; deactivate ends it with exit", AGAINST_DAEMON, async () => {
    const { ui, api, pids } = open({ "kgent.model": "hello" });
    ended(await runTask({ prompt: "Say hello." }));
    const before = api.daemonPid();
    assert.ok(before !== undefined);
    pids.add(before);
    await exec("kgent.restartDaemon");
    const after = api.daemonPid();
    assert.ok(after !== undefined && after !== before);
    assert.equal(isAlive(before), false);
    assert.ok(ui.messages.some((m) => m.message === "Kgent: daemon restarted."));
    assert.equal(ui.messages.filter((m) => m.severity === "error").length, 0, "a requested restart is not a crash");
  });
});
