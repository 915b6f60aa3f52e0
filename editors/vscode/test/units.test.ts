// The editor-agnostic helpers on their own (no daemon, no vscode).

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { approvalPrompt, diffPreview } from "../src/approval";
import { sanitizeAnswer } from "../src/client";
import { buildPrompt, relativeTime } from "../src/prompt";
import type { AgentEventParams, PermissionParams, ReviewHunk, SessionResult } from "../src/protocol";
import { renderMarkdown } from "../src/markdown";
import { mentionFor, parseMentions, promptWithMentions } from "../src/mentions";
import { minimalChange } from "../src/hostFiles";
import { splitAttachments } from "../src/panelHistory";
import { PanelModel } from "../src/panelModel";
import { hunkLine, withoutHunks } from "../src/reviewModel";
import { TranscriptWriter } from "../src/transcript";
import { slashName } from "../src/slashCommands";
import { sandboxStatus } from "../src/usage";
import { extensionRoot } from "./helpers";

function permission(
  toolCall: Partial<PermissionParams["toolCall"]>,
  options?: PermissionParams["options"],
): PermissionParams {
  return {
    runId: "run-1",
    sessionId: "s",
    requestId: "run-1:perm:1",
    toolCall: { toolCallId: "c1", name: "write", kind: "edit", title: "Write notes.txt", args: {}, ...toolCall },
    risk: "medium",
    reason: "ask mode: writing a file needs your approval",
    operation: "write",
    scope: "workspace",
    options: options ?? [
      { optionId: "allow_once", kind: "allow_once", name: "Allow once" },
      { optionId: "reject_once", kind: "reject_once", name: "Reject" },
    ],
  };
}

describe("approval prompts", () => {
  test("a new file previews against an empty document", () => {
    const pv = diffPreview(permission({ path: "notes.txt", oldText: null, newText: "first\n" }));
    assert.deepEqual(pv, { kind: "sides", fileName: "notes.txt", before: "", after: "first\n", isNewFile: true });
    const p = approvalPrompt(permission({ path: "notes.txt", oldText: null, newText: "first\n" }));
    assert.equal(p.title, "Kgent wants to write notes.txt");
    assert.deepEqual(p.choices[0], { kind: "diff", label: "$(diff) Show diff", description: "new file notes.txt" });
  });

  test("only a unified diff: previewed as a .diff document", () => {
    const pv = diffPreview(permission({ path: "a/b.py", diff: "--- a/b.py\n+++ b/b.py\n" }));
    assert.deepEqual(pv, { kind: "unified", fileName: "b.py", diff: "--- a/b.py\n+++ b/b.py\n" });
  });

  test("a command: title with the command, a details preview first, unknown option kinds kept but marked", () => {
    const p = approvalPrompt(
      permission({ name: "bash", kind: "execute", title: "Run tests", command: "pytest -q\n  --maxfail=1" }, [
        { optionId: "x", kind: "allow_forever", name: "Something new" },
        { optionId: "reject_once", kind: "reject_once", name: "Reject" },
      ]),
    );
    assert.equal(p.title, "Kgent wants to run `pytest -q ⏎ --maxfail=1`");
    assert.equal(p.choices[0].kind, "details");
    assert.deepEqual(
      p.choices.map((c) => c.label),
      ["$(info) Show details", "$(question) Something new", "$(close) Reject"],
    );
    assert.match(p.details, /Command:\npytest -q\n {2}--maxfail=1/);
  });

  test("outside the workspace is said in the title", () => {
    const p = approvalPrompt({ ...permission({ name: "read", kind: "read", path: "/etc/hosts" }), scope: "outside" });
    assert.equal(p.title, "Kgent wants to read /etc/hosts (outside the workspace)");
  });

  test("answers: only an offered option is passed on, anything else is a reject", () => {
    const params = permission({});
    assert.deepEqual(sanitizeAnswer(params, { outcome: "selected", optionId: "allow_once" }), {
      outcome: "selected",
      optionId: "allow_once",
    });
    assert.deepEqual(sanitizeAnswer(params, { outcome: "selected", optionId: "allow_always" }), {
      outcome: "cancelled",
    });
    assert.deepEqual(sanitizeAnswer(params, undefined), { outcome: "cancelled" });
  });
});

describe("prompt content", () => {
  test("text alone stays a string; context becomes protocol blocks", () => {
    assert.equal(buildPrompt("do it"), "do it");
    assert.deepEqual(
      buildPrompt("explain", {
        kind: "selection",
        fileUri: "file:///w/a.py",
        relPath: "a.py",
        startLine: 3,
        endLine: 4,
        text: "x = 1\n",
      }),
      [
        { type: "text", text: "explain" },
        { type: "resource", resource: { uri: "file:///w/a.py#L3-L4", text: "x = 1\n" } },
      ],
    );
    assert.deepEqual(buildPrompt("fix", { kind: "file", fileUri: "file:///w/a.py", relPath: "a.py" }), [
      { type: "text", text: "fix" },
      { type: "resource_link", uri: "file:///w/a.py", name: "a.py" },
    ]);
    assert.deepEqual(
      buildPrompt("fix", { kind: "file", fileUri: "file:///w/a.py", relPath: "a.py", text: "unsaved" }),
      [
        { type: "text", text: "fix" },
        { type: "resource", resource: { uri: "file:///w/a.py", text: "unsaved" } },
      ],
    );
  });

  test("relative times", () => {
    const now = new Date("2026-09-01T12:00:00Z");
    assert.equal(relativeTime("2026-09-01T11:59:50Z", now), "just now");
    assert.equal(relativeTime("2026-09-01T11:55:00Z", now), "5 min ago");
    assert.equal(relativeTime("2026-09-01T09:00:00Z", now), "3 h ago");
    assert.equal(relativeTime("2026-08-31T10:00:00Z", now), "yesterday");
    assert.equal(relativeTime("2026-08-01T10:00:00Z", now), "2026-08-01");
    assert.equal(relativeTime("not a date", now), "not a date");
  });
});

describe("transcript", () => {
  const ev = (runId: string, seq: number, event: Record<string, unknown>): AgentEventParams => ({
    runId,
    sessionId: "sess00000000",
    seq,
    event: event as AgentEventParams["event"],
  });

  test("streams text, ignores unknown events, tags interleaved runs, lists changed files as file URIs", () => {
    let out = "";
    const w = new TranscriptWriter({ append: (t) => (out += t) });
    const start = {
      type: "run_start",
      workspace: "/w",
      mode: "ask",
      provider: "scripted",
      model: "hello",
      prompt: "x",
    };
    w.event(ev("run-aaaaaaaa0000", 0, start));
    w.event(ev("run-aaaaaaaa0000", 1, { type: "message_delta", kind: "text", delta: "Hel" }));
    w.event(ev("run-aaaaaaaa0000", 2, { type: "message_delta", kind: "text", delta: "lo" }));
    w.event(ev("run-aaaaaaaa0000", 3, { type: "a_future_event", anything: true }));
    w.event(ev("run-bbbbbbbb0000", 0, start));
    w.event(ev("run-aaaaaaaa0000", 4, { type: "message_delta", kind: "text", delta: " again" }));
    w.event(
      ev("run-aaaaaaaa0000", 5, {
        type: "run_end",
        status: "settled",
        stopReason: "end",
        text: "Hello again",
        changedPaths: ["src/a b.py"],
        patch: "--- a/x\n+++ b/x\n",
        usage: {
          inputTokens: 3,
          outputTokens: 4,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          text: "3 in / 4 out tokens",
        },
        sessionId: "sess00000000",
        turns: 1,
      }),
    );
    assert.equal(
      out,
      [
        "▶ Run aaaaaaaa · session sess0000 · ask · scripted/hello · /w",
        "Kgent: Hello",
        "[bbbbbbbb] ▶ Run bbbbbbbb · session sess0000 · ask · scripted/hello · /w",
        "[aaaaaaaa] Kgent:  again",
        "[aaaaaaaa] ■ Run settled (end) · 1 turn · 3 in / 4 out tokens",
        "[aaaaaaaa]   Changed files:",
        "[aaaaaaaa]     file:///w/src/a%20b.py",
        "[aaaaaaaa]   Patch:",
        "[aaaaaaaa]     --- a/x\n    +++ b/x",
        "",
        "",
      ].join("\n"),
    );
  });
});

describe("markdown", () => {
  test("renders the usual constructs and escapes every tag and attribute from the input", () => {
    const html = renderMarkdown(
      "# Title\n\nSome **bold**, *it*, `a<b>` and [x](javascript:alert(1)).\n\n- one\n- two\n\n```py\nprint('<hi>')\n```\n<img src=x onerror=alert(1)>",
    );
    assert.match(html, /<h3>Title<\/h3>/);
    assert.match(html, /<strong>bold<\/strong>/);
    assert.match(html, /<em>it<\/em>/);
    assert.match(html, /<code>a&lt;b&gt;<\/code>/);
    assert.match(html, /<ul>\n<li>one<\/li>\n<li>two<\/li>\n<\/ul>/);
    // Fenced code: highlighted by highlight.js, its language kept; the text inside still escaped.
    assert.match(
      html,
      /<pre data-lang="py"><code class="language-py"><span class="hljs-built_in">print<\/span>\(<span class="hljs-string">&#x27;&lt;hi&gt;&#x27;<\/span>\)/,
    );
    assert.doesNotMatch(html, /<img|<a /);
    assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
    assert.doesNotMatch(html, /href/);
    assert.match(
      renderMarkdown("see [the docs](https://example.com/a)"),
      /<span class="link" title="https:\/\/example\.com\/a">the docs<\/span>/,
    );
  });

  test("tables (GFM) render as tables; cells are escaped", () => {
    const html = renderMarkdown("| file | lines |\n|---|---:|\n| a.py | 3 |\n| <b>x</b> | 4 |");
    assert.match(html, /<table>\n<thead>\n<tr>\n<th>file<\/th>\n<th style="text-align:right">lines<\/th>/);
    assert.match(html, /<td>a\.py<\/td>/);
    assert.match(html, /<td>&lt;b&gt;x&lt;\/b&gt;<\/td>/);
  });
});

describe("@file mentions", () => {
  test("attach files and line ranges as resource blocks; unknown paths stay text", async () => {
    assert.deepEqual(parseMentions("look at @src/a.py#L3-9, and @b.txt. mail@x"), [
      { path: "src/a.py", startLine: 3, endLine: 9 },
      { path: "b.txt" },
    ]);
    const files: Record<string, string> = { "/w/src/a.py": "1\n2\n3\n4\n", "/w/b.txt": "bee" };
    const prompt = await promptWithMentions("fix @src/a.py#L2-3 and @b.txt and @nope", "/w", async (p) => files[p]);
    assert.ok(Array.isArray(prompt));
    assert.deepEqual(prompt.slice(1), [
      { type: "resource", resource: { uri: "file:///w/src/a.py#L2-L3", text: "2\n3" } },
      { type: "resource", resource: { uri: "file:///w/b.txt", text: "bee" } },
    ]);
    assert.equal(await promptWithMentions("no mentions", "/w", async () => undefined), "no mentions");
    assert.equal(mentionFor("src/a.py", 3, 9), "@src/a.py#L3-9");
  });
});

describe("slash commands", () => {
  test("slashName reads a message as the daemon does: `/name` at the very start, then whitespace or the end", () => {
    assert.equal(slashName("/help"), "help");
    assert.equal(slashName("/mode plan"), "mode");
    assert.equal(slashName("/explain\nsrc/app.py"), "explain");
    assert.equal(slashName("/my-cmd.v2 x"), "my-cmd.v2");
    for (const text of ["//help", " /help", "/usr/bin/x is broken", "help", "/", "/-x", ""])
      assert.equal(slashName(text), undefined, text);
  });
});

describe("panel model", () => {
  test("folds events into items: deltas append, tool output snapshots replace, run_end closes the run", () => {
    const m = new PanelModel();
    let seq = 0;
    const ev = (event: Record<string, unknown>): AgentEventParams => ({
      runId: "r1",
      sessionId: "s1",
      seq: seq++,
      event: event as AgentEventParams["event"],
    });
    m.runStarted("r1", "s1", "do it", "/w", "panel");
    m.event(
      ev({
        type: "run_start",
        runId: "r1",
        sessionId: "s1",
        workspace: "/w",
        mode: "ask",
        provider: "scripted",
        model: "x",
        prompt: "do it",
      }),
    );
    m.event(ev({ type: "user_message", text: "do it", source: "prompt" }));
    m.event(ev({ type: "message_delta", kind: "thinking", delta: "hmm" }));
    m.event(ev({ type: "message_delta", kind: "text", delta: "Hel" }));
    m.event(ev({ type: "message_delta", kind: "text", delta: "lo" }));
    m.event(
      ev({ type: "tool_call", toolCallId: "c1", name: "bash", kind: "execute", title: "Run", args: {}, command: "ls" }),
    );
    m.event(ev({ type: "tool_update", toolCallId: "c1", status: "in_progress", output: "a\n" }));
    m.event(ev({ type: "tool_update", toolCallId: "c1", status: "in_progress", output: "a\nb\n" }));
    assert.equal(m.liveRuns.length, 1);
    m.event(
      ev({
        type: "run_end",
        status: "settled",
        stopReason: "end_turn",
        text: "Hello",
        changedPaths: [],
        patch: "",
        usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
        sessionId: "s1",
        turns: 1,
      }),
    );
    const s = m.snapshot();
    assert.deepEqual(
      s.items.map((i) => i.type),
      ["user", "thinking", "assistant", "tool", "end"],
    );
    const tool = s.items[3];
    assert.ok(tool.type === "tool" && tool.output === "a\nb\n" && tool.rev === 2);
    assert.ok(s.items[2].type === "assistant" && s.items[2].text === "Hello");
    assert.equal(s.live.length, 0);
    assert.equal(s.sessionId, "s1");
    assert.equal(s.sessionUsage, undefined, "the session's total is the daemon's (agent/session), not summed here");
    assert.equal(s.sessionContext, undefined); // no usage event came
    assert.equal(s.sessionResumed, false);
    assert.ok(s.items.every((i) => i.section === "r1"));
    assert.deepEqual(s.sections, [{ runId: "r1", label: "do it", origin: "panel", live: false }]);
  });

  test("a Run Task run gets its own section and leaves the panel's conversation where it is", () => {
    const m = new PanelModel();
    let seq = 0;
    const ev = (runId: string, sessionId: string, event: Record<string, unknown>): AgentEventParams => ({
      runId,
      sessionId,
      seq: seq++,
      event: event as AgentEventParams["event"],
    });
    const usage = { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 };
    m.runStarted("p1", "s1", "panel question", "/w", "panel");
    m.event(ev("p1", "s1", { type: "user_message", text: "panel question", source: "prompt" }));
    m.event(
      ev("t1", "s2", {
        type: "run_start",
        runId: "t1",
        sessionId: "s2",
        workspace: "/w",
        mode: "ask",
        provider: "scripted",
        model: "x",
        prompt: "task question",
      }),
    );
    m.runStarted("t1", "s2", "task question", "/w", "task");
    m.event(ev("t1", "s2", { type: "user_message", text: "task question", source: "prompt" }));
    m.event(
      ev("t1", "s2", {
        type: "run_end",
        status: "settled",
        stopReason: "end",
        text: "",
        changedPaths: ["a.txt"],
        patch: "",
        usage,
        sessionId: "s2",
        turns: 1,
      }),
    );
    m.event(
      ev("p1", "s1", {
        type: "run_end",
        status: "settled",
        stopReason: "end",
        text: "",
        changedPaths: [],
        patch: "",
        usage,
        sessionId: "s1",
        turns: 1,
      }),
    );
    const s = m.snapshot();
    assert.equal(s.sessionId, "s1");
    assert.equal(s.sessionLabel, "panel question");
    assert.deepEqual(
      s.sections.map((x) => [x.runId, x.origin, x.label]),
      [
        ["p1", "panel", "panel question"],
        ["t1", "task", "task question"],
      ],
    );
    assert.deepEqual(
      s.items.map((i) => `${i.type}:${i.section}`),
      ["user:p1", "user:t1", "end:t1", "end:p1"],
    );
  });

  test("the context gauge follows the panel's conversation: not a Run Task run's, not a sub-agent's", () => {
    const m = new PanelModel();
    let seq = 0;
    const ev = (
      runId: string,
      sessionId: string,
      event: Record<string, unknown>,
      parentRunId?: string,
    ): AgentEventParams => ({
      runId,
      sessionId,
      seq: seq++,
      event: event as AgentEventParams["event"],
      ...(parentRunId ? { parentRunId } : {}),
    });
    const usage = { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const used = (tokens: number) => ({
      type: "usage",
      turn: usage,
      total: usage,
      context: { tokens, window: 64_000 },
    });
    m.runStarted("p1", "s1", "panel question", "/w", "panel");
    m.event(ev("p1", "s1", used(1_100)));
    assert.deepEqual(m.snapshot().sessionContext, { tokens: 1_100, window: 64_000 });
    m.runStarted("t1", "s2", "task question", "/w", "task");
    m.event(ev("t1", "s2", used(50_000)));
    m.event(ev("sub1", "s1", used(30_000), "p1"));
    m.event(ev("p1", "s1", { type: "usage", turn: usage, total: usage })); // a sub-agent's run counted: no context
    assert.deepEqual(m.snapshot().sessionContext, { tokens: 1_100, window: 64_000 });
    m.event(ev("p1", "s1", used(2_400)));
    assert.deepEqual(m.snapshot().sessionContext, { tokens: 2_400, window: 64_000 });
    m.clear(); // New Conversation
    assert.equal(m.snapshot().sessionContext, undefined);
  });

  test("a sub-agent's streamed text sits under its task card, named; an edit's diagnostics reach its tool card", () => {
    const m = new PanelModel();
    let seq = 0;
    const ev = (runId: string, event: Record<string, unknown>, parentRunId?: string): AgentEventParams => ({
      runId,
      sessionId: "s1",
      seq: seq++,
      event: event as AgentEventParams["event"],
      ...(parentRunId ? { parentRunId } : {}),
    });
    m.runStarted("p1", "s1", "q", "/w", "panel");
    m.event(ev("p1", { type: "tool_call", toolCallId: "t1", name: "task", kind: "think", title: "Task", args: {} }));
    m.event(ev("sub1", { type: "run_start", prompt: "look", workspace: "/w", agent: "Check sample.py" }, "p1"));
    m.event(ev("sub1", { type: "message_delta", kind: "text", delta: "Looking" }, "p1"));
    m.event(ev("sub1", { type: "message_delta", kind: "text", delta: " now." }, "p1"));
    m.event(
      ev("p1", { type: "tool_call", toolCallId: "e1", name: "edit", kind: "edit", title: "Edit a.py", args: {} }),
    );
    const diagnostics = [
      {
        path: "a.py",
        line: 2,
        column: 7,
        severity: "error",
        message: "Undefined name `valu`",
        source: "Ruff",
        code: "F821",
      },
    ];
    m.event(ev("p1", { type: "tool_update", toolCallId: "e1", status: "completed", output: "ok", diagnostics }));
    const items = m.snapshot().items;
    const text = items.find((i) => i.type === "assistant");
    assert.ok(text?.type === "assistant");
    assert.equal(text.text, "Looking now.");
    assert.equal(text.agent, "Check sample.py");
    assert.equal(text.section, "p1", "in its parent run's section");
    const edit = items.find((i) => i.type === "tool" && i.toolCallId === "e1");
    assert.ok(edit?.type === "tool");
    assert.deepEqual(edit.diagnostics, diagnostics);
  });

  test("a lost run's pending and running tool cards end", () => {
    const m = new PanelModel();
    const ev = (event: Record<string, unknown>): AgentEventParams => ({
      runId: "r1",
      sessionId: "s1",
      seq: 0,
      event: event as AgentEventParams["event"],
    });
    m.runStarted("r1", "s1", "x", "/w", "panel");
    m.event(
      ev({
        type: "tool_call",
        toolCallId: "c1",
        name: "bash",
        kind: "execute",
        title: "Run",
        args: {},
        command: "sleep 9",
      }),
    );
    m.event(ev({ type: "tool_update", toolCallId: "c1", status: "in_progress", output: "started\n" }));
    m.runLost("r1", "the daemon exited (SIGKILL)");
    const tool = m.snapshot().items.find((i) => i.type === "tool");
    assert.ok(tool !== undefined && tool.type === "tool");
    assert.equal(tool.status, "failed");
    assert.equal(tool.output, "started\nlost: the daemon exited (SIGKILL)");
  });
});

describe("panel model: a stored session", () => {
  test("a resumed session reads as the live run did: messages, attachments, tool calls with their results, notes", () => {
    const m = new PanelModel();
    const entry = (
      id: string,
      parentId: string | null,
      message: Record<string, unknown> | undefined,
      type = "message",
    ) => ({ id, parentId, type, timestamp: "t", ...(message ? { message } : {}) }) as SessionResult["entries"][number];
    const usage = {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      text: "0 in / 0 out tokens",
    };
    const session: SessionResult = {
      sessionId: "s1",
      workspace: "/w",
      title: "fix it",
      created: "t",
      leafId: "e6",
      branch: ["e0", "e1", "e2", "e3", "e4", "e5", "e6"],
      entries: [
        entry("e0", null, undefined, "config"),
        entry("e1", "e0", {
          role: "user",
          text: 'fix it\n\n<resource uri="file:///w/a%20b.py#L1-L2">\nx = 1\ny = 2\n</resource>',
        }),
        entry("e2", "e1", {
          role: "assistant",
          text: "Looking.",
          thinking: "hm",
          stopReason: "tool_use",
          toolCalls: [
            { id: "c1", name: "edit", arguments: { path: "a.py" } },
            { id: "c2", name: "bash", arguments: { command: "make test" } },
          ],
        }),
        entry("e3", "e2", {
          role: "tool",
          toolCallId: "c1",
          name: "edit",
          content: "ok",
          isError: false,
          details: { diff: "-x\n+y\n" },
        }),
        entry("e4", "e3", {
          role: "tool",
          toolCallId: "c2",
          name: "bash",
          content: "permission_denied: no",
          isError: true,
        }),
        entry("x9", "e3", { role: "user", text: "on another branch" }),
        entry("e5", "e4", undefined, "compaction"),
        entry("e6", "e5", { role: "assistant", text: "Done.", stopReason: "end" }),
      ],
      labels: {},
      warnings: ["torn last line"],
      liveRunId: null,
      usage,
    };
    m.showSession(session, "fix it");
    const items = m.snapshot().items;
    assert.deepEqual(
      items.map((i) => i.type),
      ["user", "thinking", "assistant", "tool", "tool", "note", "assistant", "note"],
    );
    const user = items[0];
    assert.ok(user.type === "user");
    assert.deepEqual([user.text, user.entryId, user.sessionId], ["fix it", "e1", "s1"]);
    assert.deepEqual(user.attachments, [
      { uri: "file:///w/a%20b.py#L1-L2", name: "a b.py#L1-L2", text: "x = 1\ny = 2" },
    ]);
    const [edit, bash] = [items[3], items[4]];
    assert.ok(
      edit.type === "tool" && edit.title === "Edit a.py" && edit.status === "completed" && edit.diff === "-x\n+y\n",
    );
    assert.ok(
      bash.type === "tool" &&
        bash.title === "Run make test" &&
        bash.status === "failed" &&
        bash.isError &&
        bash.command === "make test",
    );
    assert.match(items[7].type === "note" ? items[7].text : "", /torn last line/);
    assert.equal(m.snapshot().sessionId, "s1");
    // Live runs stay when another session is shown; the conversation is replaced.
    m.showSession({ ...session, sessionId: "s2", branch: ["e0"] }, "other");
    assert.deepEqual(
      m.snapshot().items.map((i) => i.type),
      ["note"],
    );
  });

  test("splitAttachments leaves a message without resources as it is", () => {
    assert.deepEqual(splitAttachments("a <resource> b"), { text: "a <resource> b", attachments: [] });
  });
});

describe("buffers and review helpers", () => {
  test("minimalChange replaces only what differs", () => {
    assert.deepEqual(minimalChange("note: x\nrest\n", "NOTE: x\nrest\n"), { start: 0, end: 4, text: "NOTE" });
    assert.deepEqual(minimalChange("abc", "abc"), { start: 3, end: 3, text: "" });
    assert.deepEqual(minimalChange("aXa", "aa"), { start: 1, end: 2, text: "" });
    assert.deepEqual(minimalChange("", "new\n"), { start: 0, end: 0, text: "new\n" });
    for (const [a, b] of [
      ["aaa", "aa"],
      ["ab", "abab"],
      ["x\ny", "x\n\ny"],
    ]) {
      const c = minimalChange(a, b);
      assert.equal(a.slice(0, c.start) + c.text + a.slice(c.end), b);
    }
  });

  test("withoutHunks undoes replacements, insertions and deletions at their current lines", () => {
    const hunk = (h: Partial<ReviewHunk>): ReviewHunk => ({
      id: "r.1",
      status: "pending",
      oldStart: 1,
      oldCount: 1,
      newStart: 1,
      newCount: 1,
      currentStart: 1,
      oldText: "",
      newText: "",
      ...h,
    });
    const now = "one\nTWO\nnew line\nfour\n";
    const hunks = [
      hunk({ currentStart: 2, oldText: "two\n", newText: "TWO\n" }),
      hunk({ currentStart: 3, oldCount: 0, oldText: "", newText: "new line\n" }),
      hunk({ currentStart: 4, newCount: 0, oldText: "three\n", newText: "" }), // deleted before "four"
    ];
    assert.equal(withoutHunks(now, hunks), "one\ntwo\nthree\nfour\n");
    // A hunk the person edited since (no currentStart): its side still shows the line before the run, where the run
    // left it, shifted as the placed hunk above it was (the person added a line at the top, and edited THREE).
    const edited = "# mine\none\nadded\nTWO\nthree, says me\n";
    assert.equal(
      withoutHunks(edited, [
        hunk({ oldStart: 2, newStart: 2, currentStart: 3, oldCount: 0, oldText: "", newText: "added\n" }),
        hunk({ oldStart: 3, newStart: 4, currentStart: null, oldText: "three\n", newText: "THREE\n" }),
      ]),
      "# mine\none\nTWO\nthree\n",
    );
    // One that no longer fits in the file is left out (never a line invented past its end).
    assert.equal(withoutHunks("one\n", [hunk({ newStart: 5, currentStart: null, oldText: "x\n" })]), "one\n");
    assert.equal(hunkLine(hunks[2], 4), 3);
    assert.equal(hunkLine(hunk({ currentStart: 9 }), 4), 3, "an insertion at the end sits on the last line");
  });
});

describe("the manifest", () => {
  test("a provider list, the keybindings, the activity-bar view with its icon, and a word for Restricted Mode", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(extensionRoot(), "package.json"), "utf8")) as {
      contributes: {
        configuration: { properties: Record<string, { enum?: string[] }> };
        keybindings: { command: string; key: string }[];
        viewsContainers: { activitybar: { id: string; icon: string }[] };
        views: Record<string, { type?: string; id: string }[]>;
      };
      capabilities: { untrustedWorkspaces: { supported: string; description: string } };
    };
    const c = pkg.contributes;
    assert.deepEqual(c.configuration.properties["kgent.provider"].enum, ["", "openai", "anthropic", "scripted"]);
    assert.deepEqual(
      c.keybindings.map((k) => [k.command, k.key]),
      [
        ["kgent.focusPanel", "ctrl+alt+k"],
        ["kgent.runOnSelection", "ctrl+alt+l"],
      ],
    );
    const bar = c.viewsContainers.activitybar.find((v) => v.id === "kgent");
    assert.ok(bar && fs.existsSync(path.join(extensionRoot(), bar.icon)), "the activity bar icon");
    // The panel, then the Permissions tree (issue 25; a tree view has no `type`).
    assert.deepEqual(
      c.views.kgent.map((v) => [v.type ?? "tree", v.id]),
      [
        ["webview", "kgent.panel"],
        ["tree", "kgent.permissions"],
      ],
    );
    assert.equal(pkg.capabilities.untrustedWorkspaces.supported, "limited");
    assert.match(pkg.capabilities.untrustedWorkspaces.description, /Restricted Mode/);
  });

  test("activation: on what a person does first (opening a Kgent view, any Kgent command), else after startup", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(extensionRoot(), "package.json"), "utf8")) as {
      activationEvents: string[];
      contributes: { commands: { command: string }[] };
    };
    // Opening the panel must not wait for the workbench's startup to finish (it did: 9–14 s after the workbench).
    assert.deepEqual(pkg.activationEvents, ["onView:kgent.panel", "onView:kgent.permissions", "onStartupFinished"]);
    // Commands activate by themselves (VS Code ≥ 1.74 reads them from contributes.commands).
    assert.ok(pkg.contributes.commands.some((c) => c.command === "kgent.focusPanel"));
  });

  test("Export Session: in the palette and in the panel's … menu", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(extensionRoot(), "package.json"), "utf8")) as {
      contributes: {
        commands: { command: string; title: string }[];
        menus: { "view/title": { command: string; when: string }[] };
      };
    };
    const c = pkg.contributes;
    assert.equal(c.commands.find((x) => x.command === "kgent.exportSession")?.title, "Export Session");
    assert.ok(
      c.menus["view/title"].some((m) => m.command === "kgent.exportSession" && m.when === "view == kgent.panel"),
    );
  });
});

describe("transcript characters", () => {
  test("the transcript uses no emoji that fonts render as an empty box", () => {
    const lines: string[] = [];
    const t = new TranscriptWriter({ append: (x: string) => lines.push(x) });
    t.event({ runId: "r1", sessionId: "s1", seq: 0, event: { type: "queue_update", steering: ["a"], followUp: [] } });
    assert.ok(lines.join("").includes("queued: 1 steering"));
    assert.doesNotMatch(lines.join(""), /[\u{1F300}-\u{1FAFF}\u{231B}\u{23F3}]/u);
  });
});

describe("usage and sandbox in words", () => {
  test("sandboxStatus warns when the daemon has none, says nothing extra when it has bubblewrap", () => {
    assert.deepEqual([sandboxStatus("bwrap", "").suffix, sandboxStatus("bwrap", "").warn], ["", false]);
    const none = sandboxStatus("none", "bwrap is not installed");
    assert.equal(none.suffix, " (no sandbox)");
    assert.ok(
      none.warn && none.tooltip.includes("bwrap is not installed") && none.tooltip.includes("every shell command asks"),
    );
    assert.equal(sandboxStatus(undefined, undefined).warn, false);
  });
});
