// The packaged extension (.vsix) in a real VS Code: code-server 4.99 (VS Code 1.99) in Debian's Chromium, driven by
// playwright-core, against the real daemon on the scripted provider. Every wait is for something to appear; the
// deadlines are generous (a shared 2-core machine). A failing step leaves a screenshot in test-real/artifacts/.

import { strict as assert } from "node:assert";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { chromium, type Browser, type FrameLocator, type Locator, type Page } from "playwright-core";

const HERE = path.resolve(__dirname, "..");
const EXT = path.resolve(HERE, "..");
const REPO = path.resolve(EXT, "..", "..");
const ARTIFACTS = path.join(HERE, "artifacts");
const MEDIA = path.join(EXT, "media");
const DOCS = path.join(REPO, "docs", "vscode");
const CODE_SERVER = path.join(HERE, "node_modules", "code-server", "out", "node", "entry.js");
const KGENT = process.env.KGENT_BIN ?? path.join(REPO, ".venv", "bin", "kgent");
const STEP_MS = 120_000; // per wait: generous, the machine is shared
const SAMPLE = "value = 1\nprint(value)\n";
// The files of the buffer and review tests (made at the start: Quick Open finds the files it indexed then).
const NOTES = "note: on disk\n";
const A = "alpha\nbeta\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\n";
const B = "alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\njuliet\n";
const SHOTS = process.env.KGENT_SCREENSHOTS === "1";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

interface Instance {
  proc: ChildProcess;
  url: string;
  root: string;
  workspace: string;
  log: () => string;
}

/** A code-server with its own profile, the .vsix installed (and `extra.extensions`' .vsix files), and a workspace
 *  holding sample.py. */
async function startCodeServer(
  vsix: string,
  trusted: boolean,
  extra: { settings?: Record<string, unknown>; env?: NodeJS.ProcessEnv; extensions?: string[] } = {},
): Promise<Instance> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kgent-real-"));
  const userData = path.join(root, "user-data");
  const extensions = path.join(root, "extensions");
  const workspace = path.join(root, "ws");
  fs.mkdirSync(path.join(userData, "User"), { recursive: true });
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(workspace, "sample.py"), SAMPLE);
  fs.writeFileSync(path.join(workspace, "notes.txt"), NOTES);
  fs.writeFileSync(path.join(workspace, "a.txt"), A);
  fs.writeFileSync(path.join(workspace, "b.txt"), B);
  fs.writeFileSync(
    path.join(userData, "User", "settings.json"),
    JSON.stringify(
      {
        "kgent.serverCommand": `${KGENT} serve --stdio`,
        "kgent.provider": "scripted",
        "kgent.model": "tool-loop",
        "kgent.permissionMode": "ask",
        "kgent.approvalTimeout": 900, // long enough never to expire here; the cards show its countdown
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "workbench.enableExperiments": false,
        "telemetry.telemetryLevel": "off",
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "update.mode": "none",
        "security.workspace.trust.enabled": !trusted,
        "security.workspace.trust.startupPrompt": "never",
        "security.workspace.trust.banner": "always",
        "window.commandCenter": false,
        "chat.commandCenter.enabled": false,
        "workbench.colorTheme": "Default Dark Modern",
        "files.autoSave": "off", // desktop VS Code's default (the web build saves after a delay): unsaved stays unsaved
        // nothing drawn while the workbench waits: an idle page that blinks and animates costs CPU the other suites need
        "editor.cursorBlinking": "solid",
        "workbench.reduceMotion": "on",
        ...extra.settings,
      },
      null,
      2,
    ),
  );
  const env: NodeJS.ProcessEnv = { ...process.env, KGENT_STATE_DIR: path.join(root, "state") };
  for (const k of Object.keys(env))
    if (k.endsWith("_API_KEY") || k === "KGENT_PROVIDER" || k === "KGENT_MODEL") delete env[k];
  Object.assign(env, extra.env);
  const common = ["--user-data-dir", userData, "--extensions-dir", extensions];
  const installs = [vsix, ...(extra.extensions ?? [])].flatMap((x) => ["--install-extension", x]);
  execFileSync(process.execPath, [CODE_SERVER, ...common, ...installs], {
    env,
    stdio: "pipe",
    timeout: STEP_MS,
  });
  const port = await freePort();
  const args = [
    CODE_SERVER,
    ...common,
    "--auth",
    "none",
    "--bind-addr",
    `127.0.0.1:${port}`,
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-getting-started-override",
  ];
  if (trusted) args.push("--disable-workspace-trust");
  let out = "";
  const proc = spawn(process.execPath, [...args, workspace], { env, stdio: ["ignore", "pipe", "pipe"] });
  proc.stdout?.on("data", (b: Buffer) => (out += b.toString()));
  proc.stderr?.on("data", (b: Buffer) => (out += b.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`code-server did not start:\n${out}`)), STEP_MS);
    const check = (): void => {
      if (/HTTP server listening/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout?.on("data", check);
    proc.stderr?.on("data", check);
    proc.once("exit", (code) => reject(new Error(`code-server exited (${code}):\n${out}`)));
  });
  return {
    proc,
    url: `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`,
    root,
    workspace,
    log: () => out,
  };
}

async function stopCodeServer(i: Instance | undefined): Promise<void> {
  if (i === undefined) return;
  if (i.proc.exitCode === null) {
    const exited = new Promise((r) => i.proc.once("exit", r));
    i.proc.kill("SIGTERM");
    await exited;
  }
  fs.rmSync(i.root, { recursive: true, force: true });
}

let browser: Browser | undefined;

async function openWorkbench(i: Instance): Promise<Page> {
  assert.ok(browser);
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(i.url);
  await page.locator(".monaco-workbench").waitFor({ timeout: STEP_MS });
  // The extension is up when its status bar items are (it activates on startup).
  await page.locator(".statusbar-item", { hasText: "Kgent" }).first().waitFor({ timeout: STEP_MS });
  return page;
}

/** Run a command from the command palette (F1), as a person does. */
async function palette(page: Page, title: string): Promise<void> {
  const box = page.locator(".quick-input-widget .quick-input-box input");
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
  // On a loaded machine a busy workbench can drop the key, or close the palette again before it is typed in or
  // before it lists the command (the box, or the row, then exists but is hidden): open it again (as a person
  // would), a few times, until the command's row shows.
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press("F1");
    try {
      await box.waitFor({ timeout: attempt < 4 ? 20_000 : STEP_MS });
      await box.fill(`>${title}`, { timeout: attempt < 4 ? 10_000 : STEP_MS });
      await row.waitFor({ timeout: attempt < 4 ? 30_000 : STEP_MS });
      break;
    } catch (e) {
      if (attempt >= 4) throw e;
    }
  }
  await page.keyboard.press("Enter");
}

/** Quick Open (Ctrl+P) a file of the workspace and wait for its editor. */
async function quickOpen(page: Page, name: string): Promise<void> {
  await page.keyboard.press("Control+P");
  await page.locator(".quick-input-widget .quick-input-box input").fill(name);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor({ timeout: STEP_MS });
  await page.keyboard.press("Enter");
  await page.locator(".tab.active", { hasText: name }).waitFor({ timeout: STEP_MS });
}

async function waitForCount(locator: Locator, n: number): Promise<void> {
  await waitFor(async () => (await locator.count()) === n, `${n} of ${locator.toString()}`);
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + STEP_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Wait until the panel's input holds `value`. */
async function waitForValue(panel: FrameLocator, value: string): Promise<void> {
  const input = panel.locator("#input");
  const deadline = Date.now() + STEP_MS;
  for (;;) {
    const got = await input.inputValue();
    if (got === value) return;
    if (Date.now() > deadline) assert.equal(got, value, "the panel's input");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The Kgent panel's page: VS Code nests a webview's content in an inner frame. */
function panelFrame(page: Page): FrameLocator {
  return page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
}

/** A screenshot in the test's artifacts; with KGENT_SCREENSHOTS=1 also in `dir` (the README's media, or docs/). */
async function shot(page: Page, name: string, dir = MEDIA): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
  if (SHOTS) {
    fs.mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, `${name}.png`) });
  }
}

/** Run `fn`; on failure keep a screenshot of the page and the code-server log. */
async function step<T>(page: Page, name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, `failed-${name}.png`) }).catch(() => undefined);
    throw e;
  }
}

function secondsLeft(countdown: string): number {
  return Number(/in (\d+) s/.exec(countdown)?.[1] ?? NaN);
}

/** Send a message from the panel's box and wait for its run to end (the panel shows one more end line). */
async function sendAndWait(panel: FrameLocator, text: string): Promise<void> {
  const ends = await panel.locator(".end").count();
  await panel.locator("#input").fill(text);
  await submit(panel);
  await panel.locator(".end").nth(ends).waitFor({ timeout: STEP_MS });
}

/** Press `key` on `target` until `done()` holds: a busy workbench can lose a key on its way into a webview (seen: a
 *  composer still holding `/compact`, its Enter never handled). Only for keys whose effect shows whether they were
 *  handled, so a retry cannot act twice. */
async function pressUntil(target: Locator, key: string, done: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await target.press(key);
    const deadline = Date.now() + (attempt < 3 ? 15_000 : STEP_MS);
    for (;;) {
      if (await done()) return;
      if (Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (attempt >= 3) throw new Error(`timed out waiting for ${what} (${key} pressed ${attempt} times)`);
  }
}

/** Enter in the panel's composer: it sends the text and empties the input in the same handler, so an input that
 *  still holds the text means the key was not handled (and pressing it again cannot send twice). */
async function submit(panel: FrameLocator): Promise<void> {
  const input = panel.locator("#input");
  await pressUntil(
    input,
    "Enter",
    async () => (await input.inputValue()) === "",
    "the composer to send (its input emptied)",
  );
}

/** History: the panel's button opens the folder's sessions in the quick input; pick the row titled `title` (the
 *  newest when undefined). The click is the page's; if the picker does not come (a busy workbench), click again. */
async function fromHistory(page: Page, panel: FrameLocator, title?: string): Promise<void> {
  const rows = page.locator(".quick-input-widget .quick-input-list .monaco-list-row");
  for (let attempt = 1; ; attempt++) {
    await panel.locator("#historyButton").click();
    try {
      await rows.first().waitFor({ timeout: attempt < 3 ? 30_000 : STEP_MS });
      break;
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
  const row = title === undefined ? rows.first() : rows.filter({ hasText: title }).first();
  await row.waitFor({ timeout: STEP_MS });
  await row.click();
}

let builtVsix: string | undefined;

/** The extension's .vsix, made by its own `npm run package` in a copy of editors/vscode (beside a link to editors/web,
 *  whose page source the webview bundles): `make test` runs the Node suite in another lane, and that suite rebuilds
 *  and loads dist/, so the package is never made from, nor makes, a half-written bundle there. */
function buildVsix(): string {
  if (builtVsix !== undefined) return builtVsix;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "kgent-vsix-"));
  const stage = path.join(root, "editors", "vscode");
  fs.mkdirSync(stage, { recursive: true });
  fs.symlinkSync(path.resolve(EXT, "..", "web"), path.join(root, "editors", "web"));
  for (const name of fs.readdirSync(EXT)) {
    if (["node_modules", "dist", "out", "test-real"].includes(name) || name.endsWith(".vsix")) continue;
    fs.cpSync(path.join(EXT, name), path.join(stage, name), { recursive: true });
  }
  fs.symlinkSync(path.join(EXT, "node_modules"), path.join(stage, "node_modules"));
  execFileSync("npm", ["run", "package", "--silent"], { cwd: stage, stdio: "inherit" });
  const version = (JSON.parse(fs.readFileSync(path.join(EXT, "package.json"), "utf8")) as { version: string }).version;
  builtVsix = path.join(os.tmpdir(), `${path.basename(root)}.vsix`);
  fs.renameSync(path.join(stage, `kgent-${version}.vsix`), builtVsix);
  fs.rmSync(root, { recursive: true, force: true });
  return builtVsix;
}

/** The test-only language extension (ruff-client/: vscode-languageclient wrapping `ruff server`) as a .vsix, bundled
 *  and packaged in a temporary directory, as buildVsix() does Kgent's. */
function buildRuffClientVsix(): string {
  const src = path.join(HERE, "ruff-client");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kgent-ruff-client-"));
  const bin = (name: string) => path.join(EXT, "node_modules", ".bin", name);
  fs.copyFileSync(path.join(src, "package.json"), path.join(dir, "package.json"));
  execFileSync(
    bin("esbuild"),
    [
      path.join(src, "extension.ts"),
      "--bundle",
      "--platform=node",
      "--format=cjs",
      "--target=node20",
      "--external:vscode",
      "--log-level=warning",
      `--outfile=${path.join(dir, "dist", "extension.js")}`,
    ],
    { stdio: "inherit" },
  );
  const vsix = path.join(os.tmpdir(), `${path.basename(dir)}.vsix`);
  execFileSync(
    bin("vsce"),
    ["package", "--no-dependencies", "--allow-missing-repository", "--skip-license", "--out", vsix],
    { cwd: dir, stdio: "pipe" },
  );
  fs.rmSync(dir, { recursive: true, force: true });
  return vsix;
}

/** The parent pid of `pid` (from /proc), or undefined once it is gone. */
function parentPid(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** The pids of the Kgent daemons of an instance: `kgent serve` processes that descend from its code-server. */
function daemonPids(i: Instance): number[] {
  const root = i.proc.pid;
  const out: number[] = [];
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    let cmd: string;
    try {
      cmd = fs.readFileSync(`/proc/${d}/cmdline`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    if (!cmd.includes("kgent") || !cmd.split("\0").includes("serve")) continue;
    for (let p = parentPid(Number(d)), n = 0; p !== undefined && p > 1 && n < 30; p = parentPid(p), n++) {
      if (p === root) {
        out.push(Number(d));
        break;
      }
    }
  }
  return out;
}

/** Milliseconds from Enter in the panel's input to the run's first line in the panel (its message, from the daemon). */
async function enterToFirstLine(panel: FrameLocator, text: string): Promise<number> {
  const users = await panel.locator(".msg.user").count();
  await panel.locator("#input").fill(text);
  const t0 = Date.now();
  await submit(panel);
  await panel.locator(".msg.user").nth(users).waitFor({ timeout: STEP_MS });
  return Date.now() - t0;
}

async function statusItem(page: Page, text: string): Promise<void> {
  await page.locator(".statusbar-item", { hasText: text }).first().waitFor({ timeout: STEP_MS });
}

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

after(async () => {
  await browser?.close();
  if (builtVsix !== undefined) fs.rmSync(builtVsix, { force: true });
});

// KGENT_REAL_SUITE=first-hour (or =main, approvals, slash, rewind, diagnostics, or several: =main,rewind) runs those
// suites only (each starts its own code-server).
const SUITES = process.env.KGENT_REAL_SUITE?.split(",").map((s) => s.trim());
/** Whether the run leaves out the suite `name`. */
const skipped = (name: string): boolean => SUITES !== undefined && !SUITES.includes(name);

describe("Kgent in a real VS Code (code-server)", {
  timeout: 30 * 60_000,
  skip: skipped("main"),
}, () => {
  let vsix = "";
  let ide: Instance | undefined;
  let page: Page;
  let panel: FrameLocator;

  // A price for the scripted model (KGENT_PRICES, read by the daemon): the session line shows the session's cost.
  const prices = path.join(os.tmpdir(), `kgent-real-prices-${process.pid}.json`);

  before(async () => {
    vsix = buildVsix();
    fs.writeFileSync(prices, JSON.stringify({ models: { "tool-loop": { input: 3, output: 15 } } }));
    ide = await startCodeServer(vsix, true, { env: { KGENT_PRICES: prices } });
    // A hostile repository's own settings (issue 36): another server, another provider at a collector URL, full mode,
    // trusted. Every test of this suite runs under them and holds only if VS Code ignores them (the settings are
    // application-scoped): approvals are asked (not full), the scripted daemon answers (not ./evil, not openai).
    fs.mkdirSync(path.join(ide.workspace, ".vscode"));
    fs.writeFileSync(
      path.join(ide.workspace, ".vscode", "settings.json"),
      JSON.stringify({
        "kgent.serverCommand": "./evil serve --stdio",
        "kgent.provider": "openai",
        "kgent.baseUrl": "http://127.0.0.1:9/v1",
        "kgent.permissionMode": "full",
        "kgent.trustProjectExtensions": true,
      }),
    );
    page = await openWorkbench(ide);
    // the status bar's mode is the user's
    await page.locator(".statusbar-item", { hasText: "ask" }).first().waitFor({ timeout: STEP_MS });
  });

  after(async () => {
    await page?.close().catch(() => undefined);
    await stopCodeServer(ide);
    fs.rmSync(prices, { force: true });
  });

  test("palette → panel run → approval card → diff → allow → transcript → changed files", async () => {
    assert.ok(ide);
    await step(page, "open-panel", async () => {
      await palette(page, "Kgent: Focus Panel");
      panel = panelFrame(page);
      await panel.locator("#input").waitFor({ timeout: STEP_MS });
      // The model picker is filled from the daemon's initialize answer (the scripted provider's scripts).
      await panel.locator("#model option[value='long-bash']").waitFor({ state: "attached", timeout: STEP_MS });
    });
    await shot(page, "panel-idle");

    await step(page, "send", async () => {
      await panel.locator("#input").fill("Change value to 2 in sample.py and check it.");
      await submit(panel);
      await panel.locator(".card.approval.pending").first().waitFor({ timeout: STEP_MS });
    });
    const card = panel.locator(".card.approval.pending").first();
    await step(page, "approval-card", async () => {
      assert.match(await card.locator(".card-title").innerText(), /edit sample\.py/);
      const diff = await card.locator("pre.diff").innerText();
      assert.match(diff, /-value = 1/);
      assert.match(diff, /\+value = 2/);
      // One primary action (allow once) and Reject; the lasting answers wait in the "Always…" menu (issue 40).
      assert.equal(await card.locator(".buttons > button.opt").count(), 2);
      assert.match(await card.locator(".buttons > button.primary").innerText(), /^Allow once/);
      await card.locator("details.more > summary").click();
      // The answers the daemon offers (not a fixed list): once, the "always" ones with the rule each creates, reject.
      for (const kind of ["allow_once", "allow_always", "reject_once", "reject_always"]) {
        await card.locator(`button.opt.${kind}`).first().waitFor({ timeout: STEP_MS });
      }
      // The names mark the file as code: shown as code, not as literal backticks.
      const always = card.locator("button.opt.allow_always").first();
      assert.doesNotMatch(await always.innerText(), /`/);
      assert.equal(await always.locator("code", { hasText: "sample.py" }).count(), 1);
      assert.match(await card.locator(".rule-line").first().innerText(), /sample\.py/);
      // Closed again: the card as it first shows (the screenshots), one primary action and the menu folded.
      await card.locator("details.more > summary").click();
      await card.locator("button.opt.allow_always").first().waitFor({ state: "hidden", timeout: STEP_MS });
    });
    await step(page, "countdown", async () => {
      // kgent.approvalTimeout is set: the card counts down to the automatic reject, second by second.
      const countdown = card.locator(".countdown");
      const first = await countdown.innerText();
      assert.match(first, /^rejected automatically in \d+ s$/);
      await panel
        .locator(".card.approval.pending .countdown", { hasNotText: first })
        .first()
        .waitFor({ timeout: STEP_MS });
      assert.ok(secondsLeft(await countdown.innerText()) < secondsLeft(first), "it counts down");
    });
    await shot(page, "panel-approval");

    await step(page, "palette-never-answers", async () => {
      await page.keyboard.press("F1");
      await page.locator(".quick-input-widget .quick-input-box input").waitFor({ timeout: STEP_MS });
      await page.keyboard.press("Escape");
      await page.keyboard.press("Control+P");
      await page.locator(".quick-input-widget .quick-input-box input").waitFor({ timeout: STEP_MS });
      await page.keyboard.press("Escape");
      await panel.locator(".card.approval.pending").first().waitFor({ timeout: STEP_MS });
    });

    await step(page, "diff-editor", async () => {
      // The edit is reviewed where the code is: its diff opened by itself beside the card, which it does not cover.
      await page.locator(".tab", { hasText: "sample.py: current ↔ proposed" }).waitFor({ timeout: STEP_MS });
      await page.locator(".monaco-diff-editor").first().waitFor({ timeout: STEP_MS });
      await panel.locator(".card.approval.pending").first().waitFor({ timeout: STEP_MS });
      // Its title bar answers it: Allow, Reject, More Answers… (the daemon's other answers).
      for (const label of ["Allow", "Reject", "More Answers…"])
        await page
          .locator(`.editor-actions .action-label[aria-label="${label}"]`)
          .first()
          .waitFor({ timeout: STEP_MS });
      // Opening it again from the card shows the same diff (no second tab).
      await card.locator("button.open-diff").click();
      await page.locator(".tab", { hasText: "sample.py: current ↔ proposed" }).first().waitFor({ timeout: STEP_MS });
      assert.equal(await page.locator(".tab", { hasText: "sample.py: current ↔ proposed" }).count(), 1);
    });
    await shot(page, "approval-diff-editor", DOCS);

    await step(page, "allow", async () => {
      // Allow in the diff's title bar: the card is answered, the diff closes; the command comes next.
      await page.locator('.editor-actions .action-label[aria-label="Allow"]').first().click();
      await page
        .locator(".tab", { hasText: "sample.py: current ↔ proposed" })
        .waitFor({ state: "detached", timeout: STEP_MS });
      await panel.locator(".card.approval.pending .command").first().waitFor({ timeout: STEP_MS });
      await panel.locator(".card.approval.pending button.opt", { hasText: "Allow once" }).first().click();
      await panel.locator(".end.status-settled").first().waitFor({ timeout: STEP_MS });
    });
    await shot(page, "panel-after-run");

    await step(page, "transcript", async () => {
      const text = await panel.locator("#log").innerText();
      assert.match(text, /Updated sample\.py: value is now 2/);
      await panel
        .locator(".msg.assistant.markdown p", { hasText: "Updated sample.py" })
        .first()
        .waitFor({ timeout: STEP_MS }); // rendered Markdown
      assert.match(text, /Answered: Allow once/);
      assert.match(text, /1 file changed/);
      assert.equal(fs.readFileSync(path.join(ide!.workspace, "sample.py"), "utf8"), "value = 2\nprint(value)\n");
      await panel.locator("details.tool", { hasText: "grep" }).first().waitFor({ timeout: STEP_MS });
    });

    await step(page, "context-gauge", async () => {
      // How full the context is: a small bar filled to the daemon's share, beside the daemon's words.
      const gauge = panel.locator("#session .session-context");
      const words = await gauge.innerText();
      const percent = /^context [\d.]+k? of 33k tokens \((\d+)%\)$/.exec(words.trim())?.[1];
      assert.ok(percent !== undefined, `the daemon's words: ${words}`);
      const bar = gauge.locator(".gauge[role='meter']");
      assert.equal(await bar.getAttribute("aria-valuenow"), percent);
      assert.equal(
        await bar.locator(".gauge-fill").evaluate((e) => (e as { style: { width: string } }).style.width),
        `${percent}%`,
      );
      const box = await bar.boundingBox();
      assert.ok(box !== null && box.width > 10 && box.height > 2, "the bar is drawn");
      // The session's cost: the model has a price here, and the daemon's total says it ("≈ $…").
      await panel
        .locator("#session .session-usage", { hasText: /^session total: \d+ in .* out tokens · ≈ \$\d+\.\d{4}$/ })
        .waitFor({ timeout: STEP_MS });
    });

    await step(page, "changed-files", async () => {
      await panel.locator("button.changed-file", { hasText: "sample.py" }).first().click();
      await page
        .locator(".tab", { hasText: /^sample\.py/ })
        .first()
        .waitFor({ timeout: STEP_MS });
      await page.locator(".monaco-editor .view-line", { hasText: "value = 2" }).first().waitFor({ timeout: STEP_MS });
    });
  });

  test("reject: the file stays as it was and the run says so", async () => {
    assert.ok(ide);
    fs.writeFileSync(path.join(ide.workspace, "sample.py"), SAMPLE);
    await step(page, "reject", async () => {
      await panel.locator("#new").click();
      await panel.locator("#input").fill("Change value to 2 again.");
      await submit(panel);
      const card = panel.locator(".card.approval.pending").first();
      await card.waitFor({ timeout: STEP_MS });
      await card
        .locator("button.opt", { hasText: /^Reject\b(?! always)/ })
        .first()
        .click();
      await panel.locator(".card.approval.pending .command").first().waitFor({ timeout: STEP_MS });
      // Keyboard: focus the card, R rejects.
      await panel.locator(".card.approval.pending").first().focus();
      await panel.locator(".card.approval.pending").first().press("r");
      await panel.locator(".end").first().waitFor({ timeout: STEP_MS });
      const text = await panel.locator("#log").innerText();
      assert.match(text, /Answered: Reject/);
      assert.match(text, /permission_denied/);
      assert.equal(fs.readFileSync(path.join(ide!.workspace, "sample.py"), "utf8"), SAMPLE);
    });
  });

  test("cancel mid-command: Escape ends the run, keeps the command's output, badges it cancelled, gives the queue back", async () => {
    await step(page, "cancel", async () => {
      await panel.locator("#new").click();
      await panel.locator("#model").selectOption("long-bash"); // the model picker (initialize's models)
      await page.locator(".statusbar-item", { hasText: "long-bash" }).first().waitFor({ timeout: STEP_MS });
      await panel.locator("#input").fill("Run the long command.");
      await submit(panel);
      const card = panel.locator(".card.approval.pending").first();
      await card.waitFor({ timeout: STEP_MS });
      // A lasting answer (this session's rule: a new conversation follows), from the card's "Always…" menu.
      await card.locator("details.more > summary").click();
      const always = card.locator("button.opt[data-option-id='allow_always']");
      assert.equal(await always.getAttribute("data-scope"), "session");
      await always.click();
      // Live output: the command's first line appears while it still runs.
      await panel
        .locator("details.tool.status-in_progress pre.output", { hasText: "started" })
        .first()
        .waitFor({ timeout: STEP_MS });
      // While it runs, Enter queues a follow-up; Clear drops it.
      await panel.locator("#input").fill("and then say done");
      await panel.locator("#input").press("Enter");
      await panel
        .locator("#live .queue .chip", { hasText: "follow-up: and then say done" })
        .waitFor({ timeout: STEP_MS });
      await shot(page, "panel-streaming");
      await panel.locator("#live .queue button.clear-queue").click();
      await panel.locator("#live .queue").waitFor({ state: "detached", timeout: STEP_MS });
      // Two more queued (a follow-up, then a steer: Ctrl+Enter), then Escape in the input stops the run: the model
      // never read them, so both come back into the box, with a note saying so.
      await panel.locator("#input").fill("then list the files");
      await panel.locator("#input").press("Enter");
      await panel.locator("#input").fill("look at b.txt too");
      await panel.locator("#input").press("Control+Enter");
      await waitForCount(panel.locator("#live .queue .chip"), 2);
      await waitForValue(panel, "");
      await panel.locator("#input").press("Escape");
      await panel.locator(".end.status-cancelled").first().waitFor({ timeout: STEP_MS });
      await waitForValue(panel, "look at b.txt too\n\nthen list the files");
      await panel
        .locator(".note", { hasText: /^Stopped: the 2 queued messages are back in the box/ })
        .waitFor({ timeout: STEP_MS });
      const tool = panel.locator("details.tool", { hasText: "sleep 60" }).first();
      const output = await tool.locator("pre.output").innerText();
      assert.match(output, /^started$/m);
      assert.doesNotMatch(output, /^finished$/m);
      assert.match(output, /cancelled/);
      // Cut short by the run's cancel: badged cancelled, not failed (nor in the failure's colour).
      assert.match((await tool.getAttribute("class")) ?? "", /\bstatus-cancelled\b/);
      assert.doesNotMatch((await tool.getAttribute("class")) ?? "", /\berror\b/);
      assert.equal((await tool.locator("summary .badge").innerText()).trim(), "cancelled");
      // Its title and the lasting answer mark the command as code: shown as code, never as literal backticks.
      const summary = await tool.locator("summary").innerText();
      assert.match(summary, /Answered: Allow .*sleep.* this session/);
      assert.doesNotMatch(summary, /`/);
      assert.ok((await tool.locator("summary .decided code").count()) > 0, "the answer's command as code");
      for (const line of await panel.locator("details.tool summary, .card.approval .answer").allInnerTexts())
        assert.doesNotMatch(line, /`/, `no literal backticks: ${line}`);
      assert.equal(
        await panel.locator(".msg.user.source-follow_up, .msg.user.source-steer").count(),
        0,
        "no queued message reached the run",
      );
      await panel.locator("#input").fill(""); // the next test starts from an empty box
    });
  });

  test("keybindings: Ctrl+Alt+K focuses the panel, Ctrl+Alt+L mentions the selection; the file goes along", async () => {
    assert.ok(ide);
    fs.writeFileSync(path.join(ide.workspace, "sample.py"), SAMPLE);
    await step(page, "focus-key", async () => {
      await panel.locator("#new").click();
      await panel.locator("#model").selectOption("hello");
      await page.locator(".statusbar-item", { hasText: "hello" }).first().waitFor({ timeout: STEP_MS });
      // The mode picker too: the status bar follows it.
      await panel.locator("#mode").selectOption("plan");
      await page.locator(".statusbar-item", { hasText: "plan" }).first().waitFor({ timeout: STEP_MS });
      await panel.locator("#mode").selectOption("ask");
      await page.locator(".statusbar-item", { hasText: "ask" }).first().waitFor({ timeout: STEP_MS });
      await page.keyboard.press("Control+B"); // hide the side bar, and the panel with it
      await page.locator("iframe.webview.ready").first().waitFor({ state: "hidden", timeout: STEP_MS });
      await page.keyboard.press("Control+Alt+K");
      await panel.locator("#input").waitFor({ timeout: STEP_MS });
      // Typing lands in the panel's box; Shift+Enter is a new line, not a send.
      await page.keyboard.type("typed after the shortcut");
      await page.keyboard.press("Shift+Enter");
      await page.keyboard.type("on two lines");
      await waitForValue(panel, "typed after the shortcut\non two lines");
      assert.equal(await panel.locator(".msg.user").count(), 0, "nothing was sent");
      await panel.locator("#input").fill("");
    });
    await step(page, "selection-key", async () => {
      await quickOpen(page, "sample.py");
      await page.locator(".monaco-editor .view-line", { hasText: "value = 1" }).first().click();
      await page.keyboard.press("Control+A");
      await page.keyboard.press("Control+Alt+L");
      await waitForValue(panel, "@sample.py#L1-2 ");
    });
    await step(page, "mention", async () => {
      // The input holds the mention; the person adds the question and sends it: the lines go along as a resource.
      await panel.locator("#input").press("End");
      await panel.locator("#input").pressSequentially("what does this print?");
      await submit(panel);
      await panel.locator(".end.status-settled").first().waitFor({ timeout: STEP_MS });
      const user = panel.locator(".msg.user").last();
      assert.match(await user.locator(".text").innerText(), /^@sample\.py#L1-2 what does this print\?$/);
      const attachment = user.locator("details.attachment");
      assert.equal(await attachment.locator("summary").innerText(), "sample.py#L1-L2");
      await attachment.locator("summary").click();
      assert.equal(await attachment.locator("pre").innerText(), "value = 1\nprint(value)");
    });
  });

  test("history: Resume brings a session's conversation back; Fork here branches before any message", async () => {
    await step(page, "resume", async () => {
      await panel.locator("#new").click();
      await panel.locator("#empty:not([hidden])").waitFor({ timeout: STEP_MS });
      await fromHistory(page, panel, "Change value to 2 in sample.py");
      // The first test's conversation, as it was: the message, the answer, the tool calls with their results.
      await panel
        .locator(".msg.user", { hasText: "Change value to 2 in sample.py and check it." })
        .waitFor({ timeout: STEP_MS });
      await panel
        .locator(".msg.assistant", { hasText: "Updated sample.py: value is now 2" })
        .waitFor({ timeout: STEP_MS });
      await panel.locator("details.tool.status-completed", { hasText: "Edit sample.py" }).waitFor({ timeout: STEP_MS });
      assert.match(await panel.locator("#session").innerText(), /Continuing: Change value to 2/);
      await panel.locator(".msg.user").first().hover();
      await shot(page, "panel-resumed");
    });
    await step(page, "fork-here", async () => {
      // A resumed session goes on with its own model (tool-loop, which asks): pick another for this message.
      assert.equal(await panel.locator("#model").inputValue(), "tool-loop");
      await panel.locator("#model").selectOption("hello");
      await statusItem(page, "hello");
      await sendAndWait(panel, "Say something else.");
      assert.equal(await panel.locator(".msg.user").count(), 2);
      // Branch before the first message: the panel shows nothing before it, and the message is back in the box.
      const first = panel.locator(".msg.user").first();
      await first.hover();
      await first.locator("button.fork-here").click();
      await panel
        .locator(".note", { hasText: "Forked before “Change value to 2 in sample.py" })
        .waitFor({ timeout: STEP_MS });
      assert.equal(await panel.locator(".msg.user").count(), 0);
      await waitForValue(panel, "Change value to 2 in sample.py and check it.");
      await panel.locator("#input").fill("A different first message.");
      await submit(panel);
      await panel.locator(".end").first().waitFor({ timeout: STEP_MS });
      // Resume again: the session now reads from the new branch.
      await fromHistory(page, panel); // the newest
      await panel
        .locator(".note", { hasText: /^Resumed/ })
        .last()
        .waitFor({ timeout: STEP_MS });
      const texts = await panel.locator(".msg.user .text").allInnerTexts();
      assert.deepEqual(texts, ["A different first message."]);
    });
    await step(page, "search-rename-delete", async () => {
      // The picker: whole titles, filtered by what is typed; each row renames and deletes.
      await panel.locator("#historyButton").click();
      const box = page.locator(".quick-input-widget .quick-input-box input");
      const rows = page.locator(".quick-input-widget .quick-input-list .monaco-list-row");
      await rows.first().waitFor({ timeout: STEP_MS });
      await box.fill("value to 2 in sample");
      const row = rows.filter({ hasText: "Change value to 2 in sample.py and check it." }).first();
      await row.waitFor({ timeout: STEP_MS });
      await waitFor(async () => (await rows.count()) === 1, "the search to leave one row");
      await shot(page, "history-picker", DOCS);
      await row.hover();
      await row.locator('.action-label[aria-label="Rename"]').click();
      await waitFor(
        async () => (await box.inputValue()).startsWith("Change value to 2"),
        "the rename box with the title",
      );
      await box.fill("Set value to 2 in sample.py, renamed"); // still found by the search in the picker's box
      await page.keyboard.press("Enter");
      const renamed = rows.filter({ hasText: "Set value to 2 in sample.py, renamed" }).first();
      await renamed.waitFor({ timeout: STEP_MS });
      await renamed.hover();
      await renamed.locator('.action-label[aria-label="Delete"]').click();
      await page.locator(".monaco-dialog-box .monaco-button", { hasText: "Delete" }).first().click();
      await renamed.waitFor({ state: "detached", timeout: STEP_MS });
      await page.keyboard.press("Escape");
    });
  });

  test("buffers: the agent reads the unsaved buffer, its approved edit lands there (undoable) and survives a save", async () => {
    assert.ok(ide);
    const notes = path.join(ide.workspace, "notes.txt");
    await step(page, "unsaved-buffer", async () => {
      await quickOpen(page, "notes.txt");
      await page.locator(".monaco-editor .view-line", { hasText: "note: on disk" }).first().click();
      await page.keyboard.press("Control+A");
      await page.keyboard.type("note: unsaved in the editor");
      await page.locator(".tab.dirty", { hasText: "notes.txt" }).waitFor({ timeout: STEP_MS });
    });
    await step(page, "approve-buffer-edit", async () => {
      await panel.locator("#new").click();
      await panel.locator("#model").selectOption("buffer-edit");
      await page.locator(".statusbar-item", { hasText: "buffer-edit" }).first().waitFor({ timeout: STEP_MS });
      await panel.locator("#input").fill("Edit the notes.");
      await submit(panel);
      const card = panel.locator(".card.approval.pending").first();
      await card.waitFor({ timeout: STEP_MS });
      // What the agent read, and what the approval compares against, is the unsaved buffer — not the disk.
      await panel
        .locator("details.tool pre.output", { hasText: /note:\sunsaved\sin\sthe\seditor/ })
        .first()
        .waitFor({ state: "attached", timeout: STEP_MS });
      const diff = await card.locator("pre.diff").innerText();
      assert.match(diff, /-note: unsaved in the editor/);
      assert.match(diff, /\+NOTE: unsaved in the editor/);
      await card.locator("button.opt", { hasText: "Allow once" }).first().click();
      // The edit goes into the buffer; the next call, `cat notes.txt` (a plain read: no approval), reads the disk, so
      // the buffer is saved before it runs, and the command sees the edit.
      await panel.locator(".end.status-settled").first().waitFor({ timeout: STEP_MS });
      await page
        .locator(".monaco-editor .view-line", { hasText: /NOTE:\sunsaved\sin\sthe\seditor/ })
        .first()
        .waitFor({ timeout: STEP_MS });
      assert.equal(fs.readFileSync(notes, "utf8"), "NOTE: unsaved in the editor");
      await panel
        .locator("details.tool pre.output", { hasText: /^NOTE: unsaved in the editor/ })
        .last()
        .waitFor({ state: "attached", timeout: STEP_MS });
    });
    await step(page, "undo-and-save", async () => {
      await page
        .locator(".monaco-editor .view-line", { hasText: /NOTE:\sunsaved/ })
        .first()
        .click();
      await page.keyboard.press("Control+Z"); // the agent's edit is one step of the editor's undo
      await page
        .locator(".monaco-editor .view-line", { hasText: /note:\sunsaved\sin\sthe\seditor/ })
        .first()
        .waitFor({ timeout: STEP_MS });
      await page.keyboard.press("Control+Shift+Z");
      await page
        .locator(".monaco-editor .view-line", { hasText: /NOTE:\sunsaved\sin\sthe\seditor/ })
        .first()
        .waitFor({ timeout: STEP_MS });
      await page.keyboard.press("End");
      await page.keyboard.type(", and mine");
      await page.keyboard.press("Control+S");
      await page.locator(".tab.dirty", { hasText: "notes.txt" }).waitFor({ state: "detached", timeout: STEP_MS });
      assert.equal(fs.readFileSync(notes, "utf8"), "NOTE: unsaved in the editor, and mine");
    });
  });

  test("review: Review Changes in the diff editor, 3 of 4 hunks in 2 files accepted and 1 rejected", async () => {
    assert.ok(ide);
    const a = path.join(ide.workspace, "a.txt");
    const b = path.join(ide.workspace, "b.txt");
    const lens = (name: string) =>
      page.locator(".monaco-diff-editor .editor.modified .codelens-decoration a", { hasText: new RegExp(`^${name}$`) });
    await step(page, "review-run", async () => {
      await quickOpen(page, "a.txt"); // a.txt is open: the run's edits land in its buffer
      await panel.locator("#new").click();
      await panel.locator("#model").selectOption("review-edits");
      await panel.locator("#mode").selectOption("full");
      await page.locator(".statusbar-item", { hasText: "full" }).first().waitFor({ timeout: STEP_MS });
      await sendAndWait(panel, "Edit a.txt and b.txt.");
      await panel.locator("#mode").selectOption("ask");
      assert.equal(fs.readFileSync(a, "utf8"), A, "a.txt's edits are in its buffer");
      assert.equal(fs.readFileSync(b, "utf8"), B.replace("charlie", "CHARLIE").replace("india", "INDIA"));
      await panel.locator(".end button.review").last().click();
      await page
        .locator(".tab", { hasText: "a.txt: before the run ↔ now (Kgent review)" })
        .waitFor({ timeout: STEP_MS });
      await page
        .locator(".tab", { hasText: "b.txt: before the run ↔ now (Kgent review)" })
        .waitFor({ timeout: STEP_MS });
    });
    await step(page, "review-b", async () => {
      // b.txt's diff is in front: its two hunks, each with Accept and Reject.
      await lens("Accept").nth(1).waitFor({ timeout: STEP_MS });
      await shot(page, "review-diff");
      await lens("Accept").first().click();
      await waitForCount(lens("Accept"), 1);
      await lens("Accept").first().click();
      await waitForCount(lens("Accept"), 0);
    });
    await step(page, "review-a", async () => {
      await page.locator(".tab", { hasText: "a.txt: before the run ↔ now (Kgent review)" }).click();
      await waitForCount(lens("Accept"), 2);
      await lens("Accept").first().click(); // beta → BETA: kept
      await waitForCount(lens("Accept"), 1);
      await lens("Reject").first().click(); // hotel → HOTEL: reverted, in the buffer
      await page
        .locator(".notifications-toasts .notification-toast", { hasText: "review done" })
        .first()
        .waitFor({ timeout: STEP_MS });
      assert.equal(fs.readFileSync(b, "utf8"), B.replace("charlie", "CHARLIE").replace("india", "INDIA"));
      assert.equal(fs.readFileSync(a, "utf8"), A, "not saved yet");
      await palette(page, "File: Save All");
      await waitFor(
        () => fs.readFileSync(a, "utf8") === A.replace("beta", "BETA"),
        "a.txt saved with 1 of its 2 changes",
      );
    });
  });

  test("plan and sub-agent: one plan card updated in place; a sub-agent's cards under its task, its approval naming it", async () => {
    assert.ok(ide);
    fs.writeFileSync(path.join(ide.workspace, "sample.py"), SAMPLE);
    await step(page, "plan", async () => {
      await panel.locator("#new").click();
      await panel.locator("#model").selectOption("plan");
      await page.locator(".statusbar-item", { hasText: "plan" }).first().waitFor({ timeout: STEP_MS });
      await panel.locator("#input").fill("What does sample.py print?");
      await submit(panel);
      await panel.locator(".end.status-settled").first().waitFor({ timeout: STEP_MS });
      assert.equal(await panel.locator(".card.plan").count(), 1);
      const entries = panel.locator(".card.plan .plan-entry");
      assert.equal(await entries.count(), 2);
      assert.equal(await panel.locator(".card.plan .plan-entry.status-completed").count(), 2);
      assert.match(await panel.locator(".card.plan .card-title").innerText(), /2\/2 done/);
    });
    await shot(page, "panel-plan");
    await step(page, "sub-agent", async () => {
      await panel.locator("#new").click();
      await panel.locator("#model").selectOption("task");
      await page.locator(".statusbar-item", { hasText: "task" }).first().waitFor({ timeout: STEP_MS });
      await panel.locator("#input").fill("What does sample.py print? Ask a sub-agent.");
      await submit(panel);
      const card = panel.locator(".card.approval.pending").first();
      await card.waitFor({ timeout: STEP_MS });
      assert.match(await card.locator(".card-title").innerText(), /Sub-agent “Check sample\.py” wants to:/);
      await panel
        .locator("details.tool.sub .agent", { hasText: "Check sample.py" })
        .first()
        .waitFor({ timeout: STEP_MS });
      await shot(page, "panel-subagent-approval");
      await card.locator("button.opt", { hasText: "Allow once" }).first().click();
      await panel.locator(".end.status-settled").first().waitFor({ timeout: STEP_MS });
      assert.match(await panel.locator("#log").innerText(), /it prints 1/);
    });
  });

  test("restricted mode: the panel and the commands say why Kgent is off", async () => {
    const restricted = await startCodeServer(vsix, false);
    const p = await openWorkbench(restricted);
    try {
      await step(p, "restricted", async () => {
        await palette(p, "Kgent: Focus Panel");
        const f = panelFrame(p);
        await f.locator("#trust:not([hidden])").waitFor({ timeout: STEP_MS });
        assert.match(await f.locator("#trust").innerText(), /Restricted Mode/);
        // The input and its buttons are off, and say why.
        assert.equal(await f.locator("#input").isDisabled(), true);
        assert.equal(await f.locator("#send").isDisabled(), true);
        assert.equal(await f.locator("#attach").isDisabled(), true);
        assert.match((await f.locator("#input").getAttribute("placeholder")) ?? "", /off in Restricted Mode/);
        // Off, and nothing says otherwise: no promise about approvals, and the status bar says off, not idle.
        assert.doesNotMatch(await f.locator("#log").innerText(), /asks|approv/i);
        await statusItem(p, "Kgent: off (Restricted Mode)");
        assert.equal(await p.locator(".statusbar-item", { hasText: "Kgent: idle" }).count(), 0);
        await palette(p, "Kgent: Run Task");
        await p
          .locator(".notifications-toasts .notification-toast", { hasText: "Restricted Mode" })
          .first()
          .waitFor({ timeout: STEP_MS });
      });
    } finally {
      await p.close();
      await stopCodeServer(restricted);
    }
  });
});

describe("Kgent in a real VS Code: the first hour (issue 29)", {
  timeout: 30 * 60_000,
  skip: skipped("first-hour"),
}, () => {
  let ide: Instance | undefined;
  let page: Page;
  let panel: FrameLocator;
  const timings: Record<string, number> = {};

  /** New, then wait for the page to show the empty conversation (its state arrives asynchronously). */
  async function newConversation(): Promise<void> {
    await panel.locator("#new").click();
    await panel.locator("#empty:not([hidden])").waitFor({ timeout: STEP_MS });
    await panel.locator("#session", { hasText: "New conversation" }).waitFor({ timeout: STEP_MS });
  }

  /** The panel, opened if an earlier test did not get that far. */
  async function openPanel(): Promise<void> {
    await palette(page, "Kgent: Focus Panel");
    panel = panelFrame(page);
    await panel.locator("#input").waitFor({ timeout: STEP_MS });
  }

  before(async () => {
    ide = await startCodeServer(buildVsix(), true);
    page = await openWorkbench(ide);
  });

  after(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.writeFileSync(path.join(ARTIFACTS, "latency.json"), `${JSON.stringify(timings, null, 2)}\n`);
    console.log(`keypress → first line in the panel (ms): ${JSON.stringify(timings)}`);
    await page?.close().catch(() => undefined);
    await stopCodeServer(ide);
  });

  test("startup: the Kgent icon clicked first opens a live panel at once; the status bar item, unclicked", async () => {
    // Two fresh workbenches: one where the person clicks Kgent's activity bar icon as soon as the workbench is there
    // (the icon is the manifest's, before any activation), one where nobody touches Kgent.
    for (const click of [true, false]) {
      const fresh = await startCodeServer(buildVsix(), true);
      assert.ok(browser);
      const p = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      try {
        await step(p, click ? "startup-click" : "startup-idle", async () => {
          await p.goto(fresh.url);
          await p.locator(".monaco-workbench").waitFor({ timeout: STEP_MS });
          const t0 = Date.now();
          if (click) {
            await p.locator('.activitybar .action-label[aria-label^="Kgent"]').first().click();
            await panelFrame(p).locator("#input").waitFor({ timeout: STEP_MS });
            timings.startupClickToPanel = Date.now() - t0;
          }
          await p.locator(".statusbar-item", { hasText: "Kgent" }).first().waitFor({ timeout: STEP_MS });
          timings[click ? "startupClickToStatusBar" : "startupWorkbenchToStatusBar"] = Date.now() - t0;
        });
      } finally {
        await p.close();
        await stopCodeServer(fresh);
      }
    }
  });

  test("prewarm at activation; Enter → first line warm and cold; a run lost with the daemon ends its tool card", async () => {
    assert.ok(ide);
    const i = ide;
    await step(page, "prewarm", async () => {
      // No Kgent command yet and the panel not shown: the daemon is already running (started at activation).
      await waitFor(() => daemonPids(i).length === 1, "the daemon started at activation");
      await palette(page, "Kgent: Focus Panel");
      panel = panelFrame(page);
      await panel.locator("#model option[value='hello']").waitFor({ state: "attached", timeout: STEP_MS });
      await panel.locator("#model").selectOption("hello");
      await statusItem(page, "hello");
      timings.warmAfterPrewarm = await enterToFirstLine(panel, "Say hello.");
      await panel.locator(".end").nth(0).waitFor({ timeout: STEP_MS });
      timings.warm = await enterToFirstLine(panel, "Say hello again.");
      await panel.locator(".end").nth(1).waitFor({ timeout: STEP_MS });
      assert.equal(daemonPids(i).length, 1, "the same daemon");
    });
    await step(page, "lost", async () => {
      await newConversation();
      await panel.locator("#mode").selectOption("full");
      await statusItem(page, "full");
      await panel.locator("#model").selectOption("long-bash");
      await statusItem(page, "long-bash");
      await panel.locator("#input").fill("Run the long command.");
      await submit(panel);
      await panel
        .locator("details.tool.status-in_progress pre.output", { hasText: "started" })
        .first()
        .waitFor({ timeout: STEP_MS });
      const killed = daemonPids(i);
      for (const pid of killed) process.kill(pid, "SIGKILL");
      // The card of the command that was running ends (failed, saying it was lost), not "running" for ever.
      const card = panel.locator("details.tool.status-failed", { hasText: "sleep 60" }).first();
      await card.waitFor({ timeout: STEP_MS });
      assert.match(await card.locator("pre.output").innerText(), /lost: /);
      assert.equal(await panel.locator("details.tool.status-in_progress").count(), 0);
      // The crash restarts the daemon at once (277d8cd): a new process, and the status bar back to idle — no
      // "daemon stopped" left once it is up again.
      await waitFor(() => {
        const now = daemonPids(i);
        return now.length === 1 && !killed.includes(now[0]);
      }, "the daemon restarted after the crash");
      await statusItem(page, "Kgent: idle");
      assert.equal(await page.locator(".statusbar-item", { hasText: "daemon stopped" }).count(), 0);
    });
    await step(page, "cold", async () => {
      await panel.locator("#mode").selectOption("ask");
      await statusItem(page, "ask");
      await panel.locator("#model").selectOption("hello");
      await statusItem(page, "hello");
      await newConversation();
      // The first message to the daemon restarted after the crash: a fresh process, the cold case.
      timings.cold = await enterToFirstLine(panel, "Say hello after the crash.");
      await panel.locator(".end").first().waitFor({ timeout: STEP_MS });
      timings.warmAfterCold = await enterToFirstLine(panel, "And once more.");
      await panel.locator(".end").nth(1).waitFor({ timeout: STEP_MS });
    });
  });

  test("a message that cannot start stays in the input, with a note saying so", async () => {
    await step(page, "cannot-start", async () => {
      await openPanel();
      await newConversation();
      // A model id the scripted provider does not have: agent/run refuses it, the run never starts.
      await palette(page, "Kgent: Choose Model");
      const box = page.locator(".quick-input-widget .quick-input-box input");
      await box.waitFor({ timeout: STEP_MS });
      await box.fill("no-such-script");
      await page
        .locator(".quick-input-list .monaco-list-row", { hasText: "use this model id" })
        .first()
        .waitFor({ timeout: STEP_MS });
      await page.keyboard.press("Enter");
      await statusItem(page, "no-such-script");
      await panel.locator("#input").fill("Keep this message.");
      await panel.locator("#input").press("Enter");
      await panel.locator(".note.error", { hasText: "back in the input" }).waitFor({ timeout: STEP_MS });
      await waitForValue(panel, "Keep this message.");
      assert.equal(await panel.locator(".msg.user").count(), 0);
      await panel.locator("#model").selectOption("hello");
      await statusItem(page, "hello");
      await sendAndWait(panel, "Keep this message.");
    });
  });

  test("Choose Model takes a typed id; pick + Enter runs the picked model; a resumed session keeps its own; tables render", async () => {
    assert.ok(ide);
    const script = path.join(ide.root, "typed-model.json");
    fs.writeFileSync(
      script,
      JSON.stringify([
        [{ text: "An answer from the typed model:\n\n| file | lines |\n|---|---|\n| sample.py | 2 |\n" }],
      ]),
    );
    await step(page, "typed", async () => {
      await openPanel();
      await palette(page, "Kgent: Choose Model");
      const box = page.locator(".quick-input-widget .quick-input-box input");
      await box.waitFor({ timeout: STEP_MS });
      await box.fill(script);
      await page
        .locator(".quick-input-list .monaco-list-row", { hasText: "use this model id" })
        .first()
        .waitFor({ timeout: STEP_MS });
      await page.keyboard.press("Enter");
      await statusItem(page, "typed-model.json");
      await newConversation();
      await sendAndWait(panel, "Who answers?");
      await panel
        .locator(".msg.assistant", { hasText: "An answer from the typed model" })
        .first()
        .waitFor({ timeout: STEP_MS });
      // The answer's Markdown table is a table.
      await panel.locator(".msg.assistant table td", { hasText: "sample.py" }).first().waitFor({ timeout: STEP_MS });
      assert.equal(await panel.locator(".msg.assistant table th").count(), 2);
      await shot(page, "panel-table");
    });
    await step(page, "pick-and-enter", async () => {
      await newConversation();
      await panel.locator("#model").selectOption("hello");
      await panel.locator("#input").fill("Quick.");
      await submit(panel); // at once: before the setting is written
      await panel.locator(".end").first().waitFor({ timeout: STEP_MS });
      const log = await panel.locator("#log").innerText();
      assert.match(log, /Hello from the scripted provider/);
      assert.doesNotMatch(log, /typed model/);
    });
    await step(page, "resumed-own-model", async () => {
      await newConversation();
      await fromHistory(page, panel, "Who answers?");
      await panel
        .locator(".note", { hasText: /^Resumed/ })
        .last()
        .waitFor({ timeout: STEP_MS });
      await waitFor(
        async () => (await panel.locator("#model").inputValue()) === script,
        "the session's own model in the picker",
      );
      await sendAndWait(panel, "And again?");
      assert.equal(await panel.locator(".msg.assistant", { hasText: "An answer from the typed model" }).count(), 2);
      assert.doesNotMatch(await panel.locator("#log").innerText(), /Hello from the scripted provider/);
    });
  });

  test("a section per run (panel and Run Task at once), each saying it loaded AGENTS.md; the session line, its total and the sandbox; Reject All Changes of the Run warns", async () => {
    assert.ok(ide);
    const i = ide;
    // The project's instructions: each new session's first run reads them, and its section says so.
    fs.writeFileSync(path.join(i.workspace, "AGENTS.md"), "# Notes for agents\n\nKeep sample.py short.\n");
    await step(page, "sections", async () => {
      await openPanel();
      await newConversation();
      assert.match(await panel.locator("#session").innerText(), /New conversation/);
      await panel.locator("#model").selectOption("tool-loop");
      await statusItem(page, "tool-loop");
      await panel.locator("#input").fill("Change value to 2 in sample.py.");
      await submit(panel);
      await panel.locator(".card.approval.pending").first().waitFor({ timeout: STEP_MS });
      // While it waits for its approval: Kgent: Run Task from the palette.
      await palette(page, "Kgent: Run Task");
      const box = page.locator(".quick-input-widget .quick-input-box input");
      await box.waitFor({ timeout: STEP_MS });
      await box.fill("A task from the palette.");
      await page.keyboard.press("Enter");
      await waitForCount(panel.locator(".card.approval.pending"), 2);
      await waitForCount(panel.locator(".run-section"), 2);
      const first = panel.locator(".run-section").nth(0);
      const second = panel.locator(".run-section").nth(1);
      assert.match(await first.locator(".run-head").innerText(), /Change value to 2 in sample\.py\./);
      assert.match(await second.locator(".run-head").innerText(), /Run Task ·\s*A task from the palette\./);
      assert.equal(await second.locator(".msg.user", { hasText: "A task from the palette." }).count(), 1);
      // The instructions line: in each run's own section, naming the file from the workspace and what shows it.
      for (const section of [first, second]) {
        const line = section.locator(".note", { hasText: /^Instructions: / });
        await line.first().waitFor({ timeout: STEP_MS });
        assert.equal(await line.count(), 1);
        assert.equal(
          (await line.innerText()).trim(),
          "Instructions: AGENTS.md (the project's) read. Kgent: Open Instructions shows them.",
        );
      }
      // The panel's conversation stays its own (the header does not switch to the other run).
      assert.match(await panel.locator("#session").innerText(), /Conversation: Change value to 2 in sample\.py\./);
      await shot(page, "panel-sections");
      // Reject every call: both runs end, each with its own end line in its own section.
      await waitFor(async () => {
        const pending = panel.locator(".card.approval.pending button.opt", { hasText: /^Reject\b(?! always)/ });
        if ((await pending.count()) > 0)
          await pending
            .first()
            .click()
            .catch(() => undefined);
        return (await panel.locator(".end").count()) === 2;
      }, "both runs to end");
      assert.equal(await first.locator(".end").count(), 1);
      assert.equal(await second.locator(".end").count(), 1);
      const session = await panel.locator("#session").innerText();
      assert.doesNotMatch(session, /Continuing/);
      assert.match(session, /Conversation: Change value to 2 in sample\.py\./);
      assert.match(session, /session total: \d+ in .* out tokens/);
      // How full the model's context is (the scripted provider's window is 32768 tokens).
      assert.match(
        await panel.locator("#session .session-context").innerText(),
        /context [\d.]+k? of 33k tokens \(\d+%\)/,
      );
      assert.match(await panel.locator("#session .sandbox").innerText(), /sandbox/);
    });
    await step(page, "reject-run", async () => {
      await newConversation();
      await panel.locator("#mode").selectOption("full");
      await statusItem(page, "full");
      await panel.locator("#model").selectOption("review-edits");
      await statusItem(page, "review-edits");
      await sendAndWait(panel, "Edit a.txt and b.txt.");
      // The person edits one of the run's changes before rejecting the run.
      const b = path.join(i.workspace, "b.txt");
      fs.writeFileSync(b, fs.readFileSync(b, "utf8").replace("CHARLIE", "Charlie (mine)"));
      // Available without opening Review Changes first.
      await palette(page, "Kgent: Reject All Changes of the Run");
      const dialog = page.locator(".monaco-dialog-box");
      await dialog.waitFor({ timeout: STEP_MS });
      assert.match(await dialog.innerText(), /1 change of the run was edited by you since \(b\.txt\)/);
      await dialog.locator(".monaco-button", { hasText: "Cancel" }).first().click();
      await dialog.waitFor({ state: "detached", timeout: STEP_MS });
      assert.match(fs.readFileSync(b, "utf8"), /Charlie \(mine\)/);
      // The person edits b.txt's other change too, then reviews: its "before the run" side shows the lines before the
      // run (not the person's), and rejecting the file, where nothing can be reverted, says so.
      fs.writeFileSync(b, fs.readFileSync(b, "utf8").replace("INDIA", "India (mine)"));
      await palette(page, "Kgent: Review Changes");
      const bTab = page.locator(".tab", { hasText: "b.txt: before the run ↔ now" }).first();
      await bTab.waitFor({ timeout: STEP_MS });
      await bTab.click();
      const original = page.locator(".monaco-diff-editor .editor.original .view-line");
      await original
        .filter({ hasText: /^charlie$/ })
        .first()
        .waitFor({ timeout: STEP_MS });
      await original
        .filter({ hasText: /^india$/ })
        .first()
        .waitFor({ timeout: STEP_MS });
      assert.equal(await original.filter({ hasText: "(mine)" }).count(), 0, "the person's lines are on the right only");
      await palette(page, "Kgent: Reject All Changes in File");
      await page
        .locator(".notifications-toasts .notification-toast", { hasText: "nothing was rejected" })
        .first()
        .waitFor({ timeout: STEP_MS });
      assert.match(fs.readFileSync(b, "utf8"), /Charlie \(mine\)[\s\S]*India \(mine\)/);
      await panel.locator("#mode").selectOption("ask");
      await statusItem(page, "ask");
    });
  });

  test("concurrent runs in a git work tree (the panel and Run Task): each end line names only the file its run changed", async () => {
    assert.ok(ide);
    const i = ide;
    // Most workspaces are git work trees: there a run's changes come from git snapshots of the whole tree.
    const git = (...args: string[]): void => {
      execFileSync("git", ["-c", "user.name=Kgent Test", "-c", "user.email=test@kgent.invalid", ...args], {
        cwd: i.workspace,
        stdio: "pipe",
      });
    };
    git("init", "-q");
    git("add", "-A");
    git("commit", "-q", "-m", "start");
    const before = fs.readFileSync(path.join(i.workspace, "sample.py"), "utf8");
    await step(page, "concurrent-files", async () => {
      await openPanel();
      await newConversation();
      await panel.locator("#model").selectOption("tool-loop"); // edits sample.py
      await statusItem(page, "tool-loop");
      await panel.locator("#input").fill("Change value to 2 in sample.py.");
      await submit(panel);
      const first = panel.locator(".run-section").nth(0);
      await first.locator(".card.approval.pending").first().waitFor({ timeout: STEP_MS });
      await panel.locator("#model").selectOption("two-writes"); // writes notes.txt
      await statusItem(page, "two-writes");
      await palette(page, "Kgent: Run Task");
      const box = page.locator(".quick-input-widget .quick-input-box input");
      await box.waitFor({ timeout: STEP_MS });
      await box.fill("Write the notes.");
      await page.keyboard.press("Enter");
      await waitForCount(panel.locator(".run-section"), 2);
      const second = panel.locator(".run-section").nth(1);
      await second.locator(".card.approval.pending").first().waitFor({ timeout: STEP_MS });
      const allow = (section: Locator): Locator => section.locator(".card.approval.pending button.opt.allow_once");
      // Each run writes while the other is still running: the panel's edit, then the task's first write.
      await allow(first).first().click();
      await first.locator(".card.approval.pending", { hasText: "grep" }).waitFor({ timeout: STEP_MS }); // the run goes on
      await allow(second).first().click();
      await second.locator(".card.approval.pending", { hasText: "second" }).waitFor({ timeout: STEP_MS }); // its second write
      assert.equal(await panel.locator(".end").count(), 0, "both runs still running");
      await waitFor(async () => {
        const pending = panel.locator(".card.approval.pending button.opt.allow_once");
        if ((await pending.count()) > 0)
          await pending
            .first()
            .click()
            .catch(() => undefined);
        return (await panel.locator(".end").count()) === 2;
      }, "both runs to end");
      assert.equal(
        fs.readFileSync(path.join(i.workspace, "sample.py"), "utf8"),
        before.replace("value = 1", "value = 2"),
      );
      assert.equal(fs.readFileSync(path.join(i.workspace, "notes.txt"), "utf8"), "second\n");
      assert.match(await first.locator(".end").innerText(), /Done · 1 file changed/);
      assert.deepEqual(await first.locator(".end .changed-file").allInnerTexts(), ["sample.py"]);
      assert.match(await second.locator(".end").innerText(), /Done · 1 file changed/);
      assert.deepEqual(await second.locator(".end .changed-file").allInnerTexts(), ["notes.txt"]);
      await panel.locator("#model").selectOption("hello");
      await statusItem(page, "hello");
    });
  });

  test("Kgent's trust of the project is its own: in a folder VS Code trusts, the Permissions view says it is not trusted by Kgent, and how", async () => {
    // This workbench trusts the folder (no Restricted Mode) and the user never trusted the project for Kgent.
    const pane = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Permissions" }) });
    await step(page, "kgent-trust", async () => {
      await openPanel();
      const header = pane.locator(".pane-header");
      if ((await header.getAttribute("aria-expanded")) !== "true") await header.click();
      const message = pane.locator(".message", { hasText: "Kgent does not trust" });
      await message.waitFor({ timeout: STEP_MS });
      const words = await message.innerText();
      assert.match(words, /Kgent does not trust this project's own configuration yet/);
      assert.match(words, /its trust is its own, apart from VS Code's Workspace Trust/);
      assert.match(
        words,
        /To trust it: the Kgent › Trust Project Extensions setting, or “kgent extensions --trust” in the folder\./,
      );
      // A view's message is plain text in VS Code: no Markdown in it to show as literal backticks.
      assert.doesNotMatch(words, /`/);
      // The view folded again: the panel has the side bar to itself for the tests after.
      await header.click();
      await waitFor(async () => (await header.getAttribute("aria-expanded")) === "false", "the view folded");
    });
  });

  test("a daemon that cannot start: the status bar says failed (not idle) until kgent.serverCommand is fixed", async () => {
    assert.ok(ide);
    const settingsFile = path.join(ide.root, "user-data", "User", "settings.json");
    /** settings.json as it is now; undefined while VS Code is part way through rewriting it (its writes are not
     * atomic: a read can land between the truncation and the new text). */
    const settings = (): Record<string, unknown> | undefined => {
      try {
        return JSON.parse(fs.readFileSync(settingsFile, "utf8")) as Record<string, unknown>;
      } catch (error) {
        if (error instanceof SyntaxError) return undefined;
        throw error;
      }
    };
    let before: Record<string, unknown> | undefined;
    await waitFor(() => {
      before = settings();
      return before !== undefined;
    }, "settings.json to be whole");
    const good = before?.["kgent.serverCommand"];
    /** Set kgent.serverCommand in the Settings editor, as a person would; written once settings.json has it. */
    async function setServerCommand(command: string): Promise<void> {
      await palette(page, "Preferences: Open Settings (UI)");
      await page.locator(".settings-editor").waitFor({ timeout: STEP_MS });
      await page.keyboard.type("kgent.serverCommand");
      const input = page
        .locator(".settings-editor .setting-item", { hasText: "Server Command" })
        .locator("input")
        .first();
      await input.waitFor({ timeout: STEP_MS });
      await input.fill(command);
      await input.press("Tab");
      await waitFor(() => settings()?.["kgent.serverCommand"] === command, "settings.json to have the command");
      const tab = page.locator(".tab", { hasText: "Settings" });
      await tab.locator(".codicon-close").click(); // the Settings editor
      await tab.waitFor({ state: "detached", timeout: STEP_MS });
    }
    /** Send until the message meets the new kgent.serverCommand (`attempt` says whether it did), at most 5 times. */
    async function untilConfigured(attempt: () => Promise<boolean | "timeout">): Promise<void> {
      for (let i = 0; i < 5; i++) {
        const met = await attempt();
        if (met === "timeout") assert.fail("neither outcome of the message came");
        if (met) return;
      }
      assert.fail("the extension never used the new kgent.serverCommand");
    }
    // The wait that loses the race times out later: caught, not an unhandled rejection.
    const timedOut = (): "timeout" => "timeout";
    await step(page, "failed-status", async () => {
      await openPanel();
      await newConversation();
      await panel.locator("#model").selectOption("hello");
      await statusItem(page, "hello");
      await statusItem(page, "Kgent: idle");
      await setServerCommand("/nonexistent/kgent serve --stdio");
      // settings.json has it; the extension host hears of the change a moment later (nothing in the page shows
      // when). A message sent before that still goes to the running daemon and ends: send it again.
      await untilConfigured(async () => {
        const ends = await panel.locator(".end").count();
        await panel.locator("#input").fill("Start, please.");
        await panel.locator("#input").press("Enter");
        return await Promise.race([
          statusItem(page, "Kgent: failed").then(() => true, timedOut),
          panel
            .locator(".end")
            .nth(ends)
            .waitFor({ timeout: STEP_MS })
            .then(() => false, timedOut),
        ]);
      });
      assert.equal(await page.locator(".statusbar-item", { hasText: "Kgent: idle" }).count(), 0, "not idle");
      await panel
        .locator(".note.error", { hasText: "could not start the daemon" })
        .first()
        .waitFor({ timeout: STEP_MS });
      await waitForValue(panel, "Start, please.");
      await shot(page, "status-failed");
      // Fixed: the next message starts the daemon, and the status bar is no longer "failed".
      await setServerCommand(String(good));
      await untilConfigured(async () => {
        const [ends, errors] = [await panel.locator(".end").count(), await panel.locator(".note.error").count()];
        await panel.locator("#input").fill("Start, please.");
        await panel.locator("#input").press("Enter");
        return await Promise.race([
          panel
            .locator(".end")
            .nth(ends)
            .waitFor({ timeout: STEP_MS })
            .then(() => true, timedOut),
          panel
            .locator(".note.error")
            .nth(errors)
            .waitFor({ timeout: STEP_MS })
            .then(() => false, timedOut),
        ]);
      });
      await statusItem(page, "Kgent: idle");
      assert.equal(await page.locator(".statusbar-item", { hasText: "Kgent: failed" }).count(), 0, "no longer failed");
    });
  });
});

// KGENT_REAL_SUITE=approvals: issue 25 in its own code-server (rule words on the card, a rule from a compound
// command, the Permissions view, "Accept my version").
describe("Kgent in a real VS Code: approvals people can live with (issue 25)", {
  timeout: 30 * 60_000,
  skip: skipped("approvals"),
}, () => {
  let ide: Instance | undefined;
  let page: Page;
  let panel: FrameLocator;

  async function openPanel(): Promise<void> {
    await palette(page, "Kgent: Focus Panel");
    panel = panelFrame(page);
    await panel.locator("#input").waitFor({ timeout: STEP_MS });
  }

  async function newConversation(): Promise<void> {
    await panel.locator("#new").click();
    await panel.locator("#empty:not([hidden])").waitFor({ timeout: STEP_MS });
    await panel.locator("#session", { hasText: "New conversation" }).waitFor({ timeout: STEP_MS });
  }

  /** Kgent: Choose Model with a typed id (a script file), as a person would. */
  async function useScript(file: string): Promise<void> {
    await palette(page, "Kgent: Choose Model");
    const box = page.locator(".quick-input-widget .quick-input-box input");
    await box.waitFor({ timeout: STEP_MS });
    await box.fill(file);
    await page
      .locator(".quick-input-list .monaco-list-row", { hasText: "use this model id" })
      .first()
      .waitFor({ timeout: STEP_MS });
    await page.keyboard.press("Enter");
    await statusItem(page, path.basename(file));
  }

  function writeScript(name: string, turns: unknown[]): string {
    assert.ok(ide);
    const file = path.join(ide.root, name);
    fs.writeFileSync(file, JSON.stringify(turns));
    return file;
  }

  // The user's config (rules, trusted projects) of this instance's own, not the machine's.
  let configDir = "";
  const savedConfigDir = process.env.KGENT_CONFIG_DIR;

  before(async () => {
    configDir = fs.mkdtempSync(path.join(os.tmpdir(), "kgent-real-config-"));
    process.env.KGENT_CONFIG_DIR = configDir;
    // The project is trusted (kgent.trustProjectExtensions, what VS Code sends the daemon): its own rules count, and
    // the cards offer "… in this project". An application setting: the user's settings, never a workspace's.
    ide = await startCodeServer(buildVsix(), true, { settings: { "kgent.trustProjectExtensions": true } });
    page = await openWorkbench(ide);
  });

  after(async () => {
    await page?.close().catch(() => undefined);
    await stopCodeServer(ide);
    if (savedConfigDir === undefined) delete process.env.KGENT_CONFIG_DIR;
    else process.env.KGENT_CONFIG_DIR = savedConfigDir;
    if (configDir !== "") fs.rmSync(configDir, { recursive: true, force: true });
  });

  test("an always-rule from a compound command: the card says what it creates; the same call next is not asked", async () => {
    const command = "grep -n value sample.py && python3 sample.py";
    const script = writeScript("compound-twice.json", [
      [{ text: "Checking." }, { tool: "bash", args: { command } }],
      [{ text: "Once more." }, { tool: "bash", args: { command } }],
      [{ text: "Both ran." }],
    ]);
    await step(page, "compound-card", async () => {
      await openPanel();
      await useScript(script);
      await newConversation();
      await panel.locator("#input").fill("Check sample.py twice.");
      await submit(panel);
      const card = panel.locator(".card.approval.pending").first();
      await card.waitFor({ timeout: STEP_MS });
      // Every option the daemon offered is a button; each "always" one says the rules it creates, one per command.
      await card.locator("details.more > summary").click();
      const always = card.locator("button.opt[data-option-id='allow_always']");
      await always.waitFor({ timeout: STEP_MS });
      assert.equal(await always.getAttribute("data-scope"), "session");
      const line = card.locator(".rule-line[data-option-id='allow_always']");
      const words = (await line.allInnerTexts()).join("\n");
      assert.equal(await line.locator("code.rule").count(), 2, words);
      assert.match(words, /grep/);
      assert.match(words, /python3 sample\.py/);
      await shot(page, "panel-rule-words");
      await always.click();
      await panel.locator(".end.status-settled").first().waitFor({ timeout: STEP_MS });
    });
    await step(page, "not-asked-again", async () => {
      const log = await panel.locator("#log").innerText();
      assert.match(log, /Both ran\./);
      // One card only: the second, identical call was decided by the rule.
      const bashCards = panel.locator("details.tool", { hasText: "grep -n value" });
      await waitForCount(bashCards, 2);
      assert.match(
        await bashCards.nth(0).locator("summary").innerText(),
        /Answered: Allow .*python3 sample\.py.* this session/,
      );
      assert.match(await bashCards.nth(1).locator("summary").innerText(), /allowed by the session rules? /);
    });
  });

  test("the Permissions view lists the rules by scope; add (a bad rule gets the daemon's message) and remove", async () => {
    assert.ok(ide);
    const i = ide;
    const pane = page.locator(".pane", { has: page.locator(".pane-header", { hasText: "Permissions" }) });
    await step(page, "open-view", async () => {
      await openPanel();
      const header = pane.locator(".pane-header");
      if ((await header.getAttribute("aria-expanded")) !== "true") await header.click();
      await pane.locator(".monaco-list-row", { hasText: "Session" }).first().waitFor({ timeout: STEP_MS });
      // The rule the first test created, with its words.
      await pane.locator(".monaco-list-row", { hasText: "bash(" }).first().waitFor({ timeout: STEP_MS });
      // The view open beside the panel leaves the panel's Send button on screen.
      await shot(page, "permissions-view", DOCS);
      const send = await panelFrame(page).locator("#send").boundingBox();
      const agent = await page
        .locator(".pane", { has: page.locator(".pane-header", { hasText: "Agent" }) })
        .boundingBox();
      assert.ok(send !== null && agent !== null, "the Send button and the Agent view are laid out");
      assert.ok(
        send.y + send.height <= agent.y + agent.height,
        `Send (${JSON.stringify(send)}) inside the Agent view (${JSON.stringify(agent)})`,
      );
    });
    const addRule = async (rule: string): Promise<void> => {
      await pane.locator(".pane-header").hover();
      await pane.locator(".pane-header .action-label[aria-label='Add Permission Rule']").click();
      const box = page.locator(".quick-input-widget .quick-input-box input");
      await box.waitFor({ timeout: STEP_MS });
      await box.fill(rule);
      await page.keyboard.press("Enter");
    };
    const pickRow = async (label: string): Promise<void> => {
      await page.locator(".quick-input-list .monaco-list-row", { hasText: label }).first().click();
    };
    await step(page, "add", async () => {
      await addRule("bash(npm test *)");
      await pickRow("allow");
      await pickRow("project");
      await pane.locator(".monaco-list-row", { hasText: "allow bash(npm test *)" }).waitFor({ timeout: STEP_MS });
      const config = fs.readFileSync(path.join(i.workspace, ".kgent", "config.toml"), "utf8");
      assert.match(config, /npm test \*/);
    });
    await step(page, "bad-rule", async () => {
      await addRule("bash(");
      await pickRow("deny");
      await pickRow("project");
      // The daemon's message, in the rule's input box (kept, to fix), and as an error notification.
      await page
        .locator(".quick-input-widget .quick-input-message", { hasText: /\S/ })
        .first()
        .waitFor({ timeout: STEP_MS });
      assert.equal(await page.locator(".quick-input-widget .quick-input-box input").inputValue(), "bash(");
      await page
        .locator(".notification-toast", { hasText: "the rule was not added" })
        .first()
        .waitFor({ timeout: STEP_MS });
      await page.keyboard.press("Escape");
    });
    await step(page, "remove", async () => {
      const row = pane.locator(".monaco-list-row", { hasText: "allow bash(npm test *)" });
      await row.hover();
      await row.locator(".action-label[aria-label='Remove Permission Rule']").click();
      await row.waitFor({ state: "detached", timeout: STEP_MS });
      assert.doesNotMatch(fs.readFileSync(path.join(i.workspace, ".kgent", "config.toml"), "utf8"), /npm test/);
    });
  });

  test("a 20-call session of ordinary work answered 'always … in this project', then the same work: a handful asked, none again", async () => {
    assert.ok(ide);
    const i = ide;
    const start: Record<string, string> = {
      "src/__init__.py": "",
      "src/app.py": "def add(a, b):\n    return a - b\n",
      "tests/__init__.py": "",
      "tests/test_app.py":
        "import unittest\n\nfrom src.app import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
    };
    const reset = (): void => {
      for (const [rel, text] of Object.entries(start)) {
        fs.mkdirSync(path.dirname(path.join(i.workspace, rel)), { recursive: true });
        fs.writeFileSync(path.join(i.workspace, rel), text);
      }
      fs.rmSync(path.join(i.workspace, "src", "util.py"), { force: true });
    };
    reset();
    const git = (...args: string[]): void => {
      execFileSync("git", ["-c", "user.name=Kgent Test", "-c", "user.email=test@kgent.invalid", ...args], {
        cwd: i.workspace,
        stdio: "pipe",
      });
    };
    if (!fs.existsSync(path.join(i.workspace, ".git"))) git("init", "-q");
    git("config", "user.name", "Kgent Test");
    git("config", "user.email", "test@kgent.invalid");
    git("add", "-A");
    git("commit", "-qm", "start", "--allow-empty");
    const call = (tool: string, args: Record<string, unknown>): unknown[] => [{ text: `${tool}.` }, { tool, args }];
    const bash = (command: string): unknown[] => call("bash", { command });
    const turns = [
      bash("python3 -m unittest -q"),
      bash("grep -rn 'def add' src"),
      call("read", { path: "src/app.py" }),
      call("edit", { path: "src/app.py", oldText: "return a - b", newText: "return a + b" }),
      bash("python3 -m unittest -q"),
      bash("git status --short"),
      bash("git diff"),
      call("edit", {
        path: "tests/test_app.py",
        oldText: "self.assertEqual(add(2, 3), 5)",
        newText: "self.assertEqual(add(2, 3), 5)\n        self.assertEqual(add(-1, 1), 0)",
      }),
      bash("python3 -m unittest -q"),
      bash("grep -rn TODO src tests"),
      call("write", { path: "src/util.py", content: "def double(x):\n    return 2 * x\n" }),
      call("edit", { path: "src/app.py", oldText: "def add(a, b):", newText: "def add(a: int, b: int) -> int:" }),
      bash("python3 -m unittest -v"),
      bash("ls src tests"),
      call("edit", { path: "src/util.py", oldText: "return 2 * x", newText: "return x * 2" }),
      bash("python3 -m unittest -q"),
      bash("git add -A"),
      bash("git commit -qm 'Fix add'"),
      bash("wc -l src/app.py src/util.py"),
      bash("python3 -m unittest -q"),
      [{ text: "Done: add fixed, tested and committed." }],
    ];
    assert.equal(turns.length, 21, "20 calls and the answer");
    const script = writeScript("ordinary-work.json", turns);
    const preference = ["allow_always_project", "allow_always", "allow_once"];
    /** One session of the work; every card answered with the most lasting allow offered. Returns what was asked. */
    const session = async (name: string): Promise<string[]> => {
      const asked: string[] = [];
      await newConversation();
      await panel.locator("#input").fill(`Fix add (${name}).`);
      await submit(panel);
      await waitFor(async () => {
        const card = panel.locator(".card.approval.pending").first();
        if ((await card.count()) > 0) {
          const title =
            (await card.locator(".card-title").innerText()) +
            ((await card.locator("pre.command").count()) > 0
              ? ` ${await card.locator("pre.command").innerText()}`
              : "");
          for (const id of preference) {
            const b = card.locator(`button.opt[data-option-id='${id}']`);
            if ((await b.count()) > 0) {
              asked.push(`${title.replace(/\s+/g, " ").trim()} → ${id}`);
              const rid = await card.getAttribute("data-request-id");
              if (!(await b.isVisible())) await card.locator("details.more > summary").click(); // a lasting answer
              await b.click();
              // This card, not the next one (the next call's card may already be there).
              await panel
                .locator(`.card.approval.pending[data-request-id='${rid}']`)
                .waitFor({ state: "detached", timeout: STEP_MS });
              break;
            }
          }
        }
        return (await panel.locator(".end").count()) > 0;
      }, `the end of ${name}`);
      assert.match(await panel.locator(".end").first().innerText(), /Done/);
      return asked;
    };
    let first: string[] = [];
    let second: string[] = [];
    await step(page, "first-session", async () => {
      await openPanel();
      await useScript(script);
      first = await session("first session");
    });
    const rulesFile = path.join(i.workspace, ".kgent", "config.toml");
    const rules = fs.existsSync(rulesFile) ? fs.readFileSync(rulesFile, "utf8") : "";
    await step(page, "second-session", async () => {
      reset();
      second = await session("second session");
    });
    const measure = {
      calls: 20,
      askedFirst: first.length,
      askedSecond: second.length,
      first,
      second,
      projectRules: rules,
    };
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.writeFileSync(path.join(ARTIFACTS, "approvals-measure.json"), `${JSON.stringify(measure, null, 2)}\n`);
    console.log(`approvals asked: first session ${first.length}, second ${second.length}\n${rules}`);
    assert.ok(first.length > 0, "the first session asks");
    assert.ok(second.length < first.length, JSON.stringify(measure, null, 2));
    // None of the second session's questions repeats one answered 'always … in this project' the first time.
    const repeated = second.filter((q) => first.includes(q.replace(/→ .*/, "→ allow_always_project")));
    assert.deepEqual(repeated, [], JSON.stringify(measure, null, 2));
  });

  test("Accept my version: the edited proposal lands on disk and the model is told the change", async () => {
    assert.ok(ide);
    const i = ide;
    fs.writeFileSync(path.join(i.workspace, "sample.py"), SAMPLE);
    await step(page, "edit-card", async () => {
      await openPanel();
      await newConversation();
      await panel.locator("#model").selectOption("tool-loop");
      await statusItem(page, "tool-loop");
      await panel.locator("#input").fill("Change value to 2 in sample.py.");
      await submit(panel);
      const card = panel.locator(".card.approval.pending").first();
      await card.waitFor({ timeout: STEP_MS });
      // Its diff opens by itself, the proposed side editable.
      await card.locator("button.open-diff", { hasText: "editable" }).waitFor({ timeout: STEP_MS });
      await page.locator(".tab", { hasText: "sample.py: current ↔ proposed" }).waitFor({ timeout: STEP_MS });
    });
    await step(page, "edit-proposal", async () => {
      // The proposed side is an ordinary editable document: the person changes the proposed line.
      const modified = page.locator(".monaco-diff-editor .editor.modified");
      await modified.locator(".view-line", { hasText: "value = 2" }).first().click();
      await page.keyboard.press("End");
      await page.keyboard.type("  # mine");
      await modified.locator(".view-line", { hasText: "value = 2  # mine" }).first().waitFor({ timeout: STEP_MS });
      // The card offers the person's version too.
      await panel.locator(".card.approval.pending button.accept-mine").waitFor({ timeout: STEP_MS });
      await shot(page, "approval-edited");
    });
    await step(page, "accept-mine", async () => {
      // Allow in the diff's title bar allows the person's version.
      await page.locator('.editor-actions .action-label[aria-label="Allow"]').first().click();
      await waitFor(
        () => fs.readFileSync(path.join(i.workspace, "sample.py"), "utf8") === "value = 2  # mine\nprint(value)\n",
        "the person's version on disk",
      );
      // The preview closes with the answer (saved first: nothing asks), and the run goes on to its command.
      await page
        .locator(".tab", { hasText: "sample.py: current ↔ proposed" })
        .waitFor({ state: "detached", timeout: STEP_MS });
      const bash = panel.locator(".card.approval.pending", { hasText: "grep" }).first();
      await bash.waitFor({ timeout: STEP_MS });
      await bash
        .locator("button.opt", { hasText: /^Reject\b(?! always)/ })
        .first()
        .click();
      await panel.locator(".end").first().waitFor({ timeout: STEP_MS });
    });
    await step(page, "model-told", async () => {
      const edit = panel.locator("details.tool", { hasText: "sample.py" }).filter({ hasText: "your changes" }).first();
      await edit.waitFor({ timeout: STEP_MS });
      if ((await edit.getAttribute("open")) === null) await edit.locator("summary").click();
      // The tool result (what the model reads next): the diff from its proposal to what was written.
      const output = await edit.locator("pre.output").innerText();
      assert.match(output, /\+value = 2 {2}# mine/);
      assert.match(output, /-value = 2$/m);
    });
  });
});

describe("Kgent in a real VS Code: slash commands (issue 26)", {
  timeout: 20 * 60_000,
  skip: skipped("slash"),
}, () => {
  let ide: Instance | undefined;
  let page: Page;
  let models: ChildProcess | undefined;
  let modelUrl = "";

  before(async () => {
    // The local model server (kgent.testing) speaking the OpenAI wire format: the daemon's provider is real HTTP.
    const server = spawn(path.join(REPO, ".venv", "bin", "python"), ["-m", "kgent.testing", "--script", "hello"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    models = server;
    modelUrl = await new Promise<string>((resolve, reject) => {
      let out = "";
      server.stdout?.on("data", (b: Buffer) => {
        out += b.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m !== null) resolve(m[1]);
      });
      server.once("exit", (code) => reject(new Error(`the model server exited (${code})`)));
    });
    ide = await startCodeServer(buildVsix(), true, {
      settings: { "kgent.provider": "openai", "kgent.baseUrl": `${modelUrl}/v1`, "kgent.model": "test-model" },
      env: {
        KGENT_API_KEY: "sk-local-model-server",
        KGENT_CONFIG_DIR: path.join(os.tmpdir(), `kgent-real-config-${process.pid}`),
      },
    });
    fs.mkdirSync(path.join(ide.workspace, ".kgent", "prompts"), { recursive: true });
    fs.writeFileSync(
      path.join(ide.workspace, ".kgent", "prompts", "explain.md"),
      "---\ndescription: Explain a file\nargument-hint: <path>\n---\nExplain $1 please.\n",
    );
    page = await openWorkbench(ide);
  });

  after(async () => {
    await page?.close().catch(() => undefined);
    await stopCodeServer(ide);
    models?.kill("SIGTERM");
  });

  test("/ in the composer lists the commands; a picked template runs and its expansion reaches the model server", async () => {
    let panel: FrameLocator | undefined;
    await step(page, "slash-open-panel", async () => {
      await palette(page, "Kgent: Focus Panel");
      panel = panelFrame(page);
      await panel.locator("#input").waitFor({ timeout: STEP_MS });
    });
    assert.ok(panel);
    const input = panel.locator("#input");
    const items = panel.locator("#slash-menu .slash-item");
    await step(page, "slash-menu", async () => {
      await input.click();
      await input.pressSequentially("/");
      await waitFor(async () => (await items.count()) >= 4, "the slash menu");
      const names = await items.evaluateAll((els) => els.map((e) => e.getAttribute("data-name")));
      for (const n of ["compact", "init", "review", "help", "explain"])
        assert.ok(names.includes(n), `offers /${n}: ${names.join(", ")}`);
      // Each says what it does in the person's words: no protocol method ("as agent/compact") leaks into the menu.
      const descriptions = await items.locator(".slash-desc").allInnerTexts();
      assert.equal(descriptions.length, names.length);
      for (const d of descriptions) {
        assert.match(d, /^\s*— \S/, "a description");
        assert.doesNotMatch(d, /agent\//, `a protocol name in the menu: ${d}`);
      }
      await input.pressSequentially("ex");
      await waitForCount(items, 1);
      assert.match(await items.first().innerText(), /\/explain <path> — Explain a file \(project\)/);
    });
    await shot(page, "panel-slash");
    await step(page, "slash-pick-and-run", async () => {
      // Enter picks the command (nothing is sent yet): the input then reads `/explain `.
      await pressUntil(input, "Enter", async () => (await input.inputValue()) === "/explain ", "the pick of /explain");
      assert.equal(await panel?.locator("#slash-menu").isHidden(), true, "the menu closed");
      await input.pressSequentially("app.py");
      const ends = await (panel as FrameLocator).locator(".end").count();
      await submit(panel as FrameLocator);
      await (panel as FrameLocator).locator(".end").nth(ends).waitFor({ timeout: STEP_MS });
      // The message reads as it was typed, not as the template it expands to (issue 40).
      const p = panel as FrameLocator;
      assert.equal((await p.locator(".msg.user .text").last().innerText()).trim(), "/explain app.py");
      // The session lines: two at most in the side bar, whatever they hold (issue 40: they wrapped to four).
      assert.match(await p.locator("#session .session-label").innerText(), /Conversation: \/explain app\.py/);
      const line = await p.locator("#session .session-label").boundingBox();
      const lines = await p.locator("#session").boundingBox();
      assert.ok(line !== null && lines !== null && lines.height < 2.6 * line.height, `${lines?.height} px high`);
    });
    await step(page, "slash-model-request", async () => {
      const recorded = (await (await fetch(`${modelUrl}/_kgent/requests`)).json()) as { requests: { body: string }[] };
      assert.ok(recorded.requests.length > 0, "the model server was asked");
      const body = JSON.parse(recorded.requests[recorded.requests.length - 1].body) as {
        messages: { role: string; content: unknown }[];
      };
      const users = body.messages
        .filter((m) => m.role === "user")
        .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
      assert.ok(
        users.some((t) => t.includes("Explain app.py please.")),
        `the expansion reached the model: ${users.join(" | ")}`,
      );
      assert.ok(!users.some((t) => t.includes("/explain")), "not the typed command");
    });
  });

  test("/help, /cost and /mode answer in the panel without a run; Export Session opens Markdown; /compact + Enter compacts", async () => {
    const panel = panelFrame(page);
    const input = panel.locator("#input");
    const notes = panel.locator(".note");
    const ends = panel.locator(".end");
    const users = panel.locator(".msg.user");
    // The status bar's mode item (its icon tells it from the others: "ask" is in other words too).
    const modeItem = page.locator(".statusbar-item", { has: page.locator(".codicon-shield") });
    const PROMPT = "Say hello for the export.";
    /** Send `text` from the composer and wait for the note it adds; its text. */
    const command = async (text: string): Promise<string> => {
      const n = await notes.count();
      await input.fill(text);
      await submit(panel);
      await notes.nth(n).waitFor({ timeout: STEP_MS });
      return notes.nth(n).innerText();
    };
    const modeIs = (mode: string) =>
      waitFor(async () => (await modeItem.innerText()).trim() === mode, `the status bar's mode to be ${mode}`);
    let endsBefore = 0;
    let usersBefore = 0;
    await step(page, "slash-help", async () => {
      await palette(page, "Kgent: Focus Panel");
      await input.waitFor({ timeout: STEP_MS });
      await modeIs("ask");
      endsBefore = await ends.count();
      usersBefore = await users.count();
      const help = await command("/help");
      assert.match(help, /\/cost/, `the note lists the commands: ${help}`);
      assert.equal(await users.count(), usersBefore, "no message sent for /help");
      assert.equal(await ends.count(), endsBefore, "no run for /help");
      await waitForValue(panel, "");
    });
    await step(page, "slash-cost", async () => {
      // A run after /help: its end is the panel's next (a run of /help's would have ended first), its message the
      // only new one.
      await sendAndWait(panel, PROMPT);
      assert.equal(await ends.count(), endsBefore + 1, "one run: the prompt's");
      const texts = await users.locator(".text").allInnerTexts();
      assert.equal(texts.length, usersBefore + 1, `one message more: ${texts.join(" | ")}`);
      assert.equal(texts[texts.length - 1], PROMPT);
      const cost = await command("/cost");
      assert.match(cost, /This session so far:/);
    });
    await step(page, "slash-mode", async () => {
      assert.match(await command("/mode plan"), /plan/);
      await modeIs("plan");
      await waitFor(async () => (await panel.locator("#mode").inputValue()) === "plan", "the panel's mode picker");
      assert.match(await command("/mode ask"), /ask/);
      await modeIs("ask");
      await waitFor(async () => (await panel.locator("#mode").inputValue()) === "ask", "the panel's mode picker");
      assert.equal(await ends.count(), endsBefore + 1, "no run for /cost or /mode");
    });
    await step(page, "slash-export", async () => {
      await palette(page, "Kgent: Export Session");
      const widget = page.locator(".quick-input-widget");
      const rows = widget.locator(".quick-input-list .monaco-list-row");
      await widget.locator(".quick-input-title", { hasText: "export the session as" }).waitFor({ timeout: STEP_MS });
      await waitForCount(rows, 3);
      const labels = await rows.locator(".label-name").allInnerTexts();
      assert.deepEqual(labels, ["Markdown", "HTML", "JSON"]);
      await widget.locator(".quick-input-box input").fill("Markdown");
      await waitForCount(rows, 1);
      await page.keyboard.press("Enter");
      await page.locator(".tab.active", { hasText: "Untitled" }).waitFor({ timeout: STEP_MS });
      const lines = page.locator(".editor-group-container.active .monaco-editor .view-lines");
      let text = "";
      await waitFor(async () => {
        text = (await lines.innerText()).replace(/\u00a0/g, " ");
        return text.includes(PROMPT);
      }, "the exported session in the new editor");
      assert.match(text, /^# /m, `a Markdown title: ${text}`);
      assert.match(text, /^## /m, `Markdown sections: ${text}`);
    });
    await step(page, "slash-compact", async () => {
      // `/compact` typed in full, its menu open: Enter sends it (the compaction runs), it does not only complete it.
      await palette(page, "Kgent: Focus Panel");
      await input.waitFor({ timeout: STEP_MS });
      // The open menu's items: a closed menu keeps its last items, hidden (here /cost's), until the new list arrives.
      const items = panel.locator("#slash-menu:not([hidden]) .slash-item");
      const before = await ends.count();
      await input.click();
      await input.pressSequentially("/compact");
      await waitForCount(items, 1);
      assert.equal(await items.first().getAttribute("data-name"), "compact");
      await submit(panel);
      await ends.nth(before).waitFor({ timeout: STEP_MS });
      assert.equal(await panel.locator("#slash-menu").isHidden(), true, "the menu closed");
      // The compaction's own words (a run of its own: no model turn of the agent).
      await panel
        .locator(".msg.assistant", { hasText: /^(Compacted the context|Nothing to compact yet)/ })
        .last()
        .waitFor({ timeout: STEP_MS });
      assert.equal(await ends.count(), before + 1, "one run: the compaction");
    });
  });
});

describe("Kgent in a real VS Code: Restore checkpoint (issue 26)", {
  timeout: 30 * 60_000,
  skip: skipped("rewind"),
}, () => {
  let ide: Instance | undefined;
  let page: Page;
  let panel: FrameLocator;

  before(async () => {
    ide = await startCodeServer(buildVsix(), true);
    page = await openWorkbench(ide);
  });

  after(async () => {
    await page?.close().catch(() => undefined);
    await stopCodeServer(ide);
  });

  test("Restore checkpoint: the modal lists the plan, the files come back (the sed too, in git), the conflict stays, forked", async () => {
    assert.ok(ide);
    const ws = ide.workspace;
    const C = "charlie\ndelta\necho\n";
    fs.writeFileSync(path.join(ws, "c.txt"), C);
    execFileSync("git", ["init", "-q"], { cwd: ws, stdio: "pipe" });
    const mine = `${B.replace("charlie", "CHARLIE")}the user's line\n`;
    await step(page, "rewind-run", async () => {
      await palette(page, "Kgent: Focus Panel");
      panel = panelFrame(page);
      await panel.locator("#input").waitFor({ timeout: STEP_MS });
      await panel.locator("#model option[value='rewind-edits']").waitFor({ state: "attached", timeout: STEP_MS });
      await panel.locator("#model").selectOption("rewind-edits");
      await panel.locator("#mode").selectOption("full");
      await statusItem(page, "full");
      await sendAndWait(panel, "Change them.");
      assert.equal(fs.readFileSync(path.join(ws, "c.txt"), "utf8"), C.replace("delta", "DELTA"), "the sed ran");
      fs.writeFileSync(path.join(ws, "b.txt"), mine); // the person's edit after the run
    });
    await step(page, "rewind-modal", async () => {
      const user = panel.locator(".msg.user").first();
      await user.hover();
      await user.locator("button.restore-checkpoint").click();
      const dialog = page.locator(".monaco-dialog-box");
      await dialog.waitFor({ timeout: STEP_MS });
      const text = await dialog.innerText();
      assert.match(text, /before “Change them\.”/);
      for (const line of [
        "restore: a.txt",
        // the daemon's reason in a person's words (the prompt, no run id); "left as it is" said once
        "conflict — left as it is: b.txt (changed since the agent wrote it for “Change them.”)",
        "restore: c.txt",
        "restore: new.txt",
      ]) {
        assert.ok(text.includes(line), `the modal lists ${line}: ${text}`);
      }
      assert.doesNotMatch(text, /run-[0-9a-f]|left as it is.*left as it is/);
      await dialog.locator(".monaco-button", { hasText: "Restore" }).click();
      const note = panel.locator(".note", { hasText: "Restored the checkpoint" });
      await note.waitFor({ timeout: STEP_MS });
      // It completed (the conflict stays, as the note says): not shown as a failure.
      assert.equal(await note.getAttribute("class"), "note info");
    });
    await step(page, "rewind-restored", async () => {
      assert.equal(fs.readFileSync(path.join(ws, "a.txt"), "utf8"), A);
      assert.equal(fs.readFileSync(path.join(ws, "c.txt"), "utf8"), C);
      assert.equal(fs.existsSync(path.join(ws, "new.txt")), false);
      assert.equal(fs.readFileSync(path.join(ws, "b.txt"), "utf8"), mine, "the conflict left alone");
      assert.equal(await panel.locator(".msg.user").count(), 0, "forked before the only message");
      await waitForValue(panel, "Change them.");
    });
  });
});

// KGENT_REAL_SUITE=diagnostics: diagnostics after edits (issue 42) from a language extension as people install them —
// vscode-languageclient from npm wrapping the real `ruff server` (test-real/ruff-client) — beside Kgent's.
describe("Kgent in a real VS Code: a language server's diagnostics on the edit's card (issue 42)", {
  timeout: 30 * 60_000,
  skip: skipped("diagnostics"),
}, () => {
  let ide: Instance | undefined;
  let page: Page;
  let panel: FrameLocator;
  let ruffVsix = "";
  let configDir = "";

  before(async () => {
    ruffVsix = buildRuffClientVsix();
    // An empty user config: no language servers of Kgent's own ([language_servers]), so the findings can only come
    // from the editor's.
    configDir = fs.mkdtempSync(path.join(os.tmpdir(), "kgent-real-config-"));
    ide = await startCodeServer(buildVsix(), true, {
      extensions: [ruffVsix],
      env: {
        KGENT_CONFIG_DIR: configDir,
        KGENT_TEST_RUFF: process.env.KGENT_TEST_RUFF ?? path.join(REPO, ".venv", "bin", "ruff"),
      },
    });
    page = await openWorkbench(ide);
  });

  after(async () => {
    await page?.close().catch(() => undefined);
    await stopCodeServer(ide);
    if (ruffVsix !== "") fs.rmSync(ruffVsix, { force: true });
    if (configDir !== "") fs.rmSync(configDir, { recursive: true, force: true });
  });

  /** A tool card open, as a person reads it (a card stays open when it was open while running; else click it). */
  async function openCard(card: Locator): Promise<void> {
    if ((await card.getAttribute("open")) === null) await card.locator("summary").click();
    await waitFor(async () => (await card.getAttribute("open")) !== null, "the tool card to open");
  }

  test("ruff server in VS Code: the breaking edit's card and result show F821, the fixing edit's say no new problems", async () => {
    assert.ok(ide);
    const script = path.join(ide.root, "break-then-fix.json");
    const edit = (oldText: string, newText: string) => ({
      tool: "edit",
      args: { path: "sample.py", oldText, newText },
    });
    fs.writeFileSync(
      script,
      JSON.stringify([
        [{ text: "Printing another name." }, edit("print(value)", "print(undefined_name)")],
        [{ text: "That name is not defined; back to value." }, edit("print(undefined_name)", "print(value)")],
        [{ text: "sample.py prints value again." }],
      ]),
    );
    await step(page, "language-server", async () => {
      // Opening a Python file activates the language extension; its client starts `ruff server` on the file.
      await quickOpen(page, "sample.py");
      await statusItem(page, "ruff server ready");
    });
    await step(page, "run", async () => {
      await palette(page, "Kgent: Focus Panel");
      panel = panelFrame(page);
      await panel.locator("#input").waitFor({ timeout: STEP_MS });
      // The script as the model: Kgent: Choose Model with a typed id, as a person would.
      await palette(page, "Kgent: Choose Model");
      const box = page.locator(".quick-input-widget .quick-input-box input");
      await box.waitFor({ timeout: STEP_MS });
      await box.fill(script);
      await page
        .locator(".quick-input-list .monaco-list-row", { hasText: "use this model id" })
        .first()
        .waitFor({ timeout: STEP_MS });
      await page.keyboard.press("Enter");
      await statusItem(page, "break-then-fix.json");
      await panel.locator("#mode").selectOption("full");
      await statusItem(page, "full");
      await sendAndWait(panel, "Print another name in sample.py, then make it right.");
      await panel.locator(".end.status-settled").first().waitFor({ timeout: STEP_MS });
    });
    const cards = panel.locator("details.tool", { hasText: "Edit sample.py" });
    const finding = /sample\.py:2:7: error F821 Undefined name `undefined_name` \(Ruff\)/;
    await step(page, "breaking-edit-card", async () => {
      await waitForCount(cards, 2);
      const breaking = cards.nth(0);
      await openCard(breaking);
      // One line per new finding, from the editor's language server (source Ruff)...
      const line = breaking.locator("ul.diagnostics li.sev-error");
      await line.waitFor({ timeout: STEP_MS });
      assert.equal(await breaking.locator("ul.diagnostics li").count(), 1);
      assert.match(await line.innerText(), finding);
      // ...and the tool's result, what the model reads next, says it too.
      assert.match(await breaking.locator("pre.output").innerText(), finding);
      assert.equal(await breaking.locator(".diagnostics.none").count(), 0);
    });
    await shot(page, "diagnostics-breaking", ARTIFACTS);
    await step(page, "fixing-edit-card", async () => {
      const fixing = cards.nth(1);
      await openCard(fixing);
      await fixing
        .locator(".diagnostics.none", { hasText: "No new problems after this change." })
        .waitFor({ timeout: STEP_MS });
      assert.equal(await fixing.locator("ul.diagnostics").count(), 0);
      assert.doesNotMatch(await fixing.locator("pre.output").innerText(), /F821|Undefined name/);
    });
    await shot(page, "diagnostics-fixed", ARTIFACTS);
  });
});
