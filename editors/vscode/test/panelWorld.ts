// The panel against the real daemon in the fake VS Code, as the panel, commands and approvals tests open it: a
// sandboxed workspace, the bundled extension activated on the scripted provider, the panel's view ready; closed after
// each test with the daemon gone. The test is the page: it reads the posted state and sends what a person clicks.

import { strict as assert } from "node:assert";
import { createRequire } from "node:module";
import * as path from "node:path";
import { afterEach } from "node:test";
import type { KgentApi } from "../src/extension";
import type { PanelItem, PanelState } from "../src/panelItems";
import {
  fakeContext,
  installFakeVscode,
  openWebviewView,
  resetFake,
  type FakeContext,
  type FakeWebviewView,
} from "./fake-vscode";
import { extensionRoot, isAlive, KEY_VARIABLES, pageState, sandbox, serverCommandLine, type Sandbox } from "./helpers";

installFakeVscode();
const extension = createRequire(__filename)(path.join(extensionRoot(), "dist", "extension.js")) as {
  activate(context: FakeContext): KgentApi;
  deactivate(): Promise<void>;
};
for (const k of [...KEY_VARIABLES, "KGENT_PROVIDER", "KGENT_MODEL", "KGENT_PERMISSION_MODE", "KGENT_APPROVAL_TIMEOUT"])
  delete process.env[k];

export interface World {
  sb: Sandbox;
  api: KgentApi;
  ctx: FakeContext;
  view: FakeWebviewView;
}
let world: World | undefined;

/** The panel on `config` over the defaults (tool-loop, ask); `userRules`: the user's rule file of this test's own. */
export function openPanel(
  config: Record<string, unknown> = {},
  options: { trusted?: boolean; userRules?: boolean } = {},
): World {
  const sb = sandbox();
  process.env.KGENT_STATE_DIR = sb.stateDir;
  if (options.userRules) process.env.KGENT_CONFIG_DIR = path.join(sb.stateDir, "config");
  resetFake({
    folders: [sb.workspace],
    trusted: options.trusted ?? true,
    config: {
      "kgent.serverCommand": serverCommandLine(),
      "kgent.provider": "scripted",
      "kgent.model": "tool-loop",
      "kgent.permissionMode": "ask",
      ...config,
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

/** The panel's state as the page holds it: the last whole state posted, patched by what came after. */
export function lastState(w: World): PanelState | undefined {
  return pageState(w.view.posted);
}

export function items(w: World): PanelItem[] {
  return lastState(w)?.items ?? [];
}
