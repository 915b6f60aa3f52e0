// Issue 40's panel points: queued messages a run never read come back into the box however it ends (Stop, Kgent:
// Cancel Run, a failure, a lost daemon); a call a cancel cut short says "cancelled", not "failed"; a slash command's
// message shows what was typed (`/init`), live, resumed and forked. The model alone first, then against the daemon
// (the test is the page: it reads the posted state and sends what a person does).

import { strict as assert } from "node:assert";
import { describe, test } from "node:test";
import { PanelModel } from "../src/panelModel";
import { storedItems } from "../src/panelHistory";
import type { ToolItem, UserItem } from "../src/panelItems";
import type { ToPage } from "../src/panelMessages";
import type { AgentEventParams, SessionResult } from "../src/protocol";
import { state } from "./fake-vscode";
import { AGAINST_DAEMON, waitFor } from "./helpers";
import { items, lastState, openPanel, type World } from "./panelWorld";

const USAGE = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, text: "1 in / 1 out tokens" };

function events(runId: string, sessionId = "s1"): (event: Record<string, unknown>) => AgentEventParams {
  let seq = 0;
  return (event) => ({ runId, sessionId, seq: seq++, event: event as AgentEventParams["event"] });
}

function runEnd(status: string, sessionId = "s1"): Record<string, unknown> {
  return {
    type: "run_end",
    status,
    stopReason: status === "cancelled" ? "cancelled" : "error",
    text: "",
    changedPaths: [],
    patch: "",
    usage: USAGE,
    sessionId,
    turns: 1,
  };
}

function notes(m: PanelModel): string[] {
  return m.snapshot().items.flatMap((i) => (i.type === "note" ? [i.text] : []));
}

describe("issue 40: the panel model", () => {
  test("a run that ends with messages queued gives them back once, with a note; a settled run gives nothing", () => {
    for (const [status, why] of [
      ["cancelled", /^Stopped: the 2 queued messages are back in the box, not sent/],
      ["failed", /^The run failed: the 2 queued messages are back in the box/],
    ] as const) {
      const m = new PanelModel();
      const ev = events("r1");
      m.runStarted("r1", "s1", "go", "/w", "panel");
      m.event(ev({ type: "queue_update", steering: ["look at b too"], followUp: ["then add a test"] }));
      // A sub-agent's queue is its own: it never comes back to the panel's box.
      m.event({ ...events("sub")({ type: "queue_update", steering: ["sub's"], followUp: [] }), parentRunId: "r1" });
      m.event(ev(runEnd(status)));
      assert.deepEqual(m.takeUnread(), ["look at b too", "then add a test"], status);
      assert.deepEqual(m.takeUnread(), [], "given back once");
      assert.equal(notes(m).length, 1);
      assert.match(notes(m)[0], why);
    }
    const m = new PanelModel();
    const ev = events("r2");
    m.runStarted("r2", "s1", "go", "/w", "panel");
    m.event(ev({ type: "queue_update", steering: [], followUp: ["then add a test"] }));
    m.event(ev({ type: "queue_update", steering: [], followUp: [] })); // delivered: the run read it
    m.event(ev(runEnd("settled")));
    assert.deepEqual(m.takeUnread(), []);
    assert.deepEqual(notes(m), []);
  });

  test("a run lost with the daemon gives its queue back too", () => {
    const m = new PanelModel();
    m.runStarted("r1", "s1", "go", "/w", "panel");
    m.event(events("r1")({ type: "queue_update", steering: [], followUp: ["one more thing"] }));
    m.runLost("r1", "the daemon exited");
    assert.deepEqual(m.takeUnread(), ["one more thing"]);
    assert.ok(notes(m).some((n) => /^The run was lost: the queued message is back in the box/.test(n)));
  });

  test("a call a cancel cut short is cancelled, not failed; a call that failed stays failed", () => {
    const m = new PanelModel();
    const ev = events("r1");
    m.runStarted("r1", "s1", "go", "/w", "panel");
    for (const id of ["c1", "c2"])
      m.event(ev({ type: "tool_call", toolCallId: id, name: "bash", kind: "execute", title: "Run `x`", args: {} }));
    m.event(ev({ type: "tool_update", toolCallId: "c1", status: "in_progress", output: "started\n" }));
    m.event(
      ev({
        type: "tool_update",
        toolCallId: "c1",
        status: "failed",
        output: "cancelled: the run was cancelled",
        isError: true,
      }),
    );
    m.event(ev({ type: "tool_update", toolCallId: "c2", status: "failed", output: "exit code 1", isError: true }));
    const tools = m.snapshot().items.filter((i): i is ToolItem => i.type === "tool");
    assert.equal(tools[0].cancelled, true);
    assert.equal(tools[0].status, "failed", "the daemon's status is kept");
    assert.match(tools[0].output, /^started\ncancelled: the run was cancelled$/, "its output so far is kept above");
    assert.equal(tools[1].cancelled, undefined);
  });

  test("a slash command's message shows what was typed, whichever comes first: the run's start or its message", () => {
    const expansion = "Read the project and draft an AGENTS.md for it …";
    for (const startFirst of [true, false]) {
      const m = new PanelModel();
      const ev = events("r1");
      const start = (): void => m.runStarted("r1", "s1", "/init", "/w", "panel", "/init");
      if (startFirst) start();
      m.event(
        ev({
          type: "run_start",
          workspace: "/w",
          mode: "ask",
          provider: "scripted",
          model: "hello",
          prompt: expansion,
        }),
      );
      m.event(ev({ type: "user_message", text: expansion, source: "prompt", entryId: "e1" }));
      if (!startFirst) start();
      const snap = m.snapshot();
      const user = snap.items.find((i): i is UserItem => i.type === "user");
      assert.equal(user?.text, "/init", `start first: ${startFirst}`);
      assert.equal(snap.sections[0].label, "/init");
      assert.equal(snap.live[0].label, "/init");
    }
    // A message typed as it is sent (no command) is shown as the daemon says, attachments split off.
    const m = new PanelModel();
    m.runStarted("r1", "s1", "Look at @a.py", "/w", "panel", "Look at @a.py");
    m.event(
      events("r1")({
        type: "user_message",
        text: 'Look at @a.py\n\n<resource uri="file:///w/a.py">\nx = 1\n</resource>',
        source: "prompt",
      }),
    );
    const user = m.snapshot().items.find((i): i is UserItem => i.type === "user");
    assert.equal(user?.text, "Look at @a.py");
    assert.equal(user?.attachments.length, 1);
  });

  test("a stored session: a slash command's prompt as typed, a cancelled call as cancelled", () => {
    const session = {
      sessionId: "s1",
      workspace: "/w",
      title: "/init",
      created: "2026-01-01T00:00:00Z",
      leafId: "e3",
      branch: ["e1", "e2", "e3"],
      entries: [
        {
          id: "e1",
          parentId: null,
          type: "message",
          timestamp: "2026-01-01T00:00:00Z",
          typed: "/init",
          message: { role: "user", text: "Read the project and draft an AGENTS.md …" },
        },
        {
          id: "e2",
          parentId: "e1",
          type: "message",
          timestamp: "2026-01-01T00:00:01Z",
          message: {
            role: "assistant",
            text: "",
            stopReason: "tool_use",
            toolCalls: [{ id: "c1", name: "bash", arguments: { command: "sleep 60" } }],
          },
        },
        {
          id: "e3",
          parentId: "e2",
          type: "message",
          timestamp: "2026-01-01T00:00:02Z",
          message: {
            role: "tool",
            toolCallId: "c1",
            name: "bash",
            content: "cancelled: the run was cancelled",
            isError: true,
          },
        },
      ],
      labels: {},
      warnings: [],
      liveRunId: null,
      usage: USAGE,
    } as unknown as SessionResult;
    let n = 0;
    const out = storedItems(session, (p) => `${p}-${++n}`);
    const user = out.find((i): i is UserItem => i.type === "user");
    assert.equal(user?.text, "/init");
    const tool = out.find((i): i is ToolItem => i.type === "tool");
    assert.equal(tool?.cancelled, true);
  });
});

function setInputs(w: World): { text: string; append?: boolean }[] {
  return w.view.posted.flatMap((p) => {
    const m = p as ToPage;
    return m.type === "setInput" ? [m] : [];
  });
}

describe("issue 40: the panel against the daemon", () => {
  test(
    "Kgent: Cancel Run while a command runs: its card says cancelled, the queued follow-up is back in the box",
    AGAINST_DAEMON,
    async () => {
      const w = openPanel({ "kgent.model": "long-bash", "kgent.permissionMode": "full" });
      w.view.send({ type: "send", text: "Run the long command." });
      const running = await waitFor("the command running", () =>
        items(w).find(
          (i): i is ToolItem => i.type === "tool" && i.status === "in_progress" && /started/.test(i.output),
        ),
      );
      w.view.send({ type: "send", text: "then say how long it took", as: "followUp" });
      await waitFor("the queue", () => lastState(w)?.live[0]?.followUp.includes("then say how long it took"));
      // Not the page's Stop: the command palette's Cancel Run (one live run: no picker).
      await state.commands.get("kgent.cancelRun")?.();
      await waitFor("the end", () => items(w).find((i) => i.type === "end" && i.status === "cancelled"));
      const tool = items(w).find((i): i is ToolItem => i.type === "tool" && i.id === running.id);
      assert.equal(tool?.cancelled, true, "a cancelled command is not a failed one");
      const back = await waitFor("the follow-up back in the box", () => setInputs(w)[0]);
      assert.deepEqual(back, { type: "setInput", text: "then say how long it took", append: true });
      assert.ok(
        items(w).some((i) => i.type === "note" && /^Stopped: the queued message is back in the box/.test(i.text)),
      );
      assert.equal(setInputs(w).length, 1, "given back once");
    },
  );

  test(
    "/init: the message reads /init (not the prompt it expands to), live, resumed and forked",
    AGAINST_DAEMON,
    async () => {
      const w = openPanel({ "kgent.model": "hello" });
      w.view.send({ type: "send", text: "/init" });
      await waitFor("the end", () => items(w).find((i) => i.type === "end"));
      const users = (): UserItem[] => items(w).filter((i): i is UserItem => i.type === "user");
      assert.deepEqual(
        users().map((u) => u.text),
        ["/init"],
      );
      assert.equal(lastState(w)?.sections[0]?.label, "/init");
      const sessionId = lastState(w)?.sessionId;
      assert.ok(sessionId);
      // Resumed from History: the stored prompt keeps what was typed beside its expansion.
      w.view.send({ type: "newConversation" });
      await waitFor("the new conversation", () => items(w).length === 0 || undefined);
      w.view.send({ type: "resume", sessionId, title: "/init" });
      const resumed = await waitFor("the resumed message", () => users()[0]);
      assert.equal(resumed.text, "/init");
      // Forked at it: back into the box as typed, so sending it expands it afresh.
      const entryId = resumed.entryId;
      assert.ok(entryId);
      w.view.send({ type: "forkAt", sessionId, entryId });
      const back = await waitFor("the message back in the box", () => setInputs(w)[0]);
      assert.equal(back.text, "/init");
    },
  );
});
