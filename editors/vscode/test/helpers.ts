// Shared test helpers: where the daemon is, temp workspaces and state dirs, waiting.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { splitCommandLine, type DaemonCommand } from "../src/client";
import type { PanelState } from "../src/panelItems";
import { applyPatch, type ToPage } from "../src/panelMessages";

/** editors/vscode (found from this file, wherever the test bundle was written under it). */
export function extensionRoot(): string {
  let dir = __dirname;
  for (;;) {
    const pkg = path.join(dir, "package.json");
    if (fs.existsSync(pkg) && fs.existsSync(path.join(dir, "src", "extension.ts"))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`cannot find editors/vscode above ${__dirname}`);
    dir = up;
  }
}

export function repoRoot(): string {
  return path.resolve(extensionRoot(), "..", "..");
}

/** KGENT_SERVER_COMMAND if set, else <repo>/.venv/bin/kgent serve --stdio. */
export function serverCommandLine(): string {
  const fromEnv = process.env.KGENT_SERVER_COMMAND;
  if (fromEnv !== undefined && fromEnv.trim() !== "") return fromEnv;
  const kgent = path.join(repoRoot(), ".venv", "bin", "kgent");
  return `${quote(kgent)} serve --stdio`;
}

function quote(word: string): string {
  return /[\s'"\\]/.test(word) ? `'${word.replace(/'/g, "'\\''")}'` : word;
}

export function serverCommand(env: NodeJS.ProcessEnv): DaemonCommand {
  const [command, ...args] = splitCommandLine(serverCommandLine());
  return { command, args, env };
}

/** Keys a developer may have exported must not reach the test daemons. */
export const KEY_VARIABLES = ["KGENT_API_KEY", "DEEPSEEK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"];
const PROVIDER_VARIABLES = [
  "KGENT_PROVIDER",
  "KGENT_MODEL",
  "KGENT_BASE_URL",
  "KGENT_PERMISSION_MODE",
  "KGENT_APPROVAL_TIMEOUT",
  "KGENT_LOG_FILE",
];

export function cleanEnv(stateDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, KGENT_STATE_DIR: stateDir };
  for (const k of [...KEY_VARIABLES, ...PROVIDER_VARIABLES]) delete env[k];
  return env;
}

export interface Sandbox {
  workspace: string;
  stateDir: string;
  cleanup(): void;
}

/** A temp workspace (with sample.py for the tool-loop script) and a temp KGENT_STATE_DIR. */
export function sandbox(): Sandbox {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "kgent-vscode-test-"));
  const workspace = path.join(base, "ws");
  const stateDir = path.join(base, "state");
  fs.mkdirSync(workspace);
  fs.mkdirSync(stateDir);
  fs.writeFileSync(path.join(workspace, "sample.py"), "value = 1\nprint(value)\n");
  return {
    workspace: fs.realpathSync(workspace),
    stateDir,
    cleanup: () => fs.rmSync(base, { recursive: true, force: true }),
  };
}

// Deadlines are generous on purpose: the suites must pass on a loaded machine (a busy CI runner, `stress`), and a
// deadline only has to turn a hang into a failure. Nothing waits for them when things work: waits poll for an event.

/** Per test. There is no suite-wide limit: a suite's time grows with the machine's load and the number of tests. */
export const TEST_TIMEOUT_MS = 300_000;

/** The options of a test against a real daemon: `test(name, AGAINST_DAEMON, fn)`. */
export const AGAINST_DAEMON = { timeout: TEST_TIMEOUT_MS };

/** For `waitFor` (below the per-test limit, so a wait that never ends fails with its own message). */
export const WAIT_TIMEOUT_MS = 120_000;

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false,
  timeoutMs = WAIT_TIMEOUT_MS,
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A scripted-provider script that stops at an approval before it answers: turn 0 asks to run `touch gate` (a write,
 * so it asks; `true` would run unasked in the sandbox), turn 1 answers.
 * A test holds that prompt open while it queues a steering or follow-up message, so the message always reaches a
 * live run (the built-in `slow-answer` leaves a fraction of a second for it). The script restarts at turn 0 after
 * each delivered message, so later prompts come too: answer them at once. Returns the path, usable as the model.
 */
export function gateScript(dir: string): string {
  const file = path.join(dir, "gate.json");
  const turns = [[{ text: "Checking first." }, { tool: "bash", args: { command: "touch gate" } }], [{ text: "Done." }]];
  fs.writeFileSync(file, JSON.stringify(turns));
  return file;
}

const folded = new WeakMap<unknown[], { seen: number; state: PanelState | undefined }>();

/**
 * The panel page's state after the messages `posted` to it, as the page makes it: the last whole state with every
 * patch after it applied (webview/main.ts). Undefined before the first state.
 */
export function pageState(posted: unknown[]): PanelState | undefined {
  const f = folded.get(posted) ?? { seen: 0, state: undefined };
  for (; f.seen < posted.length; f.seen++) {
    const m = posted[f.seen] as ToPage;
    // Its own copy: the page changes its state in place, the posted messages stay as they were posted.
    if (m.type === "state") f.state = structuredClone(m.state);
    else if (m.type === "patch" && f.state !== undefined) f.state = applyPatch(f.state, structuredClone(m.patch));
  }
  folded.set(posted, f);
  return f.state;
}
