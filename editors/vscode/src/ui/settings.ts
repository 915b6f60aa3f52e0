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

/**
 * The settings that decide where requests go and with which key, the mode, the project's trust and the command
 * Kgent starts: the user's alone. package.json scopes them `application`, so VS Code itself ignores a workspace's value
 * (a repository's .vscode/settings.json, or one write by an agent, must not point the stored key elsewhere, set full
 * mode or trust itself); they are read here from the user's settings all the same, for a host that would not, and a
 * workspace that tries is told once. (Not `machine`: in a remote window — code-server, SSH — VS Code reads a
 * machine setting only from the remote's settings and ignores the user's.)
 */
export const USER_ONLY = ["serverCommand", "provider", "baseUrl", "permissionMode", "trustProjectExtensions"];
const warned = new Set<string>();

/** The user's value of a USER_ONLY setting (or its default); a workspace's value is ignored, with a warning. */
export function userSetting<T>(cfg: vscode.WorkspaceConfiguration, key: string): T | undefined {
  const seen = cfg.inspect<T>(key);
  if (seen === undefined) return undefined;
  if ((seen.workspaceValue !== undefined || seen.workspaceFolderValue !== undefined) && !warned.has(key)) {
    warned.add(key);
    void vscode.window.showWarningMessage(
      `Kgent ignores kgent.${key} in this workspace's settings: it can only be set in your user settings (a ` +
        "repository must not choose where Kgent sends your key, its mode or its own trust).",
    );
  }
  return seen.globalValue ?? seen.defaultValue;
}

function str(cfg: vscode.WorkspaceConfiguration, key: string): string | undefined {
  const v = USER_ONLY.includes(key) ? userSetting<string>(cfg, key) : cfg.get<string>(key);
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

export function permissionMode(): string {
  const m = str(config(), "permissionMode") ?? "ask";
  return MODES.includes(m) ? m : "ask";
}

/** The `kgent.provider` setting (the user's), or undefined. */
export function providerSetting(): string | undefined {
  return str(config(), "provider");
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
  else if (!path.isAbsolute(command) && command.includes("/") && folder !== undefined)
    command = path.resolve(folder, command);
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
  // The project's own extensions, MCP servers and permission rules: only when the user says so (docs/extensions.md).
  // Always sent, so a change reaches a running daemon too: true / false decide; unset (null) leaves it to
  // `kgent extensions --trust`, the trust every front shares.
  const trust = userSetting<boolean | null>(cfg, "trustProjectExtensions");
  settings.trustProjectExtensions = typeof trust === "boolean" ? trust : null;
  return { command: { command, args: words.slice(1), cwd: folder ?? os.homedir(), env }, settings };
}

/** A model just picked whose setting is still being written (so a message sent right after uses it). */
let pickedModel: string | undefined;

/** The model runs use: the one just picked, else the `kgent.model` setting ("" for the provider's default). */
export function currentModel(): string {
  return pickedModel ?? str(config(), "model") ?? "";
}

/** Make `model` the model of the next runs now, and store it in the `kgent.model` setting. */
export async function setModelNow(model: string): Promise<void> {
  pickedModel = model.trim();
  try {
    await config().update("model", pickedModel, vscode.ConfigurationTarget.Global);
  } finally {
    if (pickedModel === model.trim()) pickedModel = undefined;
  }
}

/** `agent/run` params with the current mode, provider and model (a provider or model `base` names wins: a resumed
 *  session's own). */
export function runParams(base: P.RunParams): P.RunParams {
  const cfg = config();
  const params: P.RunParams = { ...base, mode: permissionMode() };
  const provider = str(cfg, "provider");
  const model = currentModel();
  if (base.provider === undefined && provider !== undefined) params.provider = provider;
  if (base.model === undefined && base.provider === undefined && model !== "") params.model = model;
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
  const current = currentModel();
  const DEFAULT = "(default)";
  const listed: vscode.QuickPickItem[] = [
    { label: DEFAULT, description: "the provider's default" },
    ...models.map((m) => ({ label: m, description: m === current ? "current" : undefined })),
  ];
  const qp = vscode.window.createQuickPick();
  qp.title = `Kgent: model${provider ? ` (${provider})` : ""}`;
  qp.placeholder =
    models.length > 0
      ? "Pick a model the daemon offers, or type any model id and press Enter"
      : "Type a model id and press Enter";
  qp.items = listed;
  // What is typed is offered first as a model id of its own (the provider accepts ids it does not list).
  const typed = (value: string): void => {
    const v = value.trim();
    const exact = listed.some((i) => i.label === v);
    qp.items =
      v === "" || exact ? listed : [{ label: v, description: "use this model id", alwaysShow: true }, ...listed];
  };
  const chosen = await new Promise<string | undefined>((resolve) => {
    qp.onDidChangeValue(typed);
    qp.onDidAccept(() => {
      const item = qp.selectedItems[0] ?? qp.activeItems[0];
      const value = qp.value.trim();
      resolve(item !== undefined ? item.label : value !== "" ? value : undefined);
      qp.hide();
    });
    qp.onDidHide(() => resolve(undefined));
    qp.show();
  });
  qp.dispose();
  if (chosen !== undefined) await setModelNow(chosen === DEFAULT ? "" : chosen);
}
