// Issue 41: sub-agents side by side in the bundled extension (fake VS Code) against the real daemon. One model turn
// of three `task` calls, each sub-agent running one asked command: their approvals wait at once (the panel's cards,
// or the quick pick's queue, one prompt at a time), each naming its sub-agent, and each answer settles its own.
// Concurrency without a clock: nobody answers until all three have asked, which only sub-agents running at the same
// time can do.

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import type { ApprovalItem, ToolItem } from "../src/panelItems";
import { state, type FakeQuickPick } from "./fake-vscode";
import { AGAINST_DAEMON, waitFor } from "./helpers";
import { items, openPanel, type World } from "./panelWorld";

const NAMES = ["Alpha", "Beta", "Gamma"];
const command = (name: string): string => `python3 -c 'print("${name}")'`;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kgent-41-"));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** tests/helpers.py's three_asking_sub_agents: task calls t0…t2 (Alpha, Beta, Gamma), each sub-agent running one
 *  command (asked in `ask` mode) and answering "<name> is done."; then "All three are done." */
function threeSubAgents(): string {
  const file = path.join(dir, "three.json");
  const calls = NAMES.map((n, i) => ({
    tool: "task",
    id: `t${i}`,
    args: { description: n, prompt: `job ${n}`, tools: ["bash"] },
  }));
  const prompts = Object.fromEntries(
    NAMES.map((n) => [`job ${n}`, [[{ tool: "bash", args: { command: command(n) } }], [{ text: `${n} is done.` }]]]),
  );
  fs.writeFileSync(file, JSON.stringify({ turns: [calls, [{ text: "All three are done." }]], prompts }));
  return file;
}

function pendingCards(w: World): ApprovalItem[] {
  return items(w).filter((i): i is ApprovalItem => i.type === "approval" && i.state === "pending");
}

function tools(w: World): ToolItem[] {
  return items(w).filter((i): i is ToolItem => i.type === "tool");
}

function taskCall(w: World, id: string): ToolItem {
  const t = tools(w).find((i) => i.name === "task" && i.toolCallId === id);
  assert.ok(t, `the task card ${id}`);
  return t;
}

function transcriptLines(): string[] {
  return state.ui.output("Kgent").text.split("\n");
}

describe("issue 41: sub-agents side by side (extension side)", () => {
  test(
    "panel: three approval cards wait at once, each naming its sub-agent; each answer settles its own",
    AGAINST_DAEMON,
    async () => {
      const w = openPanel({ "kgent.model": threeSubAgents() });
      w.view.send({ type: "send", text: "three jobs" });
      const cards = await waitFor("three cards at once", () =>
        pendingCards(w).length === 3 ? pendingCards(w) : undefined,
      );
      assert.deepEqual(cards.map((c) => c.agent).sort(), NAMES);
      assert.equal(new Set(cards.map((c) => c.runId)).size, 3, "each from its own sub-run");
      for (const c of cards) {
        assert.equal(c.command, command(c.agent ?? ""));
        // the call it is about: that sub-agent's own card (every sub-run's call is its call_1_1), named
        const call = tools(w).find((t) => t.runId === c.runId && t.toolCallId === c.toolCallId);
        assert.ok(call !== undefined && call.agent === c.agent && call.name === "bash", JSON.stringify(call));
      }
      assert.equal(state.ui.statusHistory.at(-1), "$(bell) Kgent: waiting for approval (3)");
      // the transcript: each sub-agent's lines say whose they are
      const lines = transcriptLines();
      for (const n of NAMES) {
        assert.ok(
          lines.some((l) => new RegExp(`^(\\[[0-9a-f]{8} ${n}\\] )?▶ Sub-agent “${n}” · run `).test(l)),
          lines.join("\n"),
        );
        const mine = lines.filter((l) => l.includes(command(n)) || l.includes(` ${n}] `) || l.includes(`[${n}] `));
        assert.ok(
          mine.every((l) => new RegExp(`^\\[([0-9a-f]{8} )?${n}\\] `).test(l)),
          mine.join("\n"),
        );
        assert.ok(
          mine.some((l) => l.includes("? approval needed")),
          `${n}'s approval line in:\n${lines.join("\n")}`,
        );
      }

      // Beta's answer (the second task call's sub-agent) settles the second call, while the others still wait
      const beta = cards.find((c) => c.agent === "Beta");
      assert.ok(beta);
      w.view.send({ type: "answer", requestId: beta.requestId, optionId: "allow_once" });
      await waitFor("the second task call done", () => taskCall(w, "t1").status === "completed");
      assert.equal(taskCall(w, "t1").output, "Beta is done.");
      assert.deepEqual(
        pendingCards(w)
          .map((c) => c.agent)
          .sort(),
        ["Alpha", "Gamma"],
      );
      assert.notEqual(taskCall(w, "t0").status, "completed");
      assert.notEqual(taskCall(w, "t2").status, "completed");
      const betaCall = tools(w).find((t) => t.runId === beta.runId && t.toolCallId === beta.toolCallId);
      assert.equal(betaCall?.decidedBy, "Answered: Allow once");

      // Beta's sub-run ends while the other two wait: in the transcript, their lines interleave with Beta's
      const betaEnd = await waitFor("Beta's sub-run's end in the transcript", () => {
        const at = transcriptLines().findIndex((l) => /^\[[0-9a-f]{8} Beta\] ■ Run settled/.test(l));
        return at >= 0 ? at : undefined;
      });
      for (const c of pendingCards(w)) w.view.send({ type: "answer", requestId: c.requestId, optionId: "allow_once" });
      const end = await waitFor("the end", () => items(w).find((i) => i.type === "end"));
      const alpha = transcriptLines().flatMap((l, i) => (/^\[[0-9a-f]{8} Alpha\] /.test(l) ? [i] : []));
      assert.ok(alpha[0] < betaEnd && betaEnd < alpha[alpha.length - 1], transcriptLines().join("\n"));
      assert.equal(end.type === "end" && end.status, "settled");
      assert.deepEqual(
        ["t0", "t1", "t2"].map((id) => taskCall(w, id).output),
        NAMES.map((n) => `${n} is done.`),
      );
      for (const c of cards) {
        const call = tools(w).find((t) => t.runId === c.runId && t.toolCallId === c.toolCallId);
        assert.ok(call?.status === "completed" && call.output.startsWith(`${c.agent}\n`), JSON.stringify(call));
      }
      assert.ok(items(w).some((i) => i.type === "assistant" && i.text === "All three are done."));
    },
  );

  test(
    "quick pick: three prompts queued, shown one at a time, each titled with its sub-agent",
    AGAINST_DAEMON,
    async () => {
      const w = openPanel({ "kgent.model": threeSubAgents(), "kgent.approvalUi": "quickPick" });
      state.ui.onQuickPick = () => undefined; // the person answers below
      w.view.send({ type: "send", text: "three jobs" });
      await waitFor("the first prompt", () => state.ui.quickPicks.find((q) => q.visible));
      await waitFor(
        "all three asked",
        () => state.ui.statusHistory.at(-1) === "$(bell) Kgent: waiting for approval (3)",
      );
      assert.equal(state.ui.quickPicks.length, 1, "one prompt at a time: the other two wait their turn");
      const asked: string[] = [];
      for (let i = 0; i < NAMES.length; i++) {
        const qp: FakeQuickPick = await waitFor(`prompt ${i + 1}`, () =>
          state.ui.quickPicks.length === i + 1 && state.ui.quickPicks[i].visible ? state.ui.quickPicks[i] : undefined,
        );
        const m = /^Kgent's sub-agent “(\w+)” wants to run `(.*)`$/.exec(qp.title ?? "");
        assert.ok(m, qp.title);
        assert.equal(m[2], command(m[1]), "its own command");
        asked.push(m[1]);
        if (i < NAMES.length - 1)
          assert.equal(state.ui.statusHistory.at(-1), `$(bell) Kgent: waiting for approval (${NAMES.length - i})`);
        qp.pick("Allow once");
      }
      assert.deepEqual([...asked].sort(), NAMES);
      const end = await waitFor("the end", () => items(w).find((i) => i.type === "end"));
      assert.equal(end.type === "end" && end.status, "settled");
      assert.deepEqual(
        ["t0", "t1", "t2"].map((id) => taskCall(w, id).output),
        NAMES.map((n) => `${n} is done.`),
      );
    },
  );
});
