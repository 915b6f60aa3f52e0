// Permission rules as the editor shows them: the rule words an "always" option carries (protocol.md, Permissions:
// `scope`, `rules`, `noRule`) and the effective rules of a workspace (`agent/rules`) grouped for the Permissions view.
// Editor-agnostic: no `vscode` import.

import type * as P from "./protocol";

export type RuleScope = "session" | "project" | "user";
export type RuleDecision = "allow" | "deny";

/** A rule as `agent/rules` lists it, that answer, and the params of `agent/addRule` / `agent/removeRule`. */
export type RuleItem = P.RuleInfo;
export type RulesResult = P.RulesResult;
export type RuleParams = P.RuleParams;

/** An offered option, with the fields an "always" option may carry (read defensively: older daemons send none). */
type OfferedOption = P.PermissionOption & { scope?: unknown; rules?: unknown };

export const SCOPES: readonly RuleScope[] = ["session", "project", "user"];

/** How long an answer lasts, in words (the card's badge). */
export const SCOPE_WORDS: Record<RuleScope, string> = {
  session: "this session",
  project: "this project",
  user: "all your projects",
};

function isScope(v: unknown): v is RuleScope {
  return v === "session" || v === "project" || v === "user";
}

/** The rule words of one option: its scope and the rules it creates (empty for a one-off answer). */
export interface OptionWords {
  scope?: RuleScope;
  rules: { rule: string; text: string }[];
}

/** What an offered option will create, read defensively (older daemons send neither field). */
export function optionWords(option: P.PermissionOption): OptionWords {
  const o = option as OfferedOption;
  const scope = isScope(o.scope) ? o.scope : undefined;
  const rules: { rule: string; text: string }[] = [];
  if (Array.isArray(o.rules)) {
    for (const r of o.rules as unknown[]) {
      if (typeof r !== "object" || r === null) continue;
      const { rule, text } = r as { rule?: unknown; text?: unknown };
      if (typeof rule === "string" && typeof text === "string") rules.push({ rule, text });
    }
  }
  return scope === undefined ? { rules } : { scope, rules };
}

/** One line saying what an option creates ("creates: allow `npm test` … · project"), or undefined for a one-off. */
export function optionRuleLine(o: P.PermissionOption): string | undefined {
  const w = optionWords(o);
  if (w.rules.length === 0) return w.scope === undefined ? undefined : `lasts ${SCOPE_WORDS[w.scope]}`;
  return `creates: ${w.rules.map((r) => r.text).join("; ")}`;
}

/** Why no "always" option is offered (the daemon's sentence), if it said so. */
export function noRuleOf(params: P.PermissionFields): string | undefined {
  const v = (params as P.PermissionFields & { noRule?: unknown }).noRule;
  return typeof v === "string" && v !== "" ? v : undefined;
}

// ---------------------------------------------------------------------------------------------- the Permissions view

export interface RuleGroup {
  scope: RuleScope;
  /** The file the scope's rules live in (the session scope has none). */
  file?: string;
  /** A note on the group (e.g. the project's allows are ignored until it is trusted). */
  note?: string;
  rules: RuleItem[];
}

/** The effective rules of a workspace, one group per scope (user, project, session), each in the daemon's order. */
export function groupRules(result: RulesResult): RuleGroup[] {
  const order: RuleScope[] = ["user", "project", "session"];
  return order.map((scope) => {
    const group: RuleGroup = { scope, rules: result.rules.filter((r) => r.scope === scope) };
    const file = scope === "user" ? result.files.user : scope === "project" ? result.files.project : undefined;
    if (typeof file === "string" && file !== "") group.file = file;
    if (scope === "project" && !result.projectTrusted) {
      const mine = typeof result.files.personal === "string" ? ` (${result.files.personal})` : "";
      group.note = `not trusted by Kgent (its own trust, not VS Code's): the allow rules in its own file are ignored, its deny rules apply; yours are kept in your settings${mine}`;
    }
    return group;
  });
}

/** The label of a rule in the view: `allow bash(npm test *)`. */
export function ruleLabel(r: RuleItem): string {
  return `${r.decision} ${r.rule}`;
}

/** The params that name a rule for `agent/removeRule`. */
export function removeParams(workspace: string, r: RuleItem): RuleParams {
  const p: RuleParams = { workspace, rule: r.rule, decision: r.decision, scope: r.scope };
  if (typeof r.sessionId === "string") p.sessionId = r.sessionId;
  return p;
}
