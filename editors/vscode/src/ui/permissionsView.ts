// The Permissions view (a tree in the Kgent container): the workspace's effective rules (`agent/rules`) by scope —
// user, project, session — with Remove (`agent/removeRule`) on each rule and Add (`agent/addRule`: the rule, allow or
// deny, the scope) in its title bar. The daemon validates a rule; its message is shown in the rule's input box.

import * as vscode from "vscode";
import { errorOf } from "../client";
import type * as P from "../protocol";
import {
  groupRules,
  removeParams,
  ruleLabel,
  SCOPE_WORDS,
  type RuleDecision,
  type RuleGroup,
  type RuleItem,
  type RuleParams,
  type RuleScope,
  type RulesResult,
} from "../rules";

export const PERMISSIONS_VIEW = "kgent.permissions";

/** Kgent's trust of a project is its own, apart from VS Code's Workspace Trust (a trusted folder can be either).
 *  Plain text: VS Code shows a view's message as it is (backticks would show literally). */
export const UNTRUSTED_NOTE =
  "Kgent does not trust this project's own configuration yet — its trust is its own, apart from VS Code's Workspace Trust: " +
  "the allow rules in the project's file are ignored (its deny rules apply), and yours for it are kept in your settings. " +
  "To trust it: the Kgent › Trust Project Extensions setting, or “kgent extensions --trust” in the folder.";

/** The rules methods, over the running daemon. */
export interface RulesApi {
  rules(workspace: string): Promise<RulesResult>;
  addRule(params: RuleParams): Promise<{ rule: RuleItem }>;
  removeRule(params: RuleParams): Promise<{ removed: boolean }>;
}

type Node = { kind: "group"; group: RuleGroup } | { kind: "rule"; rule: RuleItem };

const GROUP_TITLES: Record<RuleScope, string> = { user: "User", project: "Project", session: "Session" };

export class PermissionsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly view: vscode.TreeView<Node>;
  private result: RulesResult | undefined;
  /** The last listing's workspace (the rules are per workspace folder). */
  private workspace: string | undefined;

  /** `api`: the rules methods once the daemon runs (undefined: it cannot start); `sessionId`: the panel's session. */
  constructor(
    private readonly api: () => Promise<RulesApi | undefined>,
    private readonly sessionId: () => string | undefined,
  ) {
    this.view = vscode.window.createTreeView(PERMISSIONS_VIEW, { treeDataProvider: this, showCollapseAll: false });
    this.disposables.push(
      this.view,
      this.view.onDidChangeVisibility((e) => {
        if (e.visible) this.refresh();
      }),
      vscode.commands.registerCommand("kgent.permissions.refresh", () => this.refresh()),
      vscode.commands.registerCommand("kgent.permissions.add", (scope?: unknown) =>
        this.add(typeof scope === "string" ? scope : undefined),
      ),
      vscode.commands.registerCommand("kgent.permissions.remove", (node?: unknown) =>
        this.remove(node as Node | undefined),
      ),
    );
  }

  /** An event from a run: a decision made "always" may have added a rule. */
  onEvent(params: P.AgentEventParams): void {
    if (params.event.type === "permission_resolved" && this.result !== undefined) this.refresh();
  }

  /** Load the rules again (shown when the view is next drawn). */
  refresh(): void {
    this.result = undefined;
    this.emitter.fire(undefined);
  }

  /** The rules as last listed (for tests). */
  get listed(): RulesResult | undefined {
    return this.result;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "group") {
      const g = node.group;
      const item = new vscode.TreeItem(GROUP_TITLES[g.scope], vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group-${g.scope}`;
      item.contextValue = `kgentRuleGroup-${g.scope}`;
      item.description =
        g.note ?? (g.rules.length === 0 ? "no rules" : `${g.rules.length} rule${g.rules.length === 1 ? "" : "s"}`);
      item.tooltip = `${GROUP_TITLES[g.scope]} rules last ${SCOPE_WORDS[g.scope]}${g.file !== undefined ? ` (${g.file})` : ""}.${g.note !== undefined ? ` The project is ${g.note}.` : ""}`;
      return item;
    }
    const r = node.rule;
    const item = new vscode.TreeItem(ruleLabel(r), vscode.TreeItemCollapsibleState.None);
    item.id = `rule-${r.scope}-${r.sessionId ?? ""}-${r.decision}-${r.rule}`;
    item.contextValue = "kgentRule";
    item.description = r.text;
    item.tooltip = `${r.text}${typeof r.file === "string" ? `\n${r.file}` : ""}${typeof r.sessionId === "string" ? `\nsession ${r.sessionId}` : ""}`;
    item.iconPath = new vscode.ThemeIcon(r.decision === "deny" ? "circle-slash" : "check");
    return item;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (node?.kind === "rule") return [];
    if (node?.kind === "group") return node.group.rules.map((rule) => ({ kind: "rule", rule }));
    const result = await this.load();
    return result === undefined ? [] : groupRules(result).map((group) => ({ kind: "group", group }));
  }

  private async load(): Promise<RulesResult | undefined> {
    const workspace = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    this.workspace = workspace;
    if (workspace === undefined) {
      this.view.message = "Open a folder to see its permission rules.";
      return undefined;
    }
    if (!vscode.workspace.isTrusted) {
      this.view.message = "Kgent is off in Restricted Mode.";
      return undefined;
    }
    try {
      const api = await this.api();
      if (api === undefined) throw new Error("the Kgent daemon is not running");
      this.result = await api.rules(workspace);
      const notes: string[] = [];
      if (!this.result.projectTrusted) notes.push(UNTRUSTED_NOTE);
      if (this.result.problems?.length) notes.push(`Left out, unreadable: ${this.result.problems.join("; ")}`);
      this.view.message = notes.length > 0 ? notes.join(" ") : undefined;
      return this.result;
    } catch (e) {
      this.view.message = `Could not list the rules: ${errorOf(e).message}`;
      return undefined;
    }
  }

  /** Add a rule: its text, allow or deny, the scope. A rule the daemon refuses comes back with its message. */
  async add(scopeArg?: string): Promise<RuleItem | undefined> {
    const workspace = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (workspace === undefined) return undefined;
    const api = await this.api();
    if (api === undefined) return undefined;
    let value = "";
    let refused: { value: string; message: string } | undefined;
    for (;;) {
      const rule = await vscode.window.showInputBox({
        title: "Kgent: Add Permission Rule",
        prompt:
          refused?.message ??
          "tool(spec): bash(npm test *), bash(git status), edit(src/**), read(/etc/hosts), web_fetch(docs.python.org), or a tool name",
        placeHolder: "bash(npm test *)",
        value,
        ignoreFocusOut: true,
        validateInput: (v) =>
          v.trim() === "" ? "Type a rule" : refused !== undefined && v === refused.value ? refused.message : undefined,
      });
      if (rule === undefined || rule.trim() === "") return undefined;
      const decision = await pick<RuleDecision>("Allow or deny?", [
        { label: "allow", description: "run without asking", value: "allow" },
        { label: "deny", description: "refuse without asking (deny wins over allow)", value: "deny" },
      ]);
      if (decision === undefined) return undefined;
      const scope = isScope(scopeArg) ? scopeArg : await this.pickScope();
      if (scope === undefined) return undefined;
      const params: RuleParams = { workspace, rule: rule.trim(), decision, scope };
      if (scope === "session") {
        const sid = this.sessionId();
        if (sid === undefined) return undefined;
        params.sessionId = sid;
      }
      try {
        const added = (await api.addRule(params)).rule;
        this.refresh();
        return added;
      } catch (e) {
        // The daemon says what is wrong with the rule: ask again, the rule kept, its message shown.
        const message = errorOf(e).message;
        void vscode.window.showErrorMessage(`Kgent: the rule was not added: ${message}`);
        refused = { value: rule, message };
        value = rule;
      }
    }
  }

  /** Where a project rule is written: the project's file once it is trusted, else the user's own file for it. */
  private projectFile(): string {
    const r = this.result;
    if (r === undefined) return ".kgent/config.toml";
    return r.projectTrusted ? r.files.project : `yours, kept in ${r.files.personal}`;
  }

  private async pickScope(): Promise<RuleScope | undefined> {
    const items: { label: string; description: string; value: RuleScope }[] = [
      { label: "project", description: `this project (${this.projectFile()})`, value: "project" },
      {
        label: "user",
        description: `all your projects (${this.result?.files.user ?? "your user config"})`,
        value: "user",
      },
    ];
    if (this.sessionId() !== undefined)
      items.push({ label: "session", description: "the panel's conversation only", value: "session" });
    return pick<RuleScope>("For how long?", items);
  }

  /** Remove a rule (the view's inline button on a rule). */
  async remove(node: Node | undefined): Promise<boolean> {
    if (node?.kind !== "rule" || this.workspace === undefined) return false;
    const api = await this.api();
    if (api === undefined) return false;
    try {
      const { removed } = await api.removeRule(removeParams(this.workspace, node.rule));
      if (!removed) void vscode.window.showWarningMessage(`Kgent: ${ruleLabel(node.rule)} was already gone.`);
      this.refresh();
      return removed;
    } catch (e) {
      void vscode.window.showErrorMessage(`Kgent: could not remove ${ruleLabel(node.rule)}: ${errorOf(e).message}`);
      return false;
    }
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    this.emitter.dispose();
  }
}

function isScope(v: unknown): v is RuleScope {
  return v === "session" || v === "project" || v === "user";
}

async function pick<T>(
  title: string,
  items: { label: string; description: string; value: T }[],
): Promise<T | undefined> {
  const chosen = await vscode.window.showQuickPick(items, { title: `Kgent: ${title}`, ignoreFocusOut: true });
  return chosen?.value;
}
