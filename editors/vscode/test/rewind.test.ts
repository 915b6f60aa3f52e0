// "Restore checkpoint" in the panel's extension side (a fake VS Code; the test is the page), against the real daemon:
// in a git work tree a run edits two files, creates one and runs `sed -i` on a fourth; the person edits one of them;
// the modal lists the plan, Restore brings the files back, the conflict stays, the conversation forks before the
// message and the message goes back into the input. Cancel changes nothing. Plus the texts (src/rewind.ts).

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { afterEach, describe, test } from "node:test";
import type { KgentApi } from "../src/extension";
import type { ToPage } from "../src/panelMessages";
import type { NoteItem, PanelItem, PanelState, UserItem } from "../src/panelItems";
import { confirmation, outcomeNote } from "../src/rewind";
import {
  fakeContext,
  installFakeVscode,
  openWebviewView,
  resetFake,
  state,
  type FakeContext,
  type FakeWebviewView,
  type MessageRecord,
} from "./fake-vscode";
import {
  AGAINST_DAEMON,
  extensionRoot,
  isAlive,
  pageState,
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
for (const k of [
  "KGENT_API_KEY",
  "DEEPSEEK_API_KEY",
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "KGENT_PROVIDER",
  "KGENT_MODEL",
])
  delete process.env[k];

const A = "alpha\nbeta\ngamma\n";
const B = "alpha\nbravo\ncharlie\n";
const C = "charlie\ndelta\necho\n";

interface World {
  sb: Sandbox;
  api: KgentApi;
  ctx: FakeContext;
  view: FakeWebviewView;
}
let world: World | undefined;

function open(git: boolean): World {
  const sb = sandbox();
  for (const [name, text] of [
    ["a.txt", A],
    ["b.txt", B],
    ["c.txt", C],
  ])
    fs.writeFileSync(path.join(sb.workspace, name), text);
  if (git) execFileSync("git", ["init", "-q"], { cwd: sb.workspace });
  process.env.KGENT_STATE_DIR = sb.stateDir;
  resetFake({
    folders: [sb.workspace],
    trusted: true,
    config: {
      "kgent.serverCommand": serverCommandLine(),
      "kgent.provider": "scripted",
      "kgent.model": "rewind-edits",
      "kgent.permissionMode": "full",
    },
  });
  const ctx = fakeContext(extensionRoot());
  const api = extension.activate(ctx);
  const view = openWebviewView("kgent.panel");
  view.send({ type: "ready" });
  world = { sb, api, ctx, view };
  return world;
}

afterEach(async () => {
  const cur = world;
  world = undefined;
  if (cur === undefined) return;
  const pid = cur.api.daemonPid();
  await extension.deactivate();
  for (const d of cur.ctx.subscriptions) d.dispose();
  if (pid !== undefined) assert.equal(isAlive(pid), false);
  cur.sb.cleanup();
});

function lastState(w: World): PanelState | undefined {
  return pageState(w.view.posted);
}

const items = (w: World): PanelItem[] => lastState(w)?.items ?? [];
const users = (w: World): UserItem[] => items(w).filter((i): i is UserItem => i.type === "user");
const file = (w: World, name: string): string => fs.readFileSync(path.join(w.sb.workspace, name), "utf8");

async function oneRun(w: World): Promise<UserItem> {
  w.view.send({ type: "send", text: "Change them." });
  await waitFor("the run's end", () => items(w).find((i) => i.type === "end"));
  const user = users(w)[0];
  assert.ok(user?.entryId !== undefined, "the message names its entry");
  return user;
}

describe("Restore checkpoint (panel, extension side)", () => {
  test(
    "the modal lists the plan; Restore brings the files back, leaves the conflict, forks before the message",
    AGAINST_DAEMON,
    async () => {
      const w = open(true);
      const user = await oneRun(w);
      assert.equal(file(w, "c.txt"), "charlie\nDELTA\necho\n", "the sed ran");
      fs.writeFileSync(path.join(w.sb.workspace, "b.txt"), "alpha\nbravo\nCHARLIE\nthe user's line\n");
      const asked: MessageRecord[] = [];
      state.ui.onMessage = (m) => {
        asked.push(m);
        return m.modal ? "Restore" : undefined;
      };
      w.view.send({ type: "rewindAt", sessionId: user.sessionId, entryId: user.entryId! });
      await waitFor("the note", () =>
        items(w).find((i) => i.type === "note" && /^Restored the checkpoint/.test(i.text)),
      );
      const modal = asked.find((m) => m.modal);
      assert.ok(modal, "a modal confirmation");
      assert.match(modal.message, /before “Change them\.”/);
      assert.deepEqual(modal.items, ["Restore"]);
      for (const line of [
        "restore: a.txt",
        // the daemon's reason in a person's words: the prompt, no run id, "left as it is" said once
        "conflict — left as it is: b.txt (changed since the agent wrote it for “Change them.”)",
        "restore: c.txt",
        "restore: new.txt",
      ]) {
        assert.ok(modal.detail?.includes(line), `the modal lists ${line}: ${modal.detail}`);
      }
      assert.doesNotMatch(modal.detail ?? "", /run-[0-9a-f]|left as it is.*left as it is/);
      assert.equal(file(w, "a.txt"), A);
      assert.equal(file(w, "c.txt"), C);
      assert.equal(fs.existsSync(path.join(w.sb.workspace, "new.txt")), false);
      assert.equal(file(w, "b.txt"), "alpha\nbravo\nCHARLIE\nthe user's line\n", "the conflict left alone");
      assert.deepEqual(users(w), [], "forked before the only message");
      assert.ok(
        w.view.posted.some((p) => (p as ToPage).type === "setInput" && (p as { text: string }).text === "Change them."),
      );
      const note = items(w).find((i) => i.type === "note" && /^Restored/.test(i.text));
      assert.match((note as { text: string }).text, /3 file\(s\) restored; changed since, left as they are: b\.txt/);
      assert.equal((note as NoteItem).severity, "info", "a restore that completed is no error, conflicts or not");
    },
  );

  test("outside git the modal names the shell command first; Cancel changes nothing", AGAINST_DAEMON, async () => {
    const w = open(false);
    const user = await oneRun(w);
    const asked: MessageRecord[] = [];
    state.ui.onMessage = (m) => {
      asked.push(m);
      return undefined; // Escape / Cancel
    };
    w.view.send({ type: "rewindAt", sessionId: user.sessionId, entryId: user.entryId! });
    const modal = await waitFor("the modal", () => asked.find((m) => m.modal));
    assert.match(modal.detail ?? "", /Not restored: .*outside a git work tree.*sed -i 's\/\^delta\$\/DELTA\/' c\.txt/);
    await waitFor("the note", () => items(w).find((i) => i.type === "note" && /^Checkpoint not restored/.test(i.text)));
    assert.equal(file(w, "a.txt"), "alpha\nBETA\ngamma\n", "nothing restored");
    assert.equal(fs.existsSync(path.join(w.sb.workspace, "new.txt")), true, "nothing removed");
    assert.equal(users(w).length, 1, "not forked");
  });

  test("the texts: every outcome and note in the confirmation, the conflicts in the note", () => {
    const plan = {
      sessionId: "s",
      leafId: "p",
      forked: false,
      prompt: "Do it.\nsecond line",
      files: [
        { path: "a.txt", outcome: "restored" as const },
        { path: "b.txt", outcome: "conflict" as const, reason: "changed since" },
        { path: "x.bin", outcome: "unrestorable" as const },
      ],
      notes: ["ran `make`"],
    };
    const c = confirmation(plan);
    assert.match(c.message, /before “Do it\.”/);
    assert.equal(
      c.detail,
      "restore: a.txt\nconflict — left as it is: b.txt (changed since)\ncannot restore: x.bin\n\nNot restored: ran `make`",
    );
    assert.match(
      outcomeNote({ ...plan, forked: true }),
      /1 file\(s\) restored; changed since, left as they are: b\.txt; could not be restored: x\.bin; shell commands/,
    );
  });
});
