// Images in the panel: the page's `send` with images is checked, becomes `image` blocks after the text, and reaches
// the real daemon (stored once, by hash, beside the session file). The paste/drop itself is page code (webview/images.ts).

import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { afterEach, describe, test } from "node:test";
import type { KgentApi } from "../src/extension";
import { MAX_IMAGE_BYTES, withImages } from "../src/images";
import type { PanelItem } from "../src/panelItems";
import { parseFromPage } from "../src/panelMessages";
import {
  fakeContext,
  installFakeVscode,
  openWebviewView,
  resetFake,
  type FakeContext,
  type FakeWebviewView,
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

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
const shot = { name: "shot.png", mimeType: "image/png", data: PNG };

describe("images in the panel", () => {
  test("a page's send with images is checked: the four kinds, the limits, a run's prompt only", () => {
    assert.deepEqual(parseFromPage({ type: "send", text: "x", images: [shot] }), {
      type: "send",
      text: "x",
      images: [shot],
    });
    assert.equal(
      parseFromPage({ type: "send", text: "x", images: [{ ...shot, mimeType: "image/svg+xml" }] }),
      undefined,
    );
    assert.equal(
      parseFromPage({ type: "send", text: "x", images: [{ ...shot, data: "A".repeat(MAX_IMAGE_BYTES * 2) }] }),
      undefined,
    );
    assert.equal(parseFromPage({ type: "send", text: "x", images: Array(9).fill(shot) }), undefined);
    assert.equal(parseFromPage({ type: "send", text: "x", images: [shot], as: "steer" }), undefined);
    assert.equal(parseFromPage({ type: "send", text: "x", images: "nope" }), undefined);
  });

  test("images go after the prompt's text (and its mentions) as image blocks", () => {
    assert.equal(withImages("hi", []), "hi");
    assert.deepEqual(withImages("hi", [shot]), [
      { type: "text", text: "hi" },
      { type: "image", data: PNG, mimeType: "image/png", uri: "shot.png" },
    ]);
    assert.deepEqual(withImages("  ", [shot]), [{ type: "image", data: PNG, mimeType: "image/png", uri: "shot.png" }]);
    const mention = { type: "resource_link" as const, uri: "file:///w/a.py", name: "a.py" };
    assert.deepEqual(withImages([{ type: "text", text: "see" }, mention], [shot]).length, 3);
  });
});

interface World {
  sb: Sandbox;
  api: KgentApi;
  ctx: FakeContext;
  view: FakeWebviewView;
}
let world: World | undefined;

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

function items(w: World): PanelItem[] {
  return pageState(w.view.posted)?.items ?? [];
}

describe("images through the panel to the daemon", () => {
  test(
    "an image pasted into the composer is sent with the message and stored once beside the session",
    AGAINST_DAEMON,
    async () => {
      const sb = sandbox();
      process.env.KGENT_STATE_DIR = sb.stateDir;
      resetFake({
        folders: [sb.workspace],
        trusted: true,
        config: {
          "kgent.serverCommand": serverCommandLine(),
          "kgent.provider": "scripted",
          "kgent.model": "hello",
          "kgent.permissionMode": "ask",
        },
      });
      const ctx = fakeContext(extensionRoot());
      const api = extension.activate(ctx);
      const view = openWebviewView("kgent.panel");
      view.send({ type: "ready" });
      const w: World = { sb, api, ctx, view };
      world = w;
      w.view.send({ type: "send", text: "What is in this picture?", images: [shot] });
      const end = await waitFor("the run's end", () => items(w).find((i) => i.type === "end"));
      assert.equal(end.type === "end" && end.status, "settled");
      const user = items(w).find((i) => i.type === "user");
      assert.deepEqual(
        user?.type === "user" && user.images?.map((i) => i.name),
        ["shot.png"],
        "the sent message shows its image",
      );
      const files = fs.readdirSync(sb.stateDir, { recursive: true }).map(String);
      const file = files.find((f) => f.endsWith(".jsonl"));
      assert.ok(file, "the session file");
      const lines = fs.readFileSync(path.join(sb.stateDir, file), "utf8").trim().split("\n").slice(1);
      const stored = lines
        .map(
          (l) =>
            JSON.parse(l) as {
              message?: { role: string; text: string; images?: { sha256: string; name: string; mimeType: string }[] };
            },
        )
        .find((e) => e.message?.role === "user");
      const sha = createHash("sha256").update(Buffer.from(PNG, "base64")).digest("hex");
      assert.deepEqual(
        stored?.message?.images?.map((i) => [i.name, i.mimeType, i.sha256]),
        [["shot.png", "image/png", sha]],
      );
      assert.ok(!lines.join("\n").includes(PNG), "the bytes stay out of the JSONL");
      const blob = path.join(sb.stateDir, file.replace(/\.jsonl$/, ".blobs"), sha);
      assert.deepEqual(fs.readFileSync(blob), Buffer.from(PNG, "base64"));
    },
  );
});
