// What an approval prompt shows, computed from an `agent/permission` request. Editor-agnostic (the extension turns
// it into a QuickPick). Nothing here ever chooses an option: the default item only previews.

import * as path from "node:path";
import type { PermissionParams } from "./protocol";
import { noRuleOf, optionRuleLine, optionWords } from "./rules";

export type ApprovalChoice =
  | { kind: "option"; optionId: string; optionKind: string; label: string; description?: string; detail?: string }
  | { kind: "diff"; label: string; description?: string }
  | { kind: "details"; label: string; description?: string };

export interface ApprovalPrompt {
  title: string;
  placeholder: string;
  /** Preview first (the item that is active when the prompt opens: Enter never approves by accident). */
  choices: ApprovalChoice[];
  /** What the diff preview shows, when the call changes a file. */
  preview?: DiffPreview;
  /** A readable account of the call (the "Show details" document). */
  details: string;
  /** The sub-agent that asks, if one does. */
  agent?: string;
}

export type DiffPreview =
  | { kind: "sides"; fileName: string; before: string; after: string; isNewFile: boolean }
  | { kind: "unified"; fileName: string; diff: string };

const ICONS: Record<string, string> = {
  allow_once: "$(check)",
  allow_always: "$(check-all)",
  reject_once: "$(close)",
  reject_always: "$(circle-slash)",
};

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, " ⏎ ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function diffPreview(params: PermissionParams): DiffPreview | undefined {
  const tc = params.toolCall;
  const target = tc.path ?? (typeof tc.args.path === "string" ? tc.args.path : undefined) ?? tc.name;
  const fileName = path.basename(target) || "file";
  if (typeof tc.newText === "string") {
    return {
      kind: "sides",
      fileName,
      before: typeof tc.oldText === "string" ? tc.oldText : "",
      after: tc.newText,
      isNewFile: tc.oldText === null || tc.oldText === undefined,
    };
  }
  if (typeof tc.diff === "string" && tc.diff !== "") return { kind: "unified", fileName, diff: tc.diff };
  return undefined;
}

export function approvalPrompt(params: PermissionParams): ApprovalPrompt {
  const tc = params.toolCall;
  let what: string;
  if (tc.command) what = `run \`${oneLine(tc.command, 120)}\``;
  else if (tc.path) what = `${tc.name} ${tc.path}`;
  else what = tc.title || tc.name;
  const outside = params.scope === "outside" ? " (outside the workspace)" : "";
  const who = params.agent ? `Kgent's sub-agent “${params.agent}”` : "Kgent";
  const title = `${who} wants to ${what}${outside}`;
  // "Escape rejects" first: VS Code cuts a long placeholder at the prompt's width.
  const placeholder = `Escape rejects · ${params.risk} risk · ${params.reason}`;

  const preview = diffPreview(params);
  const choices: ApprovalChoice[] = [];
  if (preview !== undefined) {
    choices.push({
      kind: "diff",
      label: "$(diff) Show diff",
      description:
        preview.kind === "sides" && preview.isNewFile
          ? `new file ${preview.fileName}`
          : `current ↔ proposed ${preview.fileName}`,
    });
  } else {
    choices.push({
      kind: "details",
      label: "$(info) Show details",
      description: tc.command ? oneLine(tc.command, 80) : tc.title,
    });
  }
  // Whatever options arrive, in the daemon's order, each with the rule words it carries (what an "always" creates).
  for (const o of params.options) {
    const choice: ApprovalChoice = {
      kind: "option",
      optionId: o.optionId,
      optionKind: o.kind,
      label: `${ICONS[o.kind] ?? "$(question)"} ${o.name}`,
    };
    const scope = optionWords(o).scope;
    if (scope !== undefined) choice.description = scope;
    const line = optionRuleLine(o);
    if (line !== undefined) choice.detail = line;
    choices.push(choice);
  }
  const noRule = noRuleOf(params);
  if (noRule !== undefined)
    choices.push({ kind: "details", label: "$(info) No “always” answer for this call", description: noRule });
  const prompt: ApprovalPrompt = { title, placeholder, choices, preview, details: describeCall(params) };
  if (params.agent) prompt.agent = params.agent;
  return prompt;
}

/** A plain-text account of the call for the "Show details" document. */
export function describeCall(params: PermissionParams): string {
  const tc = params.toolCall;
  const lines = [
    `Kgent asks to call the tool '${tc.name}' (${tc.kind}): ${tc.title}`,
    ``,
    `Reason:    ${params.reason}`,
    `Risk:      ${params.risk}`,
    `Operation: ${params.operation} (${params.scope})`,
  ];
  const noRule = noRuleOf(params);
  if (noRule !== undefined) lines.push(`No rule:   ${noRule}`);
  for (const o of params.options) {
    const w = optionWords(o);
    for (const r of w.rules) lines.push(`${o.name}: ${r.rule} (${r.text})`);
  }
  if (tc.path) lines.push(`Path:      ${tc.path}`);
  if (tc.command) lines.push(``, `Command:`, tc.command);
  lines.push(``, `Arguments:`, JSON.stringify(tc.args, null, 2));
  if (tc.diff) lines.push(``, `Diff:`, tc.diff);
  return `${lines.join("\n")}\n`;
}
