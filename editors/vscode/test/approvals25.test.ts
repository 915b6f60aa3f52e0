// Issue 25 in the bundled extension (fake VS Code) against the real daemon: the rule words of the options as the
// daemon sends them, an always-rule from a compound command, the Permissions view, and "Accept my version".

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import type { ApprovalItem } from "../src/panelItems";
import { state, TabInputTextDiff, type FakeTreeView, type Uri } from "./fake-vscode";
import { AGAINST_DAEMON, waitFor } from "./helpers";
import { items, openPanel, type World } from "./panelWorld";

// the user's rules: a file of each test's own
const open = (config: Record<string, unknown> = {}): World => openPanel(config, { userRules: true });
const COMMAND = "grep -n value sample.py && python3 sample.py";

function pendingCards(w: World): ApprovalItem[] {
  return items(w).filter((i): i is ApprovalItem => i.type === "approval" && i.state === "pending");
}

/** A script (turns of steps) for the scripted provider, as a file usable as the model. */
function script(w: World, name: string, turns: unknown[]): string {
  const file = path.join(w.sb.stateDir, name);
  fs.writeFileSync(file, JSON.stringify(turns));
  return file;
}

function permissionsView(): FakeTreeView {
  const view = state.treeViews.get("kgent.permissions");
  assert.ok(view, "the Permissions view is registered");
  return view;
}

async function exec(command: string, ...args: unknown[]): Promise<unknown> {
  const fn = state.commands.get(command);
  assert.ok(fn, `command ${command} is registered`);
  return fn(...args);
}

describe("issue 25: rules and approve with changes (extension side)", () => {
  test(
    "a compound command's card carries its rule words; 'always' makes a rule; the same call next is not asked",
    AGAINST_DAEMON,
    async () => {
      const w = open();
      const file = script(w, "compound.json", [
        [{ text: "Checking." }, { tool: "bash", args: { command: COMMAND } }],
        [{ text: "Again." }, { tool: "bash", args: { command: COMMAND } }],
        [{ text: "Both ran." }],
      ]);
      w.view.send({ type: "setModel", model: file });
      await waitFor("the model set", () => state.config["kgent.model"] === file);
      w.view.send({ type: "send", text: "Check twice." });
      const card = await waitFor("the command card", () => pendingCards(w)[0]);
      // The card holds exactly what the daemon offered: no fixed list of four.
      const ids = card.options.map((o) => o.optionId);
      assert.ok(ids.includes("allow_once") && ids.includes("allow_always"), ids.join());
      const always = card.options.find((o) => o.optionId === "allow_always");
      assert.ok(always);
      const words = always as typeof always & { scope?: string; rules?: { rule: string; text: string }[] };
      assert.equal(words.scope, "session");
      assert.equal(words.rules?.length, 2, JSON.stringify(words.rules));
      assert.match(words.rules?.map((r) => r.rule).join(" ") ?? "", /grep/);
      assert.match(words.rules?.map((r) => r.rule).join(" ") ?? "", /python3 sample\.py/);
      assert.equal(card.noRule, undefined);
      w.view.send({ type: "answer", requestId: card.requestId, optionId: "allow_always" });
      const end = await waitFor("the end", () => items(w).find((i) => i.type === "end"));
      assert.equal(end.type === "end" && end.status, "settled");
      const bash = items(w).filter((i) => i.type === "tool" && i.name === "bash");
      assert.equal(bash.length, 2);
      assert.match(bash[1].type === "tool" ? (bash[1].decidedBy ?? "") : "", /allowed by the session rules? `/);
      assert.ok(!items(w).some((i) => i.type === "approval" && i.requestId !== card.requestId), "asked once");

      // The Permissions view lists the two session rules, under Session.
      const view = permissionsView();
      view.show();
      const tree = await view.render();
      assert.deepEqual(
        tree.map((g) => g.item.label),
        ["User", "Project", "Session"],
      );
      const session = tree[2].children.map((c) => c.item.label);
      assert.equal(session.length, 2, session.join());
      assert.ok(
        session.every((l) => l.startsWith("allow bash(")),
        session.join(),
      );
    },
  );

  test(
    "the Permissions view adds (a bad rule comes back with the daemon's message) and removes",
    AGAINST_DAEMON,
    async () => {
      const w = open({ "kgent.model": "hello" });
      const view = permissionsView();
      view.show();
      assert.deepEqual(
        (await view.render()).map((g) => g.children.length),
        [0, 0, 0],
      );
      const asked: { prompt?: string; value?: string; validation?: string }[] = [];
      const answers = ["bash(", "bash(npm test *)"];
      state.ui.onInputBox = (o) => {
        const value = answers.shift();
        const opts = o as { prompt?: string; value?: string; validateInput?: (v: string) => string | undefined };
        asked.push({
          prompt: opts.prompt,
          value: opts.value,
          validation: value !== undefined ? opts.validateInput?.(value) : undefined,
        });
        return value;
      };
      state.ui.onQuickPick = (qp) => {
        const want = (qp.title ?? "").includes("Allow or deny") ? "allow" : "project";
        qp.pick(want);
      };
      const added = (await exec("kgent.permissions.add")) as { rule: string; scope: string; file?: string } | undefined;
      assert.ok(added, "added after the fix");
      assert.equal(added.rule, "bash(npm test *)");
      assert.equal(asked.length, 2);
      // The second time the box holds the refused rule, and the daemon's message says what is wrong.
      assert.equal(asked[1].value, "bash(");
      assert.ok(asked[1].prompt !== undefined && asked[1].prompt.length > 0);
      assert.ok(
        state.ui.messages.some(
          (m) => m.severity === "error" && m.message.startsWith("Kgent: the rule was not added: "),
        ),
      );
      // VS Code trusts the folder, Kgent does not trust the project: the view says the two trusts differ, and how.
      assert.match(
        state.treeViews.get("kgent.permissions")?.message ?? "",
        /its trust is its own, apart from VS Code's Workspace Trust/,
      );
      assert.match(state.treeViews.get("kgent.permissions")?.message ?? "", /kgent extensions --trust/);
      // The folder's project is not trusted: the rule is kept in the user's own file for it (where it counts).
      assert.ok(added.file !== undefined);
      assert.ok(added.file.includes(`${path.sep}projects${path.sep}`), added.file);
      assert.equal(fs.existsSync(path.join(w.sb.workspace, ".kgent", "config.toml")), false);
      assert.match(fs.readFileSync(added.file, "utf8"), /npm test \*/);
      let tree = await view.render();
      const row = tree[1].children.find((c) => c.item.label === "allow bash(npm test *)");
      assert.ok(row, JSON.stringify(tree.map((g) => g.children.map((c) => c.item.label))));
      assert.match(String(row.item.description), /npm test/);
      assert.equal(await exec("kgent.permissions.remove", row.node), true);
      tree = await view.render();
      assert.equal(tree[1].children.length, 0);
      assert.doesNotMatch(fs.readFileSync(added.file, "utf8"), /npm test/);
    },
  );

  test(
    "Accept my version: the edited proposal is written and the model is told the change",
    AGAINST_DAEMON,
    async () => {
      const w = open();
      w.view.send({ type: "send", text: "Change value to 2." });
      const card = await waitFor("the edit card", () => pendingCards(w)[0]);
      assert.equal(card.canEdit, true, "the daemon takes the person's text");
      w.view.send({ type: "openDiff", requestId: card.requestId });
      const tab = await waitFor("the diff editor", () =>
        state.ui.tabs.find((t) => t.input instanceof TabInputTextDiff),
      );
      const right = (tab.input as TabInputTextDiff).modified as Uri;
      assert.equal(right.scheme, "kgent-proposed");
      // The person edits the proposed side and saves it (Ctrl+S writes it to the proposal's file system).
      const fsp = state.fileSystems.get("kgent-proposed") as {
        readFile(u: Uri): Uint8Array;
        writeFile(u: Uri, c: Uint8Array): void;
      };
      assert.equal(Buffer.from(fsp.readFile(right)).toString("utf8"), "value = 2\nprint(value)\n");
      fsp.writeFile(right, Buffer.from("value = 2  # mine\nprint(value)\n"));
      assert.equal(await exec("kgent.acceptMyVersion", right), true);
      await waitFor("the answer", () =>
        items(w).some(
          (i) => i.type === "tool" && i.name === "edit" && i.decidedBy === "Answered: Allow once, with your changes",
        ),
      );
      await waitFor("the diff tab closed", () => !state.ui.tabs.some((t) => t.input instanceof TabInputTextDiff));
      const bash = await waitFor("the command card", () => pendingCards(w)[0]);
      w.view.send({ type: "answer", requestId: bash.requestId, optionId: "reject_once" });
      await waitFor("the end", () => items(w).find((i) => i.type === "end"));
      assert.equal(
        fs.readFileSync(path.join(w.sb.workspace, "sample.py"), "utf8"),
        "value = 2  # mine\nprint(value)\n",
      );
      const edit = items(w).find((i) => i.type === "tool" && i.name === "edit");
      assert.ok(edit?.type === "tool");
      // The tool result the model reads: the diff from its proposal to what was written.
      assert.match(edit.output, /\+value = 2 {2}# mine/);
      assert.match(edit.output, /^-value = 2$/m);
    },
  );

  test("Accept my version from the quick-pick approvals: Show diff, edit, accept", AGAINST_DAEMON, async () => {
    const w = open({ "kgent.approvalUi": "quickPick" });
    let edited = false;
    state.ui.onQuickPick = (qp) => {
      if ((qp.title ?? "").startsWith("Kgent wants to edit")) {
        qp.pick("Show diff"); // the prompt stays open while the person edits the proposed side
        void waitFor("the diff editor", () => state.ui.tabs.find((t) => t.input instanceof TabInputTextDiff)).then(
          async (tab) => {
            const right = (tab.input as TabInputTextDiff).modified as Uri;
            const fsp = state.fileSystems.get("kgent-proposed") as { writeFile(u: Uri, c: Uint8Array): void };
            fsp.writeFile(right, Buffer.from("value = 3\nprint(value)\n"));
            edited = await (exec("kgent.acceptMyVersion", right) as Promise<boolean>);
          },
        );
      } else qp.pick("Reject");
    };
    w.view.send({ type: "send", text: "Change value to 2." });
    await waitFor("the end", () => items(w).find((i) => i.type === "end"));
    assert.equal(edited, true);
    assert.equal(fs.readFileSync(path.join(w.sb.workspace, "sample.py"), "utf8"), "value = 3\nprint(value)\n");
    assert.ok(!state.ui.tabs.some((t) => t.input instanceof TabInputTextDiff), "the diff closed with the answer");
  });
});
