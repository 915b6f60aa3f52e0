// The panel's extension side in a fake VS Code (the test is the page: it reads the posted state and sends what a
// person clicks), against the real daemon. The page itself is tested in a real VS Code (test-real/).

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";
import type { RunSummary } from "../src/extension";
import type { ToPage } from "../src/panelMessages";
import type { ApprovalItem, UserItem } from "../src/panelItems";
import { state, TabInputTextDiff, type Uri } from "./fake-vscode";
import { AGAINST_DAEMON, gateScript, waitFor } from "./helpers";
import { items, lastState, openPanel, type World } from "./panelWorld";

const open = (config: Record<string, unknown> = {}, trusted = true): World => openPanel(config, { trusted });

function pendingCards(w: World): ApprovalItem[] {
  return items(w).filter((i): i is ApprovalItem => i.type === "approval" && i.state === "pending");
}

async function answer(w: World, card: ApprovalItem, kind: string): Promise<void> {
  const opt = card.options.find((o) => o.kind === kind);
  assert.ok(opt, `option ${kind}`);
  w.view.send({ type: "answer", requestId: card.requestId, optionId: opt.optionId });
  // Answered, the card folds into its tool card: one line saying how it was decided.
  await waitFor("the card answered", () =>
    items(w).some(
      (i) =>
        i.type === "tool" &&
        i.toolCallId === card.toolCallId &&
        i.runId === card.runId &&
        i.decidedBy === `Answered: ${opt.name}`,
    ),
  );
  assert.ok(!items(w).some((i) => i.id === card.id), "the card is gone");
}

function users(w: World): UserItem[] {
  return items(w).filter((i): i is UserItem => i.type === "user");
}

interface StoredEntry {
  id: string;
  parentId: string | null;
  message?: { role: string; text?: string };
}

/** The session file's entries, as the daemon wrote them. */
function sessionEntries(w: World, sessionId: string): StoredEntry[] {
  const file = fs
    .readdirSync(w.sb.stateDir, { recursive: true })
    .map(String)
    .find((f) => f.includes(sessionId) && f.endsWith(".jsonl"));
  assert.ok(file, "the session file");
  return fs
    .readFileSync(path.join(w.sb.stateDir, file), "utf8")
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => JSON.parse(l) as StoredEntry);
}

describe("the Kgent panel (extension side)", () => {
  test(
    "a message runs; approvals are cards with the diff; the palette never answers; the run ends in the panel",
    AGAINST_DAEMON,
    async () => {
      const w = open();
      const choices = await waitFor("the model picker", () =>
        lastState(w)?.choices.models.includes("tool-loop") ? lastState(w)!.choices : undefined,
      );
      assert.ok(choices.modes.includes("plan"));
      w.view.send({ type: "send", text: "Change value to 2." });
      const edit = await waitFor("the edit card", () => pendingCards(w)[0]);
      assert.match(edit.title, /edit sample\.py/);
      assert.match(edit.diff ?? "", /-value = 1\n\+value = 2/);
      assert.equal(edit.canOpenDiff, true);
      // Whatever the daemon offers (issue 25: the "always" ones per scope); each of the four kinds at least once.
      assert.deepEqual([...new Set(edit.options.map((o) => o.kind))].sort(), [
        "allow_always",
        "allow_once",
        "reject_always",
        "reject_once",
      ]);
      // Other UI (the palette, a QuickPick, a diff preview) neither answers nor closes the card.
      state.ui.onQuickPick = (qp) => qp.hide(); // the person opens a quick pick and presses Escape
      await state.commands.get("kgent.chooseMode")?.();
      w.view.send({ type: "openDiff", requestId: edit.requestId });
      await waitFor("the diff editor", () => state.ui.tabs.find((t) => t.label.includes("current ↔ proposed")));
      assert.deepEqual(w.api.pendingApprovals(), [edit.requestId]);
      await answer(w, edit, "allow_once");
      assert.equal(
        state.ui.tabs.filter((t) => t.label.includes("current ↔ proposed")).length,
        0,
        "the preview closes with the answer",
      );
      const bash = await waitFor("the command card", () => pendingCards(w)[0]);
      assert.match(bash.command ?? "", /python3 sample\.py/);
      await answer(w, bash, "reject_once");
      const end = await waitFor("the end", () => items(w).find((i) => i.type === "end"));
      assert.equal(end.type === "end" && end.status, "settled");
      assert.deepEqual(end.type === "end" && end.changedPaths, ["sample.py"]);
      const tools = items(w).filter((i) => i.type === "tool");
      assert.deepEqual(
        tools.map((t) => t.type === "tool" && [t.name, t.status]),
        [
          ["read", "completed"],
          ["edit", "completed"],
          ["bash", "failed"],
        ],
      );
      assert.ok(items(w).some((i) => i.type === "assistant" && /Updated sample\.py/.test(i.text)));
      assert.ok(items(w).some((i) => i.type === "thinking"));
      assert.equal(fs.readFileSync(path.join(w.sb.workspace, "sample.py"), "utf8"), "value = 2\nprint(value)\n");
      assert.equal(state.ui.progress.length, 0, "a panel run has no progress notification");
    },
  );

  test(
    "an edit's approval opens its diff in the editor, and the diff's title bar answers it; the setting keeps it in the panel",
    AGAINST_DAEMON,
    async () => {
      const w = open();
      w.view.send({ type: "send", text: "Change value to 2." });
      const edit = await waitFor("the edit card", () => pendingCards(w)[0]);
      // Opened by itself, beside the code, in a tab of its own (not the preview tab the next diff would take).
      const tab = await waitFor("the edit's diff editor", () =>
        state.ui.tabs.find((t) => t.input instanceof TabInputTextDiff && t.label.includes("current ↔ proposed")),
      );
      const diffCall = state.ui.executed.find((c) => c.command === "vscode.diff");
      assert.equal((diffCall?.args[3] as { preview?: boolean } | undefined)?.preview, false);
      const right = (tab.input as TabInputTextDiff).modified as Uri;
      // The title bar's More Answers… lists the daemon's own answers, by their names; Escape leaves it waiting.
      state.ui.onQuickPick = (qp) => qp.hide();
      assert.equal(await state.commands.get("kgent.approval.answer")?.(right), false);
      const menu = state.ui.quickPicks.at(-1);
      assert.ok(menu !== undefined);
      assert.deepEqual(
        menu.items.map((i) => i.label.replace(/^\$\([a-z-]+\) /, "")),
        edit.options.map((o) => o.name),
      );
      assert.deepEqual(w.api.pendingApprovals(), [edit.requestId]);
      // Allow in the diff's title bar answers the card (allow once) and closes the diff.
      assert.equal(await state.commands.get("kgent.approval.allow")?.(right), true);
      await waitFor("the card answered", () =>
        items(w).some(
          (i) => i.type === "tool" && i.toolCallId === edit.toolCallId && /^Answered: /.test(i.decidedBy ?? ""),
        ),
      );
      await waitFor("the diff closed", () => !state.ui.tabs.includes(tab));
      // The command's approval has no diff: nothing opens; Reject from a stale diff says it is no longer waiting.
      const bash = await waitFor("the command card", () => pendingCards(w)[0]);
      assert.equal(await state.commands.get("kgent.approval.reject")?.(right), false);
      assert.ok(state.ui.messages.some((m) => /no longer waiting/.test(m.message)));
      await answer(w, bash, "reject_once");
      await waitFor("the end", () => items(w).find((i) => i.type === "end"));
      assert.equal(fs.readFileSync(path.join(w.sb.workspace, "sample.py"), "utf8"), "value = 2\nprint(value)\n");

      // kgent.approvalDiff = panel: the next edit's diff stays in its card until the person opens it.
      state.config["kgent.approvalDiff"] = "panel";
      fs.writeFileSync(path.join(w.sb.workspace, "sample.py"), "value = 1\nprint(value)\n");
      w.view.send({ type: "newConversation" });
      const tabsBefore = state.ui.tabs.length;
      w.view.send({ type: "send", text: "Change value to 2." });
      const next = await waitFor("the next edit card", () =>
        pendingCards(w).find((c) => c.requestId !== edit.requestId && c.diff !== undefined),
      );
      assert.equal(state.ui.tabs.length, tabsBefore, "no diff opened by itself");
      await answer(w, next, "reject_once");
    },
  );

  test(
    "AGENTS.md read into the model's context shows as a line in the panel; Continue Latest Session",
    AGAINST_DAEMON,
    async () => {
      const w = open({ "kgent.model": "hello" });
      fs.writeFileSync(path.join(w.sb.workspace, "AGENTS.md"), "Answer in English.\n");
      w.view.send({ type: "send", text: "Say hello." });
      await waitFor("the end", () => items(w).find((i) => i.type === "end"));
      const note = items(w).find((i) => i.type === "note" && i.text.startsWith("Instructions: "));
      assert.ok(note?.type === "note", JSON.stringify(items(w).map((i) => i.type)));
      assert.equal(note.text, "Instructions: AGENTS.md (the project's) read. Kgent: Open Instructions shows them.");
      assert.equal(note.section, items(w).find((i) => i.type === "end")?.section, "in its run's section");

      // Kgent: Continue Latest Session (the CLI's -c): from a new conversation, the folder's latest session comes back.
      const sessionId = lastState(w)?.sessionId;
      assert.ok(sessionId !== undefined);
      w.view.send({ type: "newConversation" });
      await waitFor("an empty panel", () => lastState(w)?.sessionId === undefined || undefined);
      await state.commands.get("kgent.continueSession")?.();
      await waitFor("the resumed session", () =>
        items(w).find((i) => i.type === "note" && /^Resumed “Say hello\.”/.test(i.text)),
      );
      assert.equal(lastState(w)?.sessionId, sessionId);
    },
  );

  test("todo_write: one plan card per run, updated in place as the plan changes", AGAINST_DAEMON, async () => {
    const w = open({ "kgent.model": "plan" });
    w.view.send({ type: "send", text: "What does sample.py print?" });
    const end = await waitFor("the end", () => items(w).find((i) => i.type === "end"));
    assert.equal(end.type === "end" && end.status, "settled");
    assert.equal(pendingCards(w).length, 0, "planning is never asked");
    const plans = items(w).filter((i) => i.type === "plan");
    assert.equal(plans.length, 1, "one card, updated in place");
    const plan = plans[0];
    assert.ok(plan.type === "plan" && plan.rev === 2, "two updates after the first plan");
    assert.deepEqual(plan.type === "plan" && plan.entries.map((e) => [e.content, e.status, e.priority]), [
      ["Read sample.py", "completed", "high"],
      ["Explain what it prints", "completed", "medium"],
    ]);
    const order = items(w).map((i) => i.type);
    assert.ok(order.indexOf("plan") < order.indexOf("end"));
  });

  test(
    "task: the sub-agent's calls sit under the task card, its approval is a card naming it; Stop cancels it mid-command",
    AGAINST_DAEMON,
    async () => {
      const w = open({ "kgent.model": "task" });
      w.view.send({ type: "send", text: "What does sample.py print?" });
      const card = await waitFor("the sub-agent's approval card", () => pendingCards(w)[0]);
      assert.equal(card.agent, "Check sample.py");
      assert.match(card.title, /Run a command/);
      const order = items(w).filter((i) => i.type === "tool");
      assert.deepEqual(
        order.map((t) => t.type === "tool" && [t.name, t.agent ?? null]),
        [
          ["task", null],
          ["read", "Check sample.py"],
          ["bash", "Check sample.py"],
        ],
      );
      assert.equal(lastState(w)?.live.length, 1, "the sub-agent is not a run of its own in the live bar");
      await answer(w, card, "allow_once");
      const end = await waitFor("the end", () => items(w).find((i) => i.type === "end"));
      assert.equal(end.type === "end" && end.status, "settled");
      assert.equal(items(w).filter((i) => i.type === "end").length, 1, "the sub-run's end is its task card's business");
      const task = items(w).find((i) => i.type === "tool" && i.name === "task");
      assert.ok(
        task?.type === "tool" && task.status === "completed" && task.output === "sample.py prints 1.",
        JSON.stringify(task),
      );
      assert.ok(items(w).some((i) => i.type === "assistant" && /it prints 1/.test(i.text)));
    },
  );

  test(
    "task: Stop while the sub-agent's command runs cancels the run and the sub-agent's command with it",
    AGAINST_DAEMON,
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kgent-task-"));
      const script = path.join(dir, "long-task.json");
      fs.writeFileSync(
        script,
        JSON.stringify({
          turns: [
            [{ tool: "task", args: { description: "Wait", prompt: "wait", tools: ["bash"] } }],
            [{ text: "never" }],
          ],
          prompts: { wait: [[{ tool: "bash", args: { command: "echo started; sleep 60" } }], [{ text: "slept" }]] },
        }),
      );
      const w = open({ "kgent.model": script, "kgent.permissionMode": "full" });
      w.view.send({ type: "send", text: "Wait." });
      await waitFor("the sub-agent's command running", () =>
        items(w).find(
          (i) => i.type === "tool" && i.agent === "Wait" && i.status === "in_progress" && i.output.includes("started"),
        ),
      );
      w.view.send({ type: "stop" });
      const end = await waitFor("the end", () => items(w).find((i) => i.type === "end"));
      assert.equal(end.type === "end" && end.status, "cancelled");
      const sub = items(w).find((i) => i.type === "tool" && i.agent === "Wait");
      assert.ok(sub?.type === "tool" && sub.status === "failed" && sub.output.includes("started"), JSON.stringify(sub));
      const task = items(w).find((i) => i.type === "tool" && i.name === "task");
      assert.ok(task?.type === "tool" && task.status === "failed", JSON.stringify(task));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  );

  test(
    "several pending approvals at once (concurrent runs), each answered on its own card",
    AGAINST_DAEMON,
    async () => {
      const w = open({ "kgent.model": "two-writes" });
      const first = state.commands.get("kgent.runTask")?.({ prompt: "one", context: "none" }) as Promise<
        RunSummary | undefined
      >;
      const second = state.commands.get("kgent.runTask")?.({ prompt: "two", context: "none" }) as Promise<
        RunSummary | undefined
      >;
      const cards = await waitFor("two cards", () => (pendingCards(w).length >= 2 ? pendingCards(w) : undefined));
      assert.notEqual(cards[0].runId, cards[1].runId);
      await answer(w, cards[1], "reject_once");
      assert.ok(
        pendingCards(w).some((c) => c.requestId === cards[0].requestId),
        "the other card still waits",
      );
      // Answer everything else until both runs end.
      const done = Promise.all([first, second]);
      let finished = false;
      void done.then(() => (finished = true));
      while (!finished) {
        const next = pendingCards(w)[0];
        if (next !== undefined) await answer(w, next, "allow_once");
        else await new Promise((r) => setTimeout(r, 20));
      }
      const [a, b] = await done;
      assert.equal(a?.outcome.kind, "ended");
      assert.equal(b?.outcome.kind, "ended");
    },
  );

  test(
    "Stop cancels a running command; the card-less run ends cancelled with the output so far",
    AGAINST_DAEMON,
    async () => {
      const w = open({ "kgent.model": "long-bash", "kgent.permissionMode": "full" });
      w.view.send({ type: "send", text: "Run it." });
      await waitFor("live output", () =>
        items(w).find((i) => i.type === "tool" && i.status === "in_progress" && i.output.includes("started")),
      );
      assert.equal(lastState(w)?.live.length, 1);
      w.view.send({ type: "stop" });
      const end = await waitFor("the end", () => items(w).find((i) => i.type === "end"));
      assert.equal(end.type === "end" && end.status, "cancelled");
      const tool = items(w).find((i) => i.type === "tool");
      assert.ok(
        tool?.type === "tool" && tool.output.includes("started") && tool.status === "failed",
        JSON.stringify(tool),
      );
      assert.equal(lastState(w)?.live.length, 0);
    },
  );

  test("with an approval timeout the card counts down, then is withdrawn", AGAINST_DAEMON, async () => {
    const w = open({ "kgent.approvalTimeout": 2 });
    w.view.send({ type: "send", text: "Change value to 2." });
    const card = await waitFor("the card", () => pendingCards(w)[0]);
    assert.equal(typeof card.deadline, "number", "a deadline for the countdown");
    await waitFor("the withdrawal", () =>
      items(w).find(
        (i) =>
          i.type === "tool" &&
          i.toolCallId === card.toolCallId &&
          /rejected: no answer in time/.test(i.decidedBy ?? ""),
      ),
    );
    assert.equal(fs.readFileSync(path.join(w.sb.workspace, "sample.py"), "utf8"), "value = 1\nprint(value)\n");
  });

  test(
    "History: Resume shows the conversation; Fork at any message branches before it; @file mentions go along",
    AGAINST_DAEMON,
    async () => {
      const w = open({ "kgent.model": "hello" });
      w.view.send({ type: "send", text: "Look at @sample.py please." });
      await waitFor("the first run", () => items(w).find((i) => i.type === "end"));
      const original = lastState(w)?.sessionId;
      assert.ok(original);
      w.view.send({ type: "send", text: "Again." });
      await waitFor("the second run", () => items(w).filter((i) => i.type === "end").length === 2);
      const live = users(w);
      assert.deepEqual(
        live.map((u) => u.text),
        ["Look at @sample.py please.", "Again."],
      );
      assert.deepEqual(
        live[0].attachments.map((a) => [a.name, a.text]),
        [["sample.py", "value = 1\nprint(value)\n"]],
        "the mention, shown as an attachment",
      );
      assert.ok(
        live.every((u) => u.entryId !== undefined && u.sessionId === original),
        "live messages name their entries",
      );
      // History: the folder's sessions in the quick input, whole titles, each with Fork / Rename / Delete.
      state.ui.onQuickPick = (qp) => qp.escape();
      w.view.send({ type: "history" });
      const listed = await waitFor("the sessions picker", () =>
        state.ui.quickPicks.find((q) => /sessions/.test(q.title ?? "")),
      );
      await waitFor("its rows", () => listed.items.length === 1 || undefined);
      assert.equal(listed.items[0].label, "Look at @sample.py please.");
      assert.deepEqual(
        listed.items[0].buttons?.map((b) => b.tooltip?.split(":")[0]),
        ["Fork", "Rename", "Delete"],
      );
      assert.equal(listed.matchOnDetail, true);

      // Resume, from a new conversation: picked in History, the session's messages come back into the panel.
      w.view.send({ type: "newConversation" });
      await waitFor("an empty panel", () => items(w).length === 0);
      state.ui.onQuickPick = (qp) => {
        if (/sessions/.test(qp.title ?? ""))
          void waitFor("the rows", () => qp.items.length > 0 || undefined).then(() => qp.pick("Look at"));
      };
      w.view.send({ type: "history" });
      await waitFor("the replayed conversation", () => users(w).length === 2);
      assert.deepEqual(
        users(w).map((u) => [u.text, u.attachments, u.entryId]),
        live.map((u) => [u.text, u.attachments, u.entryId]),
      );
      assert.equal(
        items(w).filter((i) => i.type === "assistant" && /Hello from the scripted provider/.test(i.text)).length,
        2,
      );
      assert.ok(items(w).some((i) => i.type === "note" && /^Resumed /.test(i.text)));
      assert.equal(lastState(w)?.sessionId, original);

      // Fork at the second message: the panel shows the branch up to it, the message goes back into the input.
      w.view.send({ type: "forkAt", sessionId: original, entryId: live[1].entryId! });
      await waitFor("the fork", () =>
        items(w).find((i) => i.type === "note" && /^Forked before “Again\.”/.test(i.text)),
      );
      assert.deepEqual(
        users(w).map((u) => u.text),
        ["Look at @sample.py please."],
      );
      assert.ok(
        w.view.posted.some((p) => (p as ToPage).type === "setInput" && (p as { text: string }).text === "Again."),
      );
      assert.equal(lastState(w)?.sessionId, original, "a fork is a branch of the same session");
      w.view.send({ type: "send", text: "Instead." });
      await waitFor("the third run", () => items(w).filter((i) => i.type === "end").length === 1);

      // Fork at the very first message: the next message starts the conversation over, on a new branch.
      w.view.send({ type: "forkAt", sessionId: original, entryId: live[0].entryId! });
      await waitFor("the second fork", () =>
        items(w).find((i) => i.type === "note" && /^Forked before “Look at/.test(i.text)),
      );
      assert.deepEqual(users(w), []);
      assert.ok(
        w.view.posted.some(
          (p) => (p as ToPage).type === "setInput" && (p as { text: string }).text === "Look at @sample.py please.",
        ),
        "without the attachment",
      );
      w.view.send({ type: "send", text: "Fresh start." });
      await waitFor("the fourth run", () => items(w).some((i) => i.type === "end"));

      const entries = sessionEntries(w, original);
      const byText = (t: string) => entries.find((e) => e.message?.role === "user" && e.message.text?.startsWith(t));
      const [first, again, instead, fresh] = ["Look at @sample.py", "Again.", "Instead.", "Fresh start."].map(byText);
      assert.ok(first && again && instead && fresh);
      assert.equal(instead.parentId, again.parentId, "“Instead.” replaces “Again.” on a new branch");
      assert.equal(fresh.parentId, first.parentId, "“Fresh start.” replaces the first message");
      assert.match(
        JSON.stringify(first),
        /value = 1\\nprint\(value\)/,
        "the mentioned file went along with the message",
      );
      // History → Fork on the session: before its last message (now “Fresh start.”).
      w.view.send({ type: "fork", sessionId: original, title: "first" });
      await waitFor("the history fork", () =>
        items(w).find((i) => i.type === "note" && /^Forked before “Fresh start\.”/.test(i.text)),
      );

      // Rename and Delete on History's rows: the daemon's list changes and the open picker shows it.
      state.ui.onInputBox = () => "Port the parser";
      state.ui.onMessage = (m) => (m.modal && /^Delete the session/.test(m.message) ? "Delete" : undefined);
      const before = state.ui.quickPicks.length;
      state.ui.onQuickPick = () => undefined;
      w.view.send({ type: "history" });
      const picker = await waitFor("the picker", () =>
        state.ui.quickPicks.slice(before).find((q) => q.items.length > 0),
      );
      picker.pressItemButton("Look at", "Rename");
      await waitFor("the renamed row", () => picker.items[0]?.label === "Port the parser" || undefined);
      picker.pressItemButton("Port the parser", "Delete");
      await waitFor("the row gone", () => (picker.items.length === 0 && !picker.busy) || undefined);
      assert.equal(picker.visible, true, "the picker stays open");
      // It was the panel's conversation: the panel says so, and the next message starts a new session.
      await waitFor("the note", () => items(w).find((i) => i.type === "note" && /was deleted/.test(i.text)));
      assert.equal(lastState(w)?.sessionId, undefined);
      picker.escape();
    },
  );

  test(
    "while a run is live, a message is queued as a follow-up and shown under the run; Clear drops the queue",
    AGAINST_DAEMON,
    async () => {
      const w = open();
      state.config["kgent.model"] = gateScript(path.dirname(w.sb.stateDir));
      w.view.send({ type: "send", text: "Check first." });
      const gate = await waitFor("the gate's card", () => pendingCards(w)[0]);
      // Queued, then cleared: the model never sees it.
      w.view.send({ type: "send", text: "forget this", as: "steer" });
      w.view.send({ type: "send", text: "and this", as: "followUp" });
      await waitFor(
        "the queue",
        () =>
          lastState(w)?.live[0]?.followUp.includes("and this") &&
          lastState(w)?.live[0]?.steering.includes("forget this"),
      );
      w.view.send({ type: "clearQueue", runId: gate.runId });
      await waitFor(
        "the cleared queue",
        () => lastState(w)?.live[0]?.followUp.length === 0 && lastState(w)?.live[0]?.steering.length === 0,
      );
      w.view.send({ type: "send", text: "then say done", as: "followUp" });
      await waitFor("the queue", () => lastState(w)?.live[0]?.followUp.includes("then say done"));
      await answer(w, gate, "allow_once");
      for (;;) {
        if (items(w).some((i) => i.type === "end")) break;
        const next = pendingCards(w)[0];
        if (next !== undefined) await answer(w, next, "allow_once");
        else await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(items(w).some((i) => i.type === "user" && i.source === "follow_up" && i.text === "then say done"));
      assert.deepEqual(
        users(w).map((u) => u.text),
        ["Check first.", "then say done"],
        "the cleared messages never reached the run",
      );
    },
  );

  test("Stop with messages queued: they go back into the box, with a note, not lost", AGAINST_DAEMON, async () => {
    const w = open();
    state.config["kgent.model"] = gateScript(path.dirname(w.sb.stateDir));
    w.view.send({ type: "send", text: "Check first." });
    const gate = await waitFor("the gate's card", () => pendingCards(w)[0]);
    w.view.send({ type: "send", text: "look at b too", as: "steer" });
    w.view.send({ type: "send", text: "then say done", as: "followUp" });
    await waitFor(
      "the queue",
      () =>
        (lastState(w)?.live[0]?.followUp.length ?? 0) + (lastState(w)?.live[0]?.steering.length ?? 0) === 2 ||
        undefined,
    );
    w.view.send({ type: "stop", runId: gate.runId });
    await waitFor("the end", () => items(w).find((i) => i.type === "end"));
    const back = await waitFor("the queued text back in the box", () =>
      w.view.posted.find((p) => (p as ToPage).type === "setInput"),
    );
    assert.equal((back as { text: string }).text, "look at b too\n\nthen say done");
    assert.ok(items(w).some((i) => i.type === "note" && /2 queued messages are back in the box/.test(i.text)));
  });

  test("Restricted Mode: the panel says why Kgent is off, and Run Task says so too", AGAINST_DAEMON, async () => {
    const w = open({}, false);
    await waitFor("the state", () => lastState(w));
    assert.equal(lastState(w)?.trusted, false);
    w.view.send({ type: "send", text: "hello" });
    await state.commands.get("kgent.runTask")?.({ prompt: "x" });
    const warning = await waitFor("the warning", () => state.ui.messages.find((m) => m.severity === "warning"));
    assert.match(warning.message, /Restricted Mode/);
    assert.equal(w.api.daemonPid(), undefined, "nothing started");
    // Off, and nothing on screen says otherwise: no promise about approvals in the page, no "idle" in the status bar.
    assert.doesNotMatch(w.view.webview.html, /approv/i);
    assert.ok(state.ui.statusHistory.includes("$(circle-slash) Kgent: off (Restricted Mode)"));
    assert.ok(!state.ui.statusHistory.some((t) => t.includes("idle")), state.ui.statusHistory.join(" | "));
  });
});
