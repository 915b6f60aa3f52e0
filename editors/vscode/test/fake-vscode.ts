// A fake `vscode` module: just the API surface the extension uses, recording what it shows and letting a test play
// the user (answer input boxes, pick QuickPick items, press Escape, cancel a progress notification).
//
// installFakeVscode() makes `require("vscode")` return it (via Module._load) before the extension bundle is loaded.

import Module from "node:module";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CancellationTokenSource, Emitter } from "vscode-jsonrpc/node";

type Disposable = { dispose(): void };
type Listener<T> = (value: T) => void;

// ------------------------------------------------------------------------------------------------ values

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}

  static from(c: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme, c.authority ?? "", c.path ?? "", c.query ?? "", c.fragment ?? "");
  }

  static file(p: string): Uri {
    return new Uri("file", "", path.resolve(p), "", "");
  }

  static parse(s: string): Uri {
    if (s.startsWith("file:")) {
      const hash = s.indexOf("#");
      return Uri.file(fileURLToPath(hash >= 0 ? s.slice(0, hash) : s));
    }
    const u = new URL(s);
    return new Uri(
      u.protocol.replace(/:$/, ""),
      u.host,
      decodeURIComponent(u.pathname),
      u.search.replace(/^\?/, ""),
      u.hash.replace(/^#/, ""),
    );
  }

  get fsPath(): string {
    return this.path;
  }

  static joinPath(base: Uri, ...parts: string[]): Uri {
    return base.with({ path: path.posix.join(base.path, ...parts) });
  }

  with(change: { scheme?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(
      change.scheme ?? this.scheme,
      this.authority,
      change.path ?? this.path,
      change.query ?? this.query,
      change.fragment ?? this.fragment,
    );
  }

  toString(): string {
    if (this.scheme === "file") return pathToFileURL(this.path).href;
    const auth = this.authority ? `//${this.authority}` : "";
    return `${this.scheme}:${auth}${this.path}${this.query ? `?${this.query}` : ""}${this.fragment ? `#${this.fragment}` : ""}`;
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Selection {
  readonly start: Position;
  readonly end: Position;
  constructor(startLine: number, startChar: number, endLine: number, endChar: number) {
    this.start = new Position(startLine, startChar);
    this.end = new Position(endLine, endChar);
  }
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

// Issue 25: the Permissions tree view and the approval's writable proposed text (a file system provider).
export class ThemeIcon {
  constructor(readonly id: string) {}
}
export const TreeItemCollapsibleState = { None: 0, Collapsed: 1, Expanded: 2 } as const;
export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: string;
  contextValue?: string;
  iconPath?: ThemeIcon;
  constructor(
    readonly label: string,
    readonly collapsibleState: number = 0,
  ) {}
}
export class FakeDisposable {
  constructor(private readonly fn: () => void) {}
  dispose(): void {
    this.fn();
  }
}
export const FileType = { Unknown: 0, File: 1, Directory: 2, SymbolicLink: 64 } as const;
export const FileChangeType = { Changed: 1, Created: 2, Deleted: 3 } as const;
export class FileSystemError extends Error {
  static FileNotFound(what?: unknown): FileSystemError {
    return new FileSystemError(`file not found: ${String(what)}`);
  }
  static NoPermissions(what?: unknown): FileSystemError {
    return new FileSystemError(`no permissions: ${String(what)}`);
  }
}

export interface FakeTreeDataProvider {
  getTreeItem(node: unknown): TreeItem;
  getChildren(node?: unknown): unknown[] | Promise<unknown[]>;
  onDidChangeTreeData?: (l: Listener<unknown>) => Disposable;
}

/** A tree view as a test sees it: its provider, its message, and "show it" (visibility). */
export class FakeTreeView {
  message: string | undefined;
  visible = false;
  private readonly visibility = new Emitter<{ visible: boolean }>();
  readonly onDidChangeVisibility = (l: Listener<{ visible: boolean }>): Disposable => this.visibility.event(l);
  constructor(
    readonly id: string,
    readonly provider: FakeTreeDataProvider,
  ) {}
  show(): void {
    this.visible = true;
    this.visibility.fire({ visible: true });
  }
  /** The tree as VS Code would draw it: each item with its children's items. */
  async render(): Promise<{ item: TreeItem; node: unknown; children: { item: TreeItem; node: unknown }[] }[]> {
    const out = [];
    for (const node of await this.provider.getChildren(undefined)) {
      const children = [];
      for (const child of await this.provider.getChildren(node))
        children.push({ item: this.provider.getTreeItem(child), node: child });
      out.push({ item: this.provider.getTreeItem(node), node, children });
    }
    return out;
  }
  dispose(): void {}
}

export class TabInputText {
  constructor(readonly uri: Uri) {}
}

export class TabInputTextDiff {
  constructor(
    readonly original: Uri,
    readonly modified: Uri,
  ) {}
}

export const StatusBarAlignment = { Left: 1, Right: 2 } as const;
export const ProgressLocation = { SourceControl: 1, Window: 10, Notification: 15 } as const;
export const QuickPickItemKind = { Separator: -1, Default: 0 } as const;

// ------------------------------------------------------------------------------------------------ records

export interface QuickInputButton {
  iconPath: unknown;
  tooltip?: string;
}

export interface QuickPickItem {
  label: string;
  description?: string;
  detail?: string;
  buttons?: readonly QuickInputButton[];
}

/** A QuickPick on screen (from createQuickPick or showQuickPick). */
export class FakeQuickPick<T extends QuickPickItem = QuickPickItem> {
  title: string | undefined;
  placeholder: string | undefined;
  ignoreFocusOut = false;
  matchOnDescription = false;
  matchOnDetail = false;
  canSelectMany = false;
  items: readonly T[] = [];
  activeItems: readonly T[] = [];
  selectedItems: readonly T[] = [];
  value = "";
  busy = false;
  visible = false;
  disposed = false;
  /** "user" (Escape), "extension" (hide()/dispose() by the extension) */
  hiddenBy: "user" | "extension" | undefined;
  readonly accepted: T[] = [];
  private readonly acceptEmitter = new Emitter<void>();
  private readonly hideEmitter = new Emitter<void>();
  private readonly itemButtonEmitter = new Emitter<{ item: T; button: QuickInputButton }>();
  readonly onDidTriggerItemButton = (l: Listener<{ item: T; button: QuickInputButton }>): Disposable =>
    this.itemButtonEmitter.event(l);
  readonly onDidAccept = (l: Listener<void>): Disposable => this.acceptEmitter.event(l);
  readonly onDidHide = (l: Listener<void>): Disposable => this.hideEmitter.event(l);
  readonly onDidChangeValue = (_l: Listener<string>): Disposable => ({ dispose: () => undefined });
  readonly onDidChangeSelection = (_l: Listener<readonly T[]>): Disposable => ({ dispose: () => undefined });
  readonly onDidChangeActive = (_l: Listener<readonly T[]>): Disposable => ({ dispose: () => undefined });

  constructor(private readonly ui: FakeUi) {}

  show(): void {
    if (this.visible || this.disposed) return;
    this.visible = true;
    this.hiddenBy = undefined;
    this.ui.shown(this as unknown as FakeQuickPick);
  }

  hide(): void {
    this.close("extension");
  }

  dispose(): void {
    this.close("extension");
    this.disposed = true;
  }

  private close(by: "user" | "extension"): void {
    if (!this.visible) return;
    this.visible = false;
    this.hiddenBy = by;
    this.hideEmitter.fire();
  }

  // ---- the user

  /** Pick the item whose label contains `label` (and press Enter). */
  pick(label: string): void {
    const item = this.items.find((i) => i.label.includes(label));
    if (item === undefined) throw new Error(`no item '${label}' in ${JSON.stringify(this.items.map((i) => i.label))}`);
    this.pickItem(item);
  }

  pickItem(item: T): void {
    if (!this.visible) throw new Error("the QuickPick is not visible");
    this.activeItems = [item];
    this.selectedItems = [item];
    this.accepted.push(item);
    this.acceptEmitter.fire();
  }

  /** Click the button whose tooltip starts with `tooltip` on the item whose label contains `label`. */
  pressItemButton(label: string, tooltip: string): void {
    if (!this.visible) throw new Error("the QuickPick is not visible");
    const item = this.items.find((i) => i.label.includes(label));
    const button = item?.buttons?.find((b) => b.tooltip?.startsWith(tooltip) === true);
    if (item === undefined || button === undefined) throw new Error(`no button '${tooltip}' on '${label}'`);
    this.itemButtonEmitter.fire({ item, button });
  }

  /** Press Escape. */
  escape(): void {
    this.close("user");
  }

  labels(): string[] {
    return this.items.map((i) => i.label);
  }
}

export interface MessageRecord {
  severity: "info" | "warning" | "error";
  message: string;
  items: string[];
  modal: boolean;
  detail?: string;
}

export interface ProgressRecord {
  title: string | undefined;
  cancellable: boolean;
  messages: string[];
  done: boolean;
  /** Click the notification's Cancel button. */
  cancel(): void;
}

export interface InputBoxOptions {
  title?: string;
  prompt?: string;
  placeHolder?: string;
  password?: boolean;
  value?: string;
}

export class FakeOutputChannel {
  text = "";
  shown = false;
  constructor(readonly name: string) {}
  append(t: string): void {
    this.text += t;
  }
  appendLine(t: string): void {
    this.text += `${t}\n`;
  }
  clear(): void {
    this.text = "";
  }
  show(): void {
    this.shown = true;
  }
  hide(): void {
    this.shown = false;
  }
  dispose(): void {}
}

export class FakeStatusBarItem {
  command: string | undefined;
  tooltip: string | undefined;
  backgroundColor: ThemeColor | undefined;
  visible = false;
  private value = "";
  constructor(private readonly history: string[]) {}
  get text(): string {
    return this.value;
  }
  set text(v: string) {
    this.value = v;
    if (this.history.at(-1) !== v) this.history.push(v);
  }
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {}
}

export interface FakeTab {
  input: TabInputText | TabInputTextDiff;
  label: string;
}

export interface TextDocumentContentProvider {
  provideTextDocumentContent(uri: Uri): string | Promise<string>;
}

export interface FakeTextDocument {
  uri: Uri;
  isDirty: boolean;
  getText(range?: Selection): string;
  /** Set for an untitled document opened with a language (`openTextDocument({content, language})`). */
  languageId?: string;
}

export interface FakeEditor {
  document: FakeTextDocument;
  selection: Selection;
}

/** Everything the fake records, and how the test plays the user. */
export class FakeUi {
  quickPicks: FakeQuickPick[] = [];
  messages: MessageRecord[] = [];
  progress: ProgressRecord[] = [];
  inputBoxes: InputBoxOptions[] = [];
  executed: { command: string; args: unknown[] }[] = [];
  shownDocuments: Uri[] = [];
  /** The documents `showTextDocument` was given (not a bare Uri): their text and language. */
  shownTextDocuments: FakeTextDocument[] = [];
  statusHistory: string[] = [];
  outputs = new Map<string, FakeOutputChannel>();
  tabs: FakeTab[] = [];
  /** The user's answer to an input box (undefined = Escape). */
  onInputBox: (options: InputBoxOptions) => string | undefined | Promise<string | undefined> = () => undefined;
  /** Called when a QuickPick appears; it may pick, escape, or leave it open. */
  onQuickPick: (qp: FakeQuickPick) => void = () => undefined;
  /** The button the user clicks on a message (undefined = closes it). */
  onMessage: (m: MessageRecord) => string | undefined = () => undefined;

  shown(qp: FakeQuickPick): void {
    this.quickPicks.push(qp);
    setImmediate(() => this.onQuickPick(qp));
  }

  output(name: string): FakeOutputChannel {
    const c = this.outputs.get(name);
    if (c === undefined) throw new Error(`no output channel ${name}`);
    return c;
  }
}

// ------------------------------------------------------------------------------------------------ the module

export interface FakeState {
  ui: FakeUi;
  config: Record<string, unknown>;
  /** What the workspace's .vscode/settings.json says: `get` prefers it (as VS Code does for a setting a workspace
   *  may set), `inspect` shows it apart. */
  workspaceConfig: Record<string, unknown>;
  workspaceFolders: { uri: Uri; name: string; index: number }[] | undefined;
  activeTextEditor: FakeEditor | undefined;
  commands: Map<string, (...args: unknown[]) => unknown>;
  providers: Map<string, TextDocumentContentProvider>;
  webviewProviders: Map<string, FakeWebviewViewProvider>;
  treeViews: Map<string, FakeTreeView>;
  fileSystems: Map<string, unknown>;
  trusted: boolean;
}

export const state: FakeState = {
  ui: new FakeUi(),
  config: {},
  workspaceConfig: {},
  workspaceFolders: undefined,
  activeTextEditor: undefined,
  commands: new Map(),
  providers: new Map(),
  webviewProviders: new Map(),
  treeViews: new Map(),
  fileSystems: new Map(),
  trusted: true,
};

function record(severity: MessageRecord["severity"], message: string, rest: unknown[]): Promise<string | undefined> {
  let modal = false;
  let detail: string | undefined;
  const items: string[] = [];
  for (const r of rest) {
    if (typeof r === "string") items.push(r);
    else if (typeof r === "object" && r !== null && "modal" in r) {
      modal = (r as { modal?: boolean }).modal === true;
      detail = (r as { detail?: string }).detail;
    }
  }
  const m: MessageRecord = { severity, message, items, modal, detail };
  state.ui.messages.push(m);
  return Promise.resolve(state.ui.onMessage(m));
}

function tokenLike(
  t: unknown,
): { onCancellationRequested(l: () => void): Disposable; isCancellationRequested: boolean } | undefined {
  return typeof t === "object" && t !== null && "onCancellationRequested" in t
    ? (t as { onCancellationRequested(l: () => void): Disposable; isCancellationRequested: boolean })
    : undefined;
}

async function showQuickPick(items: unknown, options: unknown, token?: unknown): Promise<unknown> {
  const list = (await Promise.resolve(items)) as (string | QuickPickItem)[];
  const opts = (options ?? {}) as { title?: string; placeHolder?: string; canPickMany?: boolean };
  const asItems: QuickPickItem[] = list.map((i) => (typeof i === "string" ? { label: i } : i));
  const qp = new FakeQuickPick(state.ui);
  qp.title = opts.title;
  qp.placeholder = opts.placeHolder;
  qp.canSelectMany = opts.canPickMany === true;
  qp.items = asItems;
  qp.activeItems = asItems.slice(0, 1);
  return new Promise((resolve) => {
    const subs: Disposable[] = [];
    const done = (v: unknown): void => {
      for (const s of subs) s.dispose();
      qp.dispose();
      resolve(v);
    };
    subs.push(
      qp.onDidAccept(() => {
        const picked = qp.selectedItems[0];
        const value = typeof list[asItems.indexOf(picked)] === "string" ? picked.label : picked;
        done(qp.canSelectMany ? [value] : value);
      }),
      qp.onDidHide(() => done(undefined)),
    );
    const t = tokenLike(token);
    if (t !== undefined) subs.push(t.onCancellationRequested(() => done(undefined)));
    qp.show();
  });
}

let untitled = 0;

const fakeVscode = {
  Uri,
  Position,
  Selection,
  ThemeColor,
  ThemeIcon,
  TreeItem,
  TreeItemCollapsibleState,
  Disposable: FakeDisposable,
  FileType,
  FileChangeType,
  FileSystemError,
  TabInputText,
  TabInputTextDiff,
  StatusBarAlignment,
  ProgressLocation,
  QuickPickItemKind,
  CancellationTokenSource,
  EventEmitter: Emitter,
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  languages: {
    registerCodeLensProvider(_selector: unknown, _provider: unknown): Disposable {
      return { dispose: () => undefined }; // CodeLens (the review) is tested in the real VS Code (test-real/)
    },
    // No language server here: nothing changes, every file has no diagnostics (test-real/ has a real one).
    onDidChangeDiagnostics(_listener: (e: { uris: Uri[] }) => void): Disposable {
      return { dispose: () => undefined };
    },
    getDiagnostics(_uri: Uri): unknown[] {
      return [];
    },
  },
  window: {
    createTreeView(id: string, options: { treeDataProvider: FakeTreeDataProvider }): FakeTreeView {
      const view = new FakeTreeView(id, options.treeDataProvider);
      state.treeViews.set(id, view);
      return view;
    },
    registerWebviewViewProvider(id: string, provider: FakeWebviewViewProvider): Disposable {
      state.webviewProviders.set(id, provider);
      return { dispose: () => state.webviewProviders.delete(id) };
    },
    get activeTextEditor(): FakeEditor | undefined {
      return state.activeTextEditor;
    },
    createOutputChannel(name: string): FakeOutputChannel {
      const c = new FakeOutputChannel(name);
      state.ui.outputs.set(name, c);
      return c;
    },
    createStatusBarItem(): FakeStatusBarItem {
      return new FakeStatusBarItem(state.ui.statusHistory);
    },
    showInformationMessage: (message: string, ...rest: unknown[]) => record("info", message, rest),
    showWarningMessage: (message: string, ...rest: unknown[]) => record("warning", message, rest),
    showErrorMessage: (message: string, ...rest: unknown[]) => record("error", message, rest),
    async showInputBox(options?: InputBoxOptions): Promise<string | undefined> {
      const o = options ?? {};
      state.ui.inputBoxes.push(o);
      return state.ui.onInputBox(o);
    },
    showQuickPick,
    createQuickPick(): FakeQuickPick {
      return new FakeQuickPick(state.ui);
    },
    async showWorkspaceFolderPick(): Promise<unknown> {
      return state.workspaceFolders?.[0];
    },
    async withProgress<R>(
      options: { title?: string; cancellable?: boolean },
      task: (progress: { report(v: { message?: string }): void }, token: unknown) => Promise<R>,
    ): Promise<R> {
      const source = new CancellationTokenSource();
      const rec: ProgressRecord = {
        title: options.title,
        cancellable: options.cancellable === true,
        messages: [],
        done: false,
        cancel: () => source.cancel(),
      };
      state.ui.progress.push(rec);
      try {
        return await task({ report: (v) => v.message !== undefined && rec.messages.push(v.message) }, source.token);
      } finally {
        rec.done = true;
      }
    },
    async showTextDocument(doc: FakeTextDocument | Uri): Promise<unknown> {
      const uri = doc instanceof Uri ? doc : doc.uri;
      state.ui.shownDocuments.push(uri);
      if (!(doc instanceof Uri)) state.ui.shownTextDocuments.push(doc);
      state.ui.tabs.push({ input: new TabInputText(uri), label: path.basename(uri.path) });
      return {};
    },
    tabGroups: {
      get all(): { tabs: FakeTab[] }[] {
        return [{ tabs: [...state.ui.tabs] }];
      },
      async close(tabs: FakeTab | FakeTab[]): Promise<boolean> {
        const list = Array.isArray(tabs) ? tabs : [tabs];
        state.ui.tabs = state.ui.tabs.filter((t) => !list.includes(t));
        return true;
      },
    },
  },
  workspace: {
    get isTrusted(): boolean {
      return state.trusted;
    },
    onDidGrantWorkspaceTrust: (_l: Listener<unknown>): Disposable => ({ dispose: () => undefined }),
    onDidChangeTextDocument: (_l: Listener<unknown>): Disposable => ({ dispose: () => undefined }),
    textDocuments: [] as FakeTextDocument[],
    get workspaceFolders(): FakeState["workspaceFolders"] {
      return state.workspaceFolders;
    },
    getWorkspaceFolder(uri: Uri): unknown {
      return state.workspaceFolders?.find(
        (f) => uri.fsPath === f.uri.fsPath || uri.fsPath.startsWith(f.uri.fsPath + path.sep),
      );
    },
    getConfiguration(section?: string) {
      const prefix = section ? `${section}.` : "";
      return {
        get: <T>(key: string, dflt?: T): T | undefined => {
          const k = prefix + key;
          if (k in state.workspaceConfig) return state.workspaceConfig[k] as T;
          return k in state.config ? (state.config[k] as T) : dflt;
        },
        inspect: <T>(key: string) => {
          const k = prefix + key;
          return {
            key: k,
            defaultValue: undefined,
            globalValue: k in state.config ? (state.config[k] as T) : undefined,
            workspaceValue: k in state.workspaceConfig ? (state.workspaceConfig[k] as T) : undefined,
          };
        },
        has: (key: string) => prefix + key in state.config,
        update: async (key: string, value: unknown) => {
          state.config[prefix + key] = value;
        },
      };
    },
    registerFileSystemProvider(scheme: string, provider: unknown): Disposable {
      state.fileSystems.set(scheme, provider);
      return { dispose: () => state.fileSystems.delete(scheme) };
    },
    registerTextDocumentContentProvider(scheme: string, provider: TextDocumentContentProvider): Disposable {
      state.providers.set(scheme, provider);
      return { dispose: () => state.providers.delete(scheme) };
    },
    async openTextDocument(what: Uri | { content?: string; language?: string }): Promise<FakeTextDocument> {
      if (!(what instanceof Uri)) {
        // A new untitled editor holding `content` (unsaved: the person saves it where they want).
        const text = what.content ?? "";
        const uri = Uri.from({ scheme: "untitled", path: `Untitled-${++untitled}` });
        return { uri, isDirty: text !== "", getText: () => text, languageId: what.language ?? "plaintext" };
      }
      const uri = what;
      const provider = state.providers.get(uri.scheme);
      const fsp = state.fileSystems.get(uri.scheme) as { readFile(u: Uri): Uint8Array } | undefined;
      const text =
        provider !== undefined
          ? await provider.provideTextDocumentContent(uri)
          : fsp !== undefined
            ? Buffer.from(fsp.readFile(uri)).toString("utf8")
            : "";
      return { uri, isDirty: false, getText: () => text };
    },
    onDidChangeConfiguration: (_l: Listener<unknown>): Disposable => ({ dispose: () => undefined }),
  },
  commands: {
    registerCommand(id: string, fn: (...args: unknown[]) => unknown): Disposable {
      if (state.commands.has(id)) throw new Error(`command ${id} already registered`);
      state.commands.set(id, fn);
      return { dispose: () => state.commands.delete(id) };
    },
    async executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
      state.ui.executed.push({ command: id, args });
      if (id === "vscode.diff") {
        const [left, right, title] = args as [Uri, Uri, string];
        state.ui.tabs.push({ input: new TabInputTextDiff(left, right), label: title });
        return undefined;
      }
      const fn = state.commands.get(id);
      return fn === undefined ? undefined : fn(...args);
    },
  },
};

export type FakeVscode = typeof fakeVscode;

let installed = false;

export function installFakeVscode(): FakeVscode {
  if (!installed) {
    const mod = Module as unknown as { _load: (request: string, parent: unknown, isMain: boolean) => unknown };
    const original = mod._load;
    mod._load = function (request: string, parent: unknown, isMain: boolean): unknown {
      return request === "vscode" ? fakeVscode : original.call(this, request, parent, isMain);
    };
    installed = true;
  }
  return fakeVscode;
}

/** A fresh window: no messages, no QuickPicks, the given folders and settings. */
export function resetFake(options: {
  folders?: string[];
  config?: Record<string, unknown>;
  workspaceConfig?: Record<string, unknown>;
  trusted?: boolean;
}): FakeUi {
  state.ui = new FakeUi();
  state.config = { ...(options.config ?? {}) };
  state.workspaceConfig = { ...(options.workspaceConfig ?? {}) };
  state.workspaceFolders = options.folders?.map((f, index) => ({ uri: Uri.file(f), name: path.basename(f), index }));
  state.activeTextEditor = undefined;
  state.commands.clear();
  state.providers.clear();
  state.webviewProviders.clear();
  state.treeViews.clear();
  state.fileSystems.clear();
  state.trusted = options.trusted ?? true;
  return state.ui;
}

export class FakeSecretStorage {
  readonly values = new Map<string, string>();
  private readonly emitter = new Emitter<{ key: string }>();
  readonly onDidChange = (l: Listener<{ key: string }>): Disposable => this.emitter.event(l);
  async get(key: string): Promise<string | undefined> {
    return this.values.get(key);
  }
  async store(key: string, value: string): Promise<void> {
    this.values.set(key, value);
    this.emitter.fire({ key });
  }
  async delete(key: string): Promise<void> {
    this.values.delete(key);
    this.emitter.fire({ key });
  }
}

export interface FakeContext {
  subscriptions: Disposable[];
  secrets: FakeSecretStorage;
  extensionPath: string;
  extensionUri: Uri;
}

export function fakeContext(extensionPath: string): FakeContext {
  return { subscriptions: [], secrets: new FakeSecretStorage(), extensionPath, extensionUri: Uri.file(extensionPath) };
}

export interface FakeWebviewViewProvider {
  resolveWebviewView(view: FakeWebviewView): void;
}

/** A webview view whose page is the test: it reads what the extension posts and sends what a person would. */
export class FakeWebviewView {
  readonly posted: unknown[] = [];
  private readonly receive = new Emitter<unknown>();
  readonly webview = {
    options: {} as unknown,
    html: "",
    cspSource: "vscode-resource:",
    asWebviewUri: (u: Uri): Uri => u,
    postMessage: async (m: unknown): Promise<boolean> => {
      this.posted.push(structuredClone(m)); // VS Code serializes a posted message when it is posted
      return true;
    },
    onDidReceiveMessage: (l: Listener<unknown>): Disposable => this.receive.event(l),
  };
  onDidDispose = (_l: Listener<unknown>): Disposable => ({ dispose: () => undefined });
  /** The page sends `m`. */
  send(m: unknown): void {
    this.receive.fire(m);
  }
}

/** Resolve the registered view `id` with a fake page, as VS Code does when the view is first shown. */
export function openWebviewView(id: string): FakeWebviewView {
  const provider = state.webviewProviders.get(id);
  if (provider === undefined) throw new Error(`no webview view provider for ${id}`);
  const view = new FakeWebviewView();
  provider.resolveWebviewView(view);
  return view;
}

export function editorOn(file: string, text: string, selection: Selection, isDirty = false): FakeEditor {
  const uri = Uri.file(file);
  const lines = text.split("\n");
  const offset = (p: Position): number => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  return {
    document: {
      uri,
      isDirty,
      getText: (range?: Selection) => (range === undefined ? text : text.slice(offset(range.start), offset(range.end))),
    },
    selection,
  };
}
