// The `kgent.*` settings and the stored API key: what the daemon is started with and what each run asks for.

import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { splitCommandLine } from "../client";
import type { DaemonConfig } from "../daemon";
import type * as P from "../protocol";

export const SECRET_KEY = "kgent.apiKey";
const MODES = ["plan", "ask", "auto", "full", "risk_based"];

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("kgent");
}

function str(cfg: vscode.WorkspaceConfiguration, key: string): string | undefined {
  const v = cfg.get<string>(key);
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

export function permissionMode(): string {
  const m = str(config(), "permissionMode") ?? "ask";
  return MODES.includes(m) ? m : "ask";
}

/** The daemon's command line, environment (with the stored key) and `initialize` settings. */
export async function daemonConfig(secrets: vscode.SecretStorage): Promise<DaemonConfig> {
  const cfg = config();
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const line = (str(cfg, "serverCommand") ?? "kgent serve --stdio")
    .replace(/\$\{workspaceFolder\}/g, folder ?? "")
    .replace(/\$\{userHome\}/g, os.homedir());
  const words = splitCommandLine(line);
  if (words.length === 0) throw new Error("kgent.serverCommand is empty");
  let command = words[0];
  if (command === "~" || command.startsWith("~/")) command = path.join(os.homedir(), command.slice(1));
  else if (!path.isAbsolute(command) && command.includes("/") && folder !== undefined) command = path.resolve(folder, command);
  const env: NodeJS.ProcessEnv = { ...process.env };
  const key = await secrets.get(SECRET_KEY);
  if (key) env.KGENT_API_KEY = key;
  const settings: P.InitializeSettings = { mode: permissionMode() };
  const provider = str(cfg, "provider");
  const model = str(cfg, "model");
  const baseUrl = str(cfg, "baseUrl");
  if (provider !== undefined) settings.provider = provider;
  if (model !== undefined) settings.model = model;
  if (baseUrl !== undefined) settings.baseUrl = baseUrl;
  const timeout = cfg.get<number | null>("approvalTimeout");
  if (typeof timeout === "number" && timeout > 0) settings.approvalTimeout = timeout;
  const maxTurns = cfg.get<number | null>("maxTurns");
  if (typeof maxTurns === "number" && Number.isInteger(maxTurns) && maxTurns >= 1) settings.maxTurns = maxTurns;
  // The project's own extensions and MCP servers run code: only when the user says so (docs/extensions.md). Always
  // sent, so turning it off reaches a running daemon too.
  settings.trustProjectExtensions = cfg.get<boolean>("trustProjectExtensions") === true;
  return { command: { command, args: words.slice(1), cwd: folder ?? os.homedir(), env }, settings };
}

/** `agent/run` params with the current mode, provider and model. */
export function runParams(base: P.RunParams): P.RunParams {
  const cfg = config();
  const params: P.RunParams = { ...base, mode: permissionMode() };
  const provider = str(cfg, "provider");
  const model = str(cfg, "model");
  if (provider !== undefined) params.provider = provider;
  if (model !== undefined) params.model = model;
  return params;
}

/**
 * Kgent: Set API Key. Stores (or, given an empty answer, removes) the key in secret storage, then stops an idle
 * daemon so the next command starts one with the new key.
 */
export async function setApiKey(secrets: vscode.SecretStorage, stopIfIdle: () => Promise<boolean>): Promise<void> {
  const provider = str(config(), "provider") ?? "your provider";
  const key = await vscode.window.showInputBox({
    title: "Kgent: Set API Key",
    prompt: `API key for ${provider}. Stored in VS Code's secret storage and given to the Kgent daemon as KGENT_API_KEY. Leave empty to remove the stored key.`,
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return;
  if (key.trim() === "") {
    await secrets.delete(SECRET_KEY);
  } else {
    await secrets.store(SECRET_KEY, key.trim());
  }
  const now = await stopIfIdle();
  const when = now ? "" : " It applies once the running tasks finish.";
  void vscode.window.showInformationMessage(
    key.trim() === "" ? `Kgent: API key removed.${when}` : `Kgent: API key saved in VS Code's secret storage.${when}`,
  );
}

/** Where approvals are asked: cards in the Kgent panel (default) or VS Code's QuickPick. */
export function approvalUi(): "panel" | "quickPick" {
  return config().get<string>("approvalUi") === "quickPick" ? "quickPick" : "panel";
}

/** Kgent: Choose Mode (also the status bar's mode item). */
export async function chooseMode(): Promise<void> {
  const current = permissionMode();
  const explain: Record<string, string> = {
    plan: "read-only",
    ask: "asks before writes, commands and network",
    auto: "workspace edits run; commands ask",
    full: "asks nothing (disposable workspaces only)",
    risk_based: "asks nothing: low and medium risk run, high risk is denied",
  };
  const pick = await vscode.window.showQuickPick(
    MODES.map((m) => ({ label: m, description: `${explain[m]}${m === current ? " (current)" : ""}` })),
    { title: "Kgent: permission mode", placeHolder: "What Kgent may do without asking (applies to the next task)" },
  );
  if (pick !== undefined) await config().update("permissionMode", pick.label, vscode.ConfigurationTarget.Global);
}

/** Kgent: Choose Model: the models the daemon listed in `initialize` for the provider, or any id typed in. */
export async function chooseModel(caps: P.ServerCapabilities | undefined): Promise<void> {
  const provider = str(config(), "provider") ?? caps?.defaultProvider ?? "";
  const models = caps?.models?.[provider] ?? [];
  const items: vscode.QuickPickItem[] = [{ label: "", description: "the provider's default" }, ...models.map((m) => ({ label: m }))];
  items[0].label = "(default)";
  const pick = await vscode.window.showQuickPick(items, {
    title: `Kgent: model${provider ? ` (${provider})` : ""}`,
    placeHolder: models.length > 0 ? "Models the daemon offers" : "Start a task first to list the daemon's models",
  });
  if (pick !== undefined) await config().update("model", pick.label === "(default)" ? "" : pick.label, vscode.ConfigurationTarget.Global);
}
