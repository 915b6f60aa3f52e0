// The approval card of every page: what the call does (title, reason, risk, the command or the diff), one primary
// action (allow once, Enter), Reject beside it (Escape), and the lasting answers in a menu, each with the rule it
// creates in the file syntax and in words. Keys: A / R, 1–9 for the menu's answers, M opens the menu. The host
// answers (`answer(optionId)`) and adds its own controls (open the diff, accept my version).

import { appendCodeSpans, button, el } from "./text";

export interface OptionRule {
  rule: string;
  text: string;
}
export interface ApprovalOption {
  optionId: string;
  name: string;
  kind: string;
  scope?: string;
  rules?: OptionRule[];
}
export interface ApprovalView {
  requestId: string;
  /** What the call does, in words ("Run a command", "edit sample.py"). */
  title: string;
  /** A sub-agent's name when a sub-agent asks. */
  agent?: string;
  reason: string;
  risk: string;
  command?: string;
  path?: string;
  diff?: string;
  options: ApprovalOption[];
  /** Why no lasting answer is offered (the server's sentence). */
  noRule?: string;
}
export interface ApprovalHooks {
  answer(optionId: string): void;
  /** The card's diff, drawn by the host (each host styles diffs its own way). */
  diff?(diff: string): HTMLElement;
  /** Host controls placed after the buttons (Open diff in editor, Accept my version …). */
  extras?: HTMLElement[];
}

const SCOPE_WORDS: Record<string, string> = {
  session: "this session",
  project: "this project",
  user: "all your projects",
};

/** Which option is the primary action, which the plain reject, and the lasting rest (in the server's order). */
export function arrange(options: ApprovalOption[]): {
  primary?: ApprovalOption;
  reject?: ApprovalOption;
  lasting: ApprovalOption[];
} {
  const primary = options.find((o) => o.kind === "allow_once") ?? options.find((o) => o.kind.startsWith("allow"));
  const reject = options.find((o) => o.kind === "reject_once");
  return { primary, reject, lasting: options.filter((o) => o !== primary && o !== reject) };
}

/** A key hint, drawn by the stylesheet from data-key (`kbd::after`), so a button's text stays its option's name. */
function kbd(key: string): HTMLElement {
  const k = el("kbd");
  k.dataset.key = key;
  return k;
}

function optionButton(o: ApprovalOption, key: string, cls: string, hooks: ApprovalHooks): HTMLButtonElement {
  const b = button("", () => hooks.answer(o.optionId), `opt ${o.kind} ${o.optionId} ${cls}`.trim());
  appendCodeSpans(b, o.name);
  b.append(kbd(key));
  b.dataset.optionId = o.optionId;
  b.dataset.kind = o.kind;
  b.dataset.key = key;
  b.setAttribute("aria-keyshortcuts", key);
  if (o.scope !== undefined) b.dataset.scope = o.scope;
  b.title = `${o.name.replace(/`/g, "")} (key ${key})`;
  return b;
}

/** The rules a lasting option creates, a line each: its scope badge, the rule in the file syntax, and in words. */
function ruleLines(o: ApprovalOption): HTMLElement[] {
  const rules: (OptionRule | undefined)[] = o.rules?.length ? o.rules : o.scope !== undefined ? [undefined] : [];
  return rules.map((r) => {
    const line = el("div", `rule-line ${o.kind}`);
    line.dataset.optionId = o.optionId;
    if (o.scope !== undefined) {
      const badge = el("span", `scope scope-${o.scope}`, o.scope);
      badge.title = `lasts ${SCOPE_WORDS[o.scope] ?? o.scope}`;
      line.append(badge, " ");
    }
    if (r !== undefined) line.append(el("code", "rule", r.rule), " ", appendCodeSpans(el("span", "rule-text"), r.text));
    else line.append(el("span", "rule-text", `lasts ${SCOPE_WORDS[o.scope ?? ""] ?? o.scope}`));
    return line;
  });
}

export function approvalCard(v: ApprovalView, hooks: ApprovalHooks): HTMLElement {
  const card = el("div", `card approval pending risk-${v.risk}`);
  card.tabIndex = 0;
  card.dataset.requestId = v.requestId;
  card.setAttribute("role", "group");
  card.setAttribute("aria-label", `Approval: ${v.title}`);
  const title = el("div", "card-title");
  title.append(el("strong", "who", v.agent !== undefined ? `Sub-agent “${v.agent}” wants to:` : "Kgent wants to:"));
  title.append(" ", appendCodeSpans(el("span", "what"), v.title));
  card.append(title);
  const why = appendCodeSpans(el("div", "card-why why"), v.reason);
  why.append(" · ", el("span", "risk", `${v.risk} risk`));
  card.append(why);
  if (v.command) card.append(el("pre", "command", v.command)); // its "$ " drawn by the stylesheet
  if (v.diff) card.append(hooks.diff ? hooks.diff(v.diff) : el("pre", "diff", v.diff));
  else if (v.path && !v.command) card.append(el("div", "path", v.path));

  const { primary, reject, lasting } = arrange(v.options);
  const keys = new Map<string, ApprovalOption>();
  const row = el("div", "buttons");
  if (primary) {
    row.append(optionButton(primary, "A", "primary", hooks));
    keys.set("a", primary);
  }
  if (reject) {
    row.append(optionButton(reject, "R", "secondary", hooks));
    keys.set("r", reject);
  }
  let menu: HTMLDetailsElement | undefined;
  if (lasting.length > 0) {
    menu = el("details", "more");
    const summary = el("summary", "secondary", "Always…");
    summary.append(kbd("M"));
    summary.title = "Answers that last: for this session, this project or all your projects (key M)";
    const list = el("ul", "lasting");
    lasting.forEach((o, i) => {
      const key = String(i + 1);
      keys.set(key, o);
      const li = el("li");
      li.append(optionButton(o, key, "", hooks));
      li.append(...ruleLines(o));
      list.append(li);
    });
    menu.append(summary, list);
    // Opened (by M or a click), the whole list is brought into view: a card near the bottom of the log would show
    // only the first answer, and the keys of the others are what to press next.
    menu.addEventListener("toggle", () => {
      if (menu?.open) list.scrollIntoView({ block: "nearest" });
    });
    row.append(menu);
  }
  for (const extra of hooks.extras ?? []) row.append(extra);
  card.append(row);
  if (v.noRule !== undefined) card.append(el("div", "no-rule", `No “always” answer: ${v.noRule}`, true));

  card.addEventListener("keydown", (e) => {
    const t = e.target as HTMLElement;
    if (e.altKey || e.ctrlKey || e.metaKey || t instanceof HTMLTextAreaElement || t instanceof HTMLInputElement) return;
    const onControl = t instanceof HTMLButtonElement || t.tagName === "SUMMARY";
    let o: ApprovalOption | undefined;
    if (e.key === "Enter" && !onControl) o = primary;
    else if (e.key === "Escape" && menu?.open) {
      e.preventDefault();
      menu.open = false;
      menu.querySelector("summary")?.focus();
      return;
    } else if (e.key === "Escape") o = reject;
    else if (e.key.toLowerCase() === "m" && menu) {
      e.preventDefault();
      menu.open = !menu.open;
      if (menu.open) menu.querySelector<HTMLButtonElement>("button")?.focus();
      return;
    } else o = keys.get(e.key.toLowerCase());
    if (o === undefined) return;
    e.preventDefault();
    hooks.answer(o.optionId);
  });
  return card;
}

/** Put the focus on a new card unless the person is typing something else (a non-empty input keeps it). */
export function focusCard(card: HTMLElement): void {
  const active = document.activeElement;
  const typing =
    (active instanceof HTMLTextAreaElement || active instanceof HTMLInputElement) && active.value.trim() !== "";
  if (!typing) card.focus({ preventScroll: false });
}

/** A settled card: its buttons and rule lines go, one line says how it was decided (backticks shown as code). */
export function settleCard(card: HTMLElement, label: string, approved: boolean | undefined, state = "answered"): void {
  card.classList.remove("pending");
  card.classList.add(state, "closed");
  for (const sel of [".buttons", ".no-rule", ".edit-proposal"]) card.querySelector(sel)?.remove();
  const cls = approved === undefined ? "" : approved ? "approved" : "rejected";
  card.append(el("div", `decision answer ${cls}`.trim(), label, true));
  card.removeAttribute("tabindex");
}
