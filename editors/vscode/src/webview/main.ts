// The Kgent panel's page (runs inside the webview, bundled to dist/webview.js): renders the PanelState the extension
// posts (whole when the page loads, then patches: what changed) and sends back what the person does. It holds no
// protocol logic; every decision goes to the extension.

import { approvalCard, focusCard } from "../../../web/src/approval";
import { copyButton } from "../../../web/src/copy";
import { setupSlash } from "../../../web/src/slash";
import { MarkdownStream } from "../../../web/src/stream";
import { appendCodeSpans } from "../../../web/src/text";
import { escapeHtml, panelMarkdown } from "../markdown";
import { applyPatch, type FromPage, type ToPage } from "../panelMessages";
import type {
  ApprovalItem,
  EndItem,
  LiveRun,
  PanelItem,
  PanelState,
  PlanItem,
  RunSection,
  ToolItem,
  UserItem,
} from "../panelItems";
import { optionWords } from "../rules";
import { hasImages, restoreImages, sentImages, setupImages, takeImages } from "./images";

declare function acquireVsCodeApi(): {
  postMessage(m: FromPage): void;
  getState(): unknown;
  setState(s: unknown): void;
};
const vscode = acquireVsCodeApi();
const post = (m: FromPage): void => vscode.postMessage(m);

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const log = $<HTMLDivElement>("log");
const input = $<HTMLTextAreaElement>("input");
const liveBar = $<HTMLDivElement>("live");
const modeSel = $<HTMLSelectElement>("mode");
const modelSel = $<HTMLSelectElement>("model");
const trustNote = $<HTMLDivElement>("trust");
const sessionBar = $<HTMLDivElement>("session");

const rendered = new Map<string, { rev: number; el: HTMLElement }>();
/** One section per run: its heading (which run, from where, running or not), then its items. */
const sections = new Map<string, { el: HTMLElement; head: HTMLElement; key: string }>();
let state: PanelState | undefined;

const STATUS_TEXT: Record<string, string> = {
  pending: "waiting",
  in_progress: "running",
  completed: "done",
  failed: "failed",
};

function el(tag: string, cls?: string, html?: string): HTMLElement {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (html !== undefined) e.innerHTML = html;
  return e;
}

function button(label: string, cls: string, onClick: () => void, title?: string): HTMLButtonElement {
  const b = el("button", cls) as HTMLButtonElement;
  b.textContent = label;
  if (title) b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

function diffHtml(diff: string): string {
  return diff
    .split("\n")
    .map((l) => {
      const cls =
        l.startsWith("+") && !l.startsWith("+++")
          ? "add"
          : l.startsWith("-") && !l.startsWith("---")
            ? "del"
            : l.startsWith("@@")
              ? "hunk"
              : "";
      return `<span class="${cls}">${escapeHtml(l)}</span>`;
    })
    .join("\n");
}

function renderTool(t: ToolItem, wasOpen: boolean | undefined): HTMLElement {
  // A call a cancel cut short did not fail: its badge says "cancelled", not in the failure's colour.
  const shown = t.cancelled === true ? "cancelled" : t.status;
  const d = el(
    "details",
    `tool status-${shown}${t.isError && t.cancelled !== true ? " error" : ""}${t.agent !== undefined ? " sub" : ""}`,
  ) as HTMLDetailsElement;
  d.open = wasOpen ?? (t.status === "in_progress" || t.status === "pending");
  const status = STATUS_TEXT[shown] ?? shown;
  const agent = t.agent !== undefined ? `<span class="agent">↳ ${escapeHtml(t.agent)}</span> ` : "";
  const summary = el("summary", "", `${agent}<span class="badge">${escapeHtml(status)}</span> `);
  // Titles and decisions mark code with backticks: shown as code, not as backticks.
  summary.appendChild(appendCodeSpans(el("span", "tool-title"), t.title));
  if (t.decidedBy) summary.appendChild(appendCodeSpans(el("span", "decided", " · "), t.decidedBy));
  d.appendChild(summary);
  if (t.command) d.appendChild(el("pre", "command", `$ ${escapeHtml(t.command)}`));
  if (t.diff) d.appendChild(el("pre", "diff", diffHtml(t.diff)));
  if (t.diagnostics !== undefined) d.appendChild(renderDiagnostics(t.diagnostics));
  if (t.output) d.appendChild(el("pre", "output", escapeHtml(t.output)));
  return d;
}

/** What the edit's change added in the editor's (or a language server's) eyes: one line per finding. */
function renderDiagnostics(list: NonNullable<ToolItem["diagnostics"]>): HTMLElement {
  if (list.length === 0) return el("div", "diagnostics none", "No new problems after this change.");
  const ul = el("ul", "diagnostics");
  for (const x of list) {
    const code = x.code ? ` ${escapeHtml(String(x.code))}` : "";
    const source = x.source ? ` <span class="source">(${escapeHtml(x.source)})</span>` : "";
    ul.appendChild(
      el(
        "li",
        `sev-${escapeHtml(x.severity)}`,
        `${escapeHtml(x.path)}:${x.line}:${x.column}: ${escapeHtml(x.severity)}${code} ${escapeHtml(x.message)}${source}`,
      ),
    );
  }
  return ul;
}

const PLAN_MARKS: Record<string, string> = { completed: "✓", in_progress: "▸", pending: "○" };

function renderPlan(p: PlanItem): HTMLElement {
  const card = el("div", "card plan");
  const done = p.entries.filter((e) => e.status === "completed").length;
  card.appendChild(
    el("div", "card-title", `<strong>Plan</strong> <span class="plan-count">${done}/${p.entries.length} done</span>`),
  );
  if (p.entries.length === 0) card.appendChild(el("div", "note", "The plan is empty."));
  const ol = el("ol", "plan-entries");
  for (const e of p.entries) {
    const li = el(
      "li",
      `plan-entry status-${e.status} priority-${e.priority}`,
      `<span class="mark">${PLAN_MARKS[e.status] ?? "○"}</span> ${escapeHtml(e.content)}`,
    );
    li.title = `${e.status.replace("_", " ")} · ${e.priority} priority`;
    ol.appendChild(li);
  }
  card.appendChild(ol);
  return card;
}

function countdownText(deadline: number): string {
  const s = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
  return `rejected automatically in ${s} s`;
}

/** The approval card (editors/web/src/approval.ts, shared with the web client) with the panel's own controls. */
function renderApproval(a: ApprovalItem): HTMLElement {
  if (a.state !== "pending") {
    const card = el("div", `card approval ${a.state} risk-${a.risk}`);
    card.dataset.requestId = a.requestId;
    const title = el("div", "card-title");
    title.appendChild(appendCodeSpans(el("strong"), a.title)); // a call's title marks code with backticks
    card.appendChild(title);
    const what =
      a.state === "answered"
        ? `Answered: ${a.answer ?? ""}`
        : "Withdrawn (the run was cancelled or the approval timed out)";
    card.appendChild(appendCodeSpans(el("div", "answer"), what));
    return card;
  }
  const answer = (optionId: string): void => post({ type: "answer", requestId: a.requestId, optionId });
  const extras: HTMLElement[] = [];
  if (a.canOpenDiff) {
    const label = a.canEdit ? "Open diff (editable) in editor" : "Open diff in editor";
    extras.push(button(label, "secondary open-diff", () => post({ type: "openDiff", requestId: a.requestId })));
  }
  if (a.edited === true) {
    extras.push(
      button(
        "Accept my version",
        "accept-mine",
        () => post({ type: "acceptMine", requestId: a.requestId }),
        "Allow once, writing your edited text instead of the proposal",
      ),
    );
  }
  const card = approvalCard(
    {
      requestId: a.requestId,
      title: a.title,
      agent: a.agent,
      reason: a.reason,
      risk: a.risk,
      command: a.command,
      path: a.path,
      diff: a.diff,
      options: a.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind, ...optionWords(o) })),
      noRule: a.noRule,
    },
    { answer, diff: (d) => el("pre", "diff", diffHtml(d)), extras },
  );
  if (a.deadline !== undefined) {
    const c = el("div", "countdown", escapeHtml(countdownText(a.deadline)));
    c.dataset.deadline = String(a.deadline);
    card.appendChild(c);
  }
  return card;
}

function renderEnd(e: EndItem): HTMLElement {
  const div = el("div", `end status-${e.status}`);
  const files =
    e.changedPaths.length === 0
      ? "no files changed"
      : `${e.changedPaths.length} file${e.changedPaths.length === 1 ? "" : "s"} changed`;
  const head =
    e.status === "settled"
      ? `Done · ${files}`
      : e.status === "cancelled"
        ? `Cancelled · ${files}`
        : `Failed: ${e.error ?? "the run failed"}`;
  const tokens = `${e.usage.text} · ${e.turns} turn${e.turns === 1 ? "" : "s"}`;
  div.appendChild(
    el("div", "end-head", `<strong>${escapeHtml(head)}</strong> <span class="usage">${escapeHtml(tokens)}</span>`),
  );
  if (e.changedPaths.length > 0) {
    const ul = el("ul", "files");
    for (const p of e.changedPaths) {
      const li = el("li");
      li.appendChild(
        button(p, "link-button changed-file", () => post({ type: "openFile", workspace: e.workspace, path: p })),
      );
      ul.appendChild(li);
    }
    div.appendChild(ul);
    const row = el("div", "buttons");
    row.appendChild(
      button(
        "Review changes",
        "review",
        () => post({ type: "review", runId: e.runId, sessionId: e.sessionId }),
        "Keep or revert each change, in the diff editor",
      ),
    );
    row.appendChild(button("Show patch", "secondary", () => post({ type: "showPatch", runId: e.runId })));
    div.appendChild(row);
  }
  return div;
}

function renderUser(u: UserItem): HTMLElement {
  const who = u.source === "prompt" ? "You" : u.source === "steer" ? "You (steer)" : "You (follow-up)";
  const div = el(
    "div",
    `msg user source-${u.source}`,
    `<div class="who"><span class="grow">${who}</span></div><div class="text">${escapeHtml(u.text)}</div>`,
  );
  if (u.images?.length) div.appendChild(sentImages(u.images));
  for (const a of u.attachments) {
    const d = el("details", "attachment", `<summary>${escapeHtml(a.name)}</summary><pre>${escapeHtml(a.text)}</pre>`);
    d.title = a.uri;
    div.appendChild(d);
  }
  const entryId = u.entryId;
  if (entryId !== undefined) {
    const b = button(
      "Fork here",
      "link-button fork-here",
      () => post({ type: "forkAt", sessionId: u.sessionId, entryId }),
      "Branch the conversation before this message: it goes back into the input to edit and resend (the old branch is kept)",
    );
    b.dataset.session = u.sessionId;
    div.querySelector(".who")?.appendChild(b);
    const r = button(
      "Restore checkpoint",
      "link-button restore-checkpoint",
      () => post({ type: "rewindAt", sessionId: u.sessionId, entryId }),
      "Bring the files the agent changed since this message back as they were, and branch the conversation before it (you confirm first)",
    );
    r.dataset.session = u.sessionId;
    div.querySelector(".who")?.appendChild(r);
  }
  return div;
}

/** Each answer's stream: a new state with more text renders only its open Markdown block, once a frame (linear,
 * issue 37); 250 ms after the text stopped growing, the answer shows as a one-shot render would (code highlighted). */
const streams = new Map<string, MarkdownStream>();

function assistantNode(id: string, text: string, old: HTMLElement | undefined, agent?: string): HTMLElement {
  let stream = streams.get(id);
  if (stream === undefined || old === undefined) {
    const node = el("div", `msg assistant markdown${agent !== undefined ? " sub" : ""}`);
    const body = el("div", "body");
    // A sub-agent's streamed text sits under its task card, named.
    if (agent !== undefined) node.append(el("div", "agent", `↳ ${escapeHtml(agent)}`));
    node.append(
      copyButton(() => streams.get(id)?.text ?? "", "Copy the answer (its Markdown)"),
      body,
    );
    stream = new MarkdownStream(body, panelMarkdown);
    streams.set(id, stream);
  }
  stream.set(text);
  return stream.node.parentElement as HTMLElement;
}

function renderItem(item: PanelItem, old: HTMLElement | undefined): HTMLElement {
  switch (item.type) {
    case "user":
      return renderUser(item);
    case "assistant":
      return assistantNode(item.id, item.text, old, item.agent);
    case "thinking": {
      // more of the same thinking: only the new text is added
      const shown = old instanceof HTMLDetailsElement ? old.querySelector(".text")?.firstChild : undefined;
      if (shown instanceof Text && item.text.length > shown.data.length && item.text.startsWith(shown.data)) {
        shown.appendData(item.text.slice(shown.data.length));
        return old as HTMLElement;
      }
      const d = el(
        "details",
        "thinking",
        `<summary>Thinking</summary><div class="text">${escapeHtml(item.text)}</div>`,
      ) as HTMLDetailsElement;
      d.open = old instanceof HTMLDetailsElement ? old.open : false;
      return d;
    }
    case "tool":
      return renderTool(item, old instanceof HTMLDetailsElement ? old.open : undefined);
    case "approval":
      return renderApproval(item);
    case "end":
      return renderEnd(item);
    case "plan":
      return renderPlan(item);
    case "note":
      return el("div", `note ${item.severity}`, escapeHtml(item.text));
  }
}

function renderLive(runs: LiveRun[]): void {
  liveBar.innerHTML = "";
  liveBar.hidden = runs.length === 0;
  for (const r of runs) {
    const row = el("div", "live-run");
    const usage = r.usage ? ` · ${r.usage.inputTokens + r.usage.outputTokens} tokens` : "";
    row.appendChild(el("span", "spinner"));
    row.appendChild(el("span", "live-label", `Running: ${escapeHtml(r.label)}${escapeHtml(usage)}`));
    row.appendChild(
      button("Stop", "stop", () => post({ type: "stop", runId: r.runId }), "Cancel this run (Escape in the input)"),
    );
    liveBar.appendChild(row);
    const queued = [...r.steering.map((t) => `steer: ${t}`), ...r.followUp.map((t) => `follow-up: ${t}`)];
    if (queued.length > 0) {
      const q = el("div", "queue", `<span>Queued (read at the next step / when the run would finish):</span>`);
      for (const t of queued) q.appendChild(el("span", "chip", escapeHtml(t)));
      q.appendChild(
        button(
          "Clear",
          "link-button clear-queue",
          () => post({ type: "clearQueue", runId: r.runId }),
          "Drop the queued messages: the model never sees them",
        ),
      );
      liveBar.appendChild(q);
    }
  }
}

function fillSelect(sel: HTMLSelectElement, values: string[], current: string, emptyLabel: string): void {
  const all = values.includes(current) || current === "" ? values : [current, ...values];
  sel.innerHTML = "";
  if (current === "" || !values.includes(current)) {
    const o = document.createElement("option");
    o.value = "";
    o.textContent = emptyLabel;
    sel.appendChild(o);
  }
  for (const v of all) {
    if (v === "") continue;
    const o = document.createElement("option");
    o.value = v;
    o.textContent = v;
    sel.appendChild(o);
  }
  sel.value = current;
}

function sectionHead(sec: RunSection | undefined, runId: string): { html: string; key: string } {
  const label = sec?.label || runId;
  const from = sec?.origin === "panel" ? "" : "Run Task · ";
  const state = sec?.live ? "running" : "ended";
  return {
    html: `<span class="run-from">${escapeHtml(from)}</span><span class="run-label">${escapeHtml(label)}</span> <span class="run-state">${state}</span>`,
    key: `${from}|${label}|${state}`,
  };
}

function sectionFor(runId: string, info: Map<string, RunSection>): HTMLElement {
  let s = sections.get(runId);
  const head = sectionHead(info.get(runId), runId);
  if (s === undefined) {
    const el_ = el("section", "run-section");
    el_.dataset.run = runId;
    const h = el("div", "run-head", head.html);
    el_.appendChild(h);
    s = { el: el_, head: h, key: head.key };
    sections.set(runId, s);
  } else if (s.key !== head.key) {
    s.head.innerHTML = head.html;
    s.key = head.key;
  }
  s.el.classList.toggle("live", info.get(runId)?.live === true);
  s.el.classList.toggle("from-task", info.get(runId)?.origin !== "panel");
  return s.el;
}

// Whether the conversation follows its end: while the person is at (or near) the bottom. Scrolling up stops it and
// scrolling back down resumes it; what is drawn after an update (an answer's Markdown renders a frame later) keeps
// the end in view too, not only what render() itself adds.
let following = true;
log.addEventListener("scroll", () => {
  following = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
});
new MutationObserver(() => {
  if (following) log.scrollTop = log.scrollHeight;
}).observe(log, { childList: true, subtree: true, characterData: true });

function render(s: PanelState): void {
  const stick = following;
  const seen = new Set<string>();
  const fresh: HTMLElement[] = [];
  const seenSections = new Set<string>();
  const info = new Map(s.sections.map((x) => [x.runId, x]));
  // Top level: items outside any run and the runs' sections, in order of first appearance; in a section, its items.
  let prevTop: HTMLElement | undefined;
  const prevIn = new Map<string, HTMLElement>();
  const place = (node: HTMLElement, parent: HTMLElement, before: HTMLElement): void => {
    if (node.parentElement !== parent || node.previousElementSibling !== before) before.after(node);
  };
  for (const item of s.items) {
    seen.add(item.id);
    const cur = rendered.get(item.id);
    let node = cur?.el;
    if (cur === undefined || cur.rev !== item.rev) {
      node = renderItem(item, cur?.el);
      node.dataset.id = item.id;
      if (cur !== undefined && cur.el !== node) cur.el.replaceWith(node);
      if (item.type === "approval" && item.state === "pending" && cur === undefined) fresh.push(node);
      rendered.set(item.id, { rev: item.rev, el: node });
    }
    if (node === undefined) continue;
    const secId = item.section;
    if (secId === undefined) {
      place(node, log, prevTop ?? $("empty"));
      prevTop = node;
      continue;
    }
    const sec = sectionFor(secId, info);
    if (!seenSections.has(secId)) {
      seenSections.add(secId);
      place(sec, log, prevTop ?? $("empty"));
      prevTop = sec;
    }
    place(node, sec, prevIn.get(secId) ?? (sec.firstElementChild as HTMLElement));
    prevIn.set(secId, node);
  }
  for (const [id, r] of rendered) {
    if (!seen.has(id)) {
      r.el.remove();
      rendered.delete(id);
      streams.delete(id);
    }
  }
  for (const card of fresh) focusCard(card);
  for (const [id, sec] of sections) {
    if (!seenSections.has(id)) {
      sec.el.remove();
      sections.delete(id);
    }
  }
  $("empty").hidden = s.items.length > 0;
  renderLive(s.live);
  // A session with a live run cannot be branched until the run ends.
  const busy = new Set(s.live.map((r) => r.sessionId));
  for (const b of log.querySelectorAll<HTMLButtonElement>("button.fork-here, button.restore-checkpoint"))
    b.disabled = busy.has(b.dataset.session ?? "");
  fillSelect(modeSel, s.choices.modes, s.choices.mode, "mode");
  fillSelect(
    modelSel,
    s.choices.models,
    s.choices.model,
    s.choices.provider ? `${s.choices.provider} default` : "default model",
  );
  trustNote.hidden = s.trusted;
  input.disabled = !s.trusted;
  $<HTMLButtonElement>("send").disabled = !s.trusted;
  $<HTMLButtonElement>("attach").disabled = !s.trusted;
  $("composer").classList.toggle("disabled", !s.trusted);
  renderSessionBar(s);
  input.placeholder = !s.trusted
    ? "Kgent is off in Restricted Mode: trust the folder to use it"
    : s.live.length > 0
      ? "Enter: follow up · Ctrl+Enter: steer now · Esc: stop"
      : "Ask Kgent… (Enter sends, Shift+Enter: new line, @path attaches a file)";
  if (stick) log.scrollTop = log.scrollHeight;
}

/**
 * The lines above the conversation, two at most whatever the side bar's width: which session the next message goes
 * to and the sandbox, then how full the context is and the session's total so far (each cut with an ellipsis when
 * narrow; the whole text in its tooltip).
 */
function renderSessionBar(s: PanelState): void {
  sessionBar.innerHTML = "";
  const what =
    s.sessionId === undefined
      ? "New conversation"
      : s.sessionResumed
        ? `Continuing: ${s.sessionLabel ?? s.sessionId}`
        : `Conversation: ${s.sessionLabel ?? s.sessionId}`;
  const head = el("div", "session-head");
  const label = el("span", "session-label", escapeHtml(what));
  label.title = what;
  head.appendChild(label);
  if (s.sandbox !== undefined) {
    const sb = el("span", `sandbox${s.sandbox.warn ? " warn" : ""}`, escapeHtml(s.sandbox.text));
    sb.title = s.sandbox.tooltip;
    head.appendChild(sb);
  }
  sessionBar.appendChild(head);
  if (s.sessionId === undefined) return;
  const figures: HTMLElement[] = [];
  if (s.sessionContext !== undefined) figures.push(contextGauge(s.sessionContext));
  if (s.sessionUsage !== undefined) {
    // The daemon's words: the tokens, and "≈ $…" when the model has a price (a host computes no cost of its own).
    const total = el("span", "session-usage", escapeHtml(`session total: ${s.sessionUsage.text}`));
    total.title = "Tokens (and cost, when the model's price is known) of every model call of this session so far";
    figures.push(total);
  }
  if (figures.length === 0) return;
  const row = el("div", "session-figures");
  figures.forEach((f, i) => {
    if (i > 0) row.append(" · ");
    row.appendChild(f);
  });
  row.title = row.textContent ?? "";
  sessionBar.appendChild(row);
}

/** How full the model's context is: a small bar filled to the daemon's share, then the daemon's text ("context 24k
 *  of 200k tokens (12%)"); a host computes neither. Near the window (compaction comes soon) it turns a warning. */
function contextGauge(c: NonNullable<PanelState["sessionContext"]>): HTMLElement {
  const percent = Math.min(100, Math.max(0, c.percent));
  const gauge = el("span", `session-context${percent >= 80 ? " near-full" : ""}`);
  const bar = el("span", "gauge");
  bar.setAttribute("role", "meter");
  bar.setAttribute("aria-valuemin", "0");
  bar.setAttribute("aria-valuemax", "100");
  bar.setAttribute("aria-valuenow", String(percent));
  bar.setAttribute("aria-label", c.text);
  const fill = el("span", "gauge-fill");
  fill.style.width = `${percent}%`; // CSSOM: allowed by the page's style-src (no inline style attribute)
  bar.appendChild(fill);
  gauge.append(bar, c.text);
  gauge.title =
    "What the model's context held after the last call (its whole prompt and answer), of its context window; Kgent compacts the conversation as it nears the window";
  return gauge;
}

function send(as?: "steer" | "followUp"): void {
  const text = input.value;
  if (as === undefined && hasImages()) {
    input.value = "";
    post({ type: "send", text, images: takeImages() }); // images start a run: steering takes text only
    return;
  }
  if (text.trim() === "") return;
  input.value = "";
  post(as === undefined ? { type: "send", text } : { type: "send", text, as });
}
setupImages(input, $("composer"), $("images"), (text) => {
  const note = el("div", "note error");
  note.textContent = text;
  log.appendChild(note);
});

const slash = setupSlash(input, $<HTMLUListElement>("slash-menu"), () => post({ type: "listCommands" }));
input.addEventListener("keydown", (ev) => {
  const live = (state?.live.length ?? 0) > 0;
  if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    send(live ? (ev.ctrlKey || ev.metaKey ? "steer" : "followUp") : undefined);
  } else if (ev.key === "Escape" && live) {
    ev.preventDefault();
    post({ type: "stop" });
  }
});
$("send").addEventListener("click", () => send((state?.live.length ?? 0) > 0 ? "followUp" : undefined));
$("attach").addEventListener("click", () => post({ type: "attachSelection" }));
$("new").addEventListener("click", () => post({ type: "newConversation" }));
$("historyButton").addEventListener("click", () => post({ type: "history" }));
modeSel.addEventListener("change", () => post({ type: "setMode", mode: modeSel.value }));
modelSel.addEventListener("change", () => post({ type: "setModel", model: modelSel.value }));

setInterval(() => {
  for (const c of document.querySelectorAll<HTMLElement>("[data-deadline]"))
    c.textContent = countdownText(Number(c.dataset.deadline));
}, 1000);

window.addEventListener("message", (ev: MessageEvent<ToPage>) => {
  const m = ev.data;
  if (m.type === "state") {
    state = m.state;
    render(state);
  } else if (m.type === "patch") {
    // The first message to a page is the whole state: a patch before it has nothing to apply to.
    if (state !== undefined) {
      state = applyPatch(state, m.patch);
      render(state);
    }
  } else if (m.type === "focusInput") input.focus();
  else if (m.type === "insert") {
    const at = input.selectionStart ?? input.value.length;
    input.value = `${input.value.slice(0, at)}${m.text}${input.value.slice(at)}`;
    input.focus();
  } else if (m.type === "setInput") {
    input.value = m.append === true && input.value.trim() !== "" ? `${input.value.trimEnd()}\n\n${m.text}` : m.text;
    if (m.images) restoreImages(m.images);
    input.focus();
  } else if (m.type === "commands") slash.show(m.commands);
});
post({ type: "ready" });
