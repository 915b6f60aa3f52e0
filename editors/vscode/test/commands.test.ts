// Slash commands sent from the panel, by their action (the test is the page), and Kgent: Export Session, in a fake
// VS Code against the real daemon: /help, /cost and /mode answered as notes (/mode NAME sets the mode of the next
// runs), /clear starts a new session, /rewind opens the rewind flow; the export opens an untitled editor.

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import type { EndItem, NoteItem, UserItem } from "../src/panelItems";
import type { ToPage } from "../src/panelMessages";
import { state, type FakeQuickPick, type MessageRecord } from "./fake-vscode";
import { AGAINST_DAEMON, waitFor } from "./helpers";
import { items, lastState, openPanel, type World } from "./panelWorld";

const open = (model = "hello"): World => openPanel({ "kgent.model": model });

const users = (w: World): UserItem[] => items(w).filter((i): i is UserItem => i.type === "user");
const ends = (w: World): EndItem[] => items(w).filter((i): i is EndItem => i.type === "end");
const note = (w: World, re: RegExp): NoteItem | undefined =>
  items(w).find((i): i is NoteItem => i.type === "note" && re.test(i.text));
const inputs = (w: World): string[] =>
  w.view.posted.flatMap((m) => ((m as ToPage).type === "setInput" ? [(m as { text: string }).text] : []));

/** Send `text` from the composer and wait for its run's end (the n-th end in the panel). */
async function run(w: World, text: string): Promise<EndItem> {
  const before = ends(w).length;
  w.view.send({ type: "send", text });
  return waitFor(`the end of “${text}”`, () => ends(w)[before]);
}

/** Pick `label` in the next QuickPick whose title matches `title`, once its rows are there. */
function pickIn(title: RegExp, label: string): void {
  state.ui.onQuickPick = (qp: FakeQuickPick) => {
    if (title.test(qp.title ?? ""))
      void waitFor("the rows", () => qp.items.some((i) => i.label.includes(label)) || undefined).then(() =>
        qp.pick(label),
      );
  };
}

describe("slash commands in the panel", () => {
  test("/help answers with the commands, as a note; no run starts", AGAINST_DAEMON, async () => {
    const w = open();
    w.view.send({ type: "send", text: "/help" });
    const help = await waitFor("the help note", () => note(w, /^Slash commands/));
    assert.match(help.text, /^\/cost — /m);
    assert.match(help.text, /^\/mode \[plan\|ask\|auto\|full\|risk_based\] — /m);
    assert.equal(help.severity, "info");
    assert.deepEqual(w.api.liveRunIds(), [], "no run");
    assert.deepEqual(users(w), []);
    assert.equal(lastState(w)?.sessionId, undefined, "no session started");
    assert.deepEqual(inputs(w), [], "the box stays empty");
  });

  test(
    "/mode plan sets the mode of the next run; an unknown mode is an error, the text back in the box",
    AGAINST_DAEMON,
    async () => {
      const w = open("tool-loop");
      w.view.send({ type: "send", text: "/mode plan" });
      const answer = await waitFor("the mode note", () => note(w, /^Mode for /));
      assert.match(answer.text, /: plan — /);
      await waitFor("the mode setting", () => state.config["kgent.permissionMode"] === "plan");
      assert.deepEqual(users(w), [], "no run");

      // The next run is in plan mode: the edit is refused by the mode, not asked.
      const end = await run(w, "Change value to 2.");
      const edit = items(w).find((i) => i.type === "tool" && i.name === "edit");
      assert.equal(edit?.type === "tool" && edit.decidedBy, "rejected by the plan mode");
      assert.equal(items(w).filter((i) => i.type === "approval").length, 0, "nothing asked");
      assert.deepEqual(end.changedPaths, []);
      assert.equal(fs.readFileSync(path.join(w.sb.workspace, "sample.py"), "utf8"), "value = 1\nprint(value)\n");

      w.view.send({ type: "send", text: "/mode nonsense" });
      const failed = await waitFor("the error note", () => note(w, /^Could not run \/mode: /));
      assert.equal(failed.severity, "error");
      assert.match(failed.text, /unknown mode/);
      await waitFor("the text back in the box", () => inputs(w).includes("/mode nonsense"));
      assert.equal(state.config["kgent.permissionMode"], "plan", "unchanged");
    },
  );

  test("/cost after a run: the session's tokens, as a note", AGAINST_DAEMON, async () => {
    const w = open();
    const first = await run(w, "Say hello.");
    w.view.send({ type: "send", text: "/cost" });
    const cost = await waitFor("the cost note", () => note(w, /^This session so far: /));
    assert.match(cost.text, /\d+ in .*\/ \d+ out tokens/);
    assert.equal(ends(w).length, 1, "no other run");
    assert.equal(lastState(w)?.sessionId, first.sessionId, "the same conversation");
  });

  test("/clear: the next message starts a new session, the old one stays in History", AGAINST_DAEMON, async () => {
    const w = open();
    const first = await run(w, "Say hello.");
    w.view.send({ type: "send", text: "/clear" });
    await waitFor("the note", () => note(w, /new session .*History/));
    assert.equal(lastState(w)?.sessionId, undefined, "as New does");
    assert.deepEqual(users(w), [], "the conversation is cleared");
    const second = await run(w, "Again.");
    assert.notEqual(second.sessionId, first.sessionId);
    // Both are listed: History offers the old one.
    state.ui.onQuickPick = (qp) => qp.escape();
    w.view.send({ type: "history" });
    const listed = await waitFor("the sessions picker", () =>
      state.ui.quickPicks.find((q) => /sessions/.test(q.title ?? "")),
    );
    await waitFor("both sessions", () => listed.items.length === 2 || undefined);
  });

  test("/rewind: pick a message, the checkpoint's confirmation, Restore", AGAINST_DAEMON, async () => {
    const w = open();
    w.view.send({ type: "send", text: "/rewind" });
    await waitFor("no conversation yet", () => note(w, /^Nothing to rewind/));
    await run(w, "Say hello.");
    await run(w, "Again.");
    const asked: MessageRecord[] = [];
    state.ui.onMessage = (m) => {
      asked.push(m);
      return m.modal ? "Restore" : undefined;
    };
    pickIn(/rewind to before which message/, "Say hello.");
    w.view.send({ type: "send", text: "/rewind" });
    const picker = await waitFor("the message picker", () =>
      state.ui.quickPicks.find((q) => /rewind/.test(q.title ?? "")),
    );
    assert.deepEqual(picker.labels(), ["Again.", "Say hello."], "the session's messages, latest first");
    const modal = await waitFor("the confirmation", () => asked.find((m) => m.modal));
    assert.match(modal.message, /before “Say hello\.”/);
    await waitFor("the note", () => note(w, /^Restored the checkpoint before “Say hello\.”/));
    assert.deepEqual(users(w), [], "forked before the first message");
    assert.ok(inputs(w).includes("Say hello."), "the message back in the box");
  });
});

describe("Kgent: Export Session", () => {
  test(
    "the panel's session as Markdown or HTML in an untitled editor; without one, picked from History",
    AGAINST_DAEMON,
    async () => {
      const w = open();
      const exportSession = (): Promise<unknown> =>
        Promise.resolve(state.commands.get("kgent.exportSession")?.() ?? assert.fail("kgent.exportSession"));
      // No session in the folder yet: it says so.
      await exportSession();
      assert.ok(state.ui.messages.some((m) => /no session in .* to export yet/.test(m.message)));
      assert.equal(state.ui.shownTextDocuments.length, 0);

      await run(w, "Say hello.");
      pickIn(/export the session as/, "Markdown");
      await exportSession();
      const md = await waitFor("the Markdown editor", () => state.ui.shownTextDocuments[0]);
      assert.equal(md.uri.scheme, "untitled");
      assert.equal(md.languageId, "markdown");
      assert.match(md.getText(), /Say hello\./);

      pickIn(/export the session as/, "HTML");
      await exportSession();
      const html = await waitFor("the HTML editor", () => state.ui.shownTextDocuments[1]);
      assert.equal(html.languageId, "html");
      assert.match(html.getText(), /<html[\s>]/i);
      assert.match(html.getText(), /Say hello\./);

      // A new conversation has no session: the folder's History picks one (no Fork button there).
      w.view.send({ type: "newConversation" });
      await waitFor("an empty panel", () => lastState(w)?.sessionId === undefined);
      state.ui.onQuickPick = (qp: FakeQuickPick) => {
        if (/export which session/.test(qp.title ?? ""))
          void waitFor("the rows", () => qp.items.length > 0 || undefined).then(() => qp.pick("Say hello."));
        else if (/export the session as/.test(qp.title ?? "")) qp.pick("JSON");
      };
      await exportSession();
      const json = await waitFor("the JSON editor", () => state.ui.shownTextDocuments[2]);
      assert.equal(json.languageId, "json");
      assert.match(json.getText(), /Say hello\./);
      const history = state.ui.quickPicks.find((q) => /export which session/.test(q.title ?? ""));
      assert.deepEqual(
        history?.items[0].buttons?.map((b) => b.tooltip),
        ["Rename", "Delete"],
      );
    },
  );
});
