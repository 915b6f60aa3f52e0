// Host-owned files and hunk-by-hunk review, the client side against the real daemon (scripted provider): an "editor"
// of unsaved buffers serves them (hostFiles.ts), and the review helpers (reviewModel.ts) place and undo the hunks.

import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, test } from "node:test";
import { KgentClient } from "../src/client";
import type { FileHost } from "../src/hostFiles";
import type * as P from "../src/protocol";
import { filesToReview, problems, withoutHunks } from "../src/reviewModel";
import { AGAINST_DAEMON, cleanEnv, sandbox, serverCommand, type Sandbox } from "./helpers";

/** An editor's open files: path → its buffer's text (unsaved unless saved). Files not in it are not open. */
class Editor implements FileHost {
  readonly buffers = new Map<string, string>();
  readonly asked: string[] = [];
  async read(p: P.ReadTextFileParams): Promise<string | null> {
    this.asked.push(`read ${path.basename(p.path)}`);
    return this.buffers.get(p.path) ?? null;
  }
  async write(p: P.WriteTextFileParams): Promise<boolean> {
    this.asked.push(`write ${path.basename(p.path)}`);
    if (!this.buffers.has(p.path)) return false;
    this.buffers.set(p.path, p.content);
    return true;
  }
  async save(p: P.SaveFilesParams): Promise<string[]> {
    this.asked.push(`save ${p.paths.map((x) => path.basename(x)).join(" ")}`);
    for (const f of p.paths) if (this.buffers.has(f)) fs.writeFileSync(f, this.buffers.get(f)!);
    return p.paths;
  }
}

const started: { client: KgentClient; sb: Sandbox }[] = [];

async function start(
  editor: Editor,
  allow: Record<string, string> = {},
  prompts: P.PermissionParams[] = [],
): Promise<{ client: KgentClient; sb: Sandbox }> {
  const sb = sandbox();
  const client = await KgentClient.start(serverCommand(cleanEnv(sb.stateDir)), {
    files: editor,
    decide: async (params) => {
      prompts.push(params);
      const optionId = allow[params.toolCall.name];
      return optionId === undefined ? { outcome: "cancelled" } : { outcome: "selected", optionId };
    },
  });
  started.push({ client, sb });
  return { client, sb };
}

afterEach(async () => {
  for (const s of started.splice(0)) {
    await s.client.stop();
    s.sb.cleanup();
  }
});

function toolOutputs(events: P.AgentEventParams[], status: string): string[] {
  return events.flatMap((e) =>
    e.event.type === "tool_update" && e.event.status === status && typeof e.event.output === "string"
      ? [e.event.output as string]
      : [],
  );
}

const A = "alpha\nbeta\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\n";
const B = "alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\njuliet\n";

async function fourHunks(
  editor: Editor,
): Promise<{ client: KgentClient; sb: Sandbox; sessionId: string; run: P.ReviewRun; a: string; b: string }> {
  const { client, sb } = await start(editor);
  const a = path.join(sb.workspace, "a.txt");
  const b = path.join(sb.workspace, "b.txt");
  fs.writeFileSync(a, A);
  fs.writeFileSync(b, B);
  editor.buffers.set(a, A); // a.txt is open in the editor (saved); b.txt is not
  const handle = await client.run({
    prompt: "edit",
    workspace: sb.workspace,
    mode: "full",
    provider: "scripted",
    model: "review-edits",
  });
  const outcome = await handle.done;
  assert.ok(outcome.kind === "ended" && outcome.end.status === "settled");
  const review = await client.review({ sessionId: handle.sessionId, runId: handle.runId });
  assert.equal(review.runs.length, 1);
  return { client, sb, sessionId: handle.sessionId, run: review.runs[0], a, b };
}

describe("host-owned files and review, against the daemon", () => {
  test(
    "an unsaved buffer is what the agent reads and what the approval diff shows; the edit lands in the buffer",
    AGAINST_DAEMON,
    async () => {
      const editor = new Editor();
      const prompts: P.PermissionParams[] = [];
      const { client, sb } = await start(editor, { edit: "allow_once", bash: "allow_once" }, prompts);
      const notes = path.join(sb.workspace, "notes.txt");
      fs.writeFileSync(notes, "note: on disk\n");
      editor.buffers.set(notes, "note: unsaved in the editor\n");
      const run = await client.run({
        prompt: "edit",
        workspace: sb.workspace,
        mode: "ask",
        provider: "scripted",
        model: "buffer-edit",
      });
      const outcome = await run.done;
      assert.ok(outcome.kind === "ended" && outcome.end.status === "settled", JSON.stringify(outcome));
      const events: P.AgentEventParams[] = [];
      run.onEvent((e) => events.push(e));
      const outputs = toolOutputs(events, "completed");
      assert.equal(outputs[0], "note: unsaved in the editor\n", "the read saw the buffer");
      const edit = prompts.find((p) => p.toolCall.name === "edit")!.toolCall;
      assert.equal(edit.oldText, "note: unsaved in the editor\n", "the approval compares against the buffer");
      assert.match(edit.diff ?? "", /-note: unsaved in the editor\n\+NOTE: unsaved in the editor/);
      assert.equal(editor.buffers.get(notes), "NOTE: unsaved in the editor\n", "the approved edit is in the buffer");
      // Before the command, the buffer was saved (the command reads the disk) and the command saw the edit.
      assert.ok(editor.asked.includes("save notes.txt"), editor.asked.join(", "));
      assert.match(outputs.at(-1) ?? "", /^NOTE: unsaved in the editor\n/);
      // The person types on and saves: the agent's edit is kept.
      editor.buffers.set(notes, `${editor.buffers.get(notes)}my own line\n`);
      fs.writeFileSync(notes, editor.buffers.get(notes)!);
      assert.equal(fs.readFileSync(notes, "utf8"), "NOTE: unsaved in the editor\nmy own line\n");
    },
  );

  test(
    "4 hunks in 2 files: 3 accepted, 1 rejected — the buffer and the disk end exactly as expected",
    AGAINST_DAEMON,
    async () => {
      const editor = new Editor();
      const { client, sessionId, run, a, b } = await fourHunks(editor);
      // The run wrote the open file's buffer only, and the other file on disk.
      assert.equal(editor.buffers.get(a), A.replace("beta", "BETA").replace("hotel", "HOTEL"));
      assert.equal(fs.readFileSync(a, "utf8"), A);
      assert.equal(fs.readFileSync(b, "utf8"), B.replace("charlie", "CHARLIE").replace("india", "INDIA"));
      const files = filesToReview(run);
      assert.deepEqual(
        files.map((f) => [f.file.path, f.placed.map((h) => h.newText.trim())]),
        [
          ["a.txt", ["BETA", "HOTEL"]],
          ["b.txt", ["CHARLIE", "INDIA"]],
        ],
      );
      // The review's diff: the file as it is now against the file with its pending hunks undone (before the run).
      assert.equal(withoutHunks(editor.buffers.get(a)!, files[0].placed), A);
      assert.equal(withoutHunks(fs.readFileSync(b, "utf8"), files[1].placed), B);
      const hotel = files[0].placed[1];
      const keep = [files[0].placed[0], ...files[1].placed].map((h) => h.id);
      const result = await client.applyReview({ sessionId, accept: keep, reject: [hotel.id] });
      assert.deepEqual(
        result.results.map((r) => r.outcome),
        ["accepted", "accepted", "accepted", "rejected"],
      );
      assert.deepEqual(problems(result), []);
      assert.equal(editor.buffers.get(a), A.replace("beta", "BETA"), "the rejection reverted the buffer");
      assert.equal(fs.readFileSync(a, "utf8"), A, "…and left the disk to the person's save");
      assert.equal(fs.readFileSync(b, "utf8"), B.replace("charlie", "CHARLIE").replace("india", "INDIA"));
      const after = await client.review({ sessionId });
      assert.deepEqual(filesToReview(after.runs[0]), [], "nothing left to review");
    },
  );

  test("a hunk the person changed since is reported as a conflict, never overwritten", AGAINST_DAEMON, async () => {
    const editor = new Editor();
    const { client, sessionId, a } = await fourHunks(editor);
    editor.buffers.set(a, editor.buffers.get(a)!.replace("HOTEL\n", "HOTEL, says me\n"));
    const run = (await client.review({ sessionId })).runs[0];
    const [file] = filesToReview(run);
    assert.deepEqual(
      file.changedSince.map((h) => h.newText),
      ["HOTEL\n"],
      "placed nowhere: its lines changed",
    );
    const result = await client.applyReview({ sessionId, reject: file.changedSince.map((h) => h.id) });
    assert.deepEqual(
      result.results.map((r) => r.outcome),
      ["conflict"],
    );
    assert.equal(problems(result).length, 1);
    assert.match(problems(result)[0], /^a\.txt: /);
    assert.equal(
      editor.buffers.get(a),
      A.replace("beta", "BETA").replace("hotel", "HOTEL, says me"),
      "the person's line stays",
    );
  });
});
