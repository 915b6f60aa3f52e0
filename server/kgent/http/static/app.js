// Kgent's web client: one page over the HTTP front (protocol-http.md). Sessions on the left; the conversation, tool
// cards, approval cards and run summaries in the middle; events arrive over one SSE stream per open session.

import { api, signIn, signOut, whenUnauthorised } from "./api.js";
import { notifications, refreshAttention, setupNotify } from "./attention.js";
import { clearShownQueue, queued, showQueue } from "./queue.js";
import {
  approvalCard as sharedApprovalCard,
  copied,
  copyButton,
  focusCard,
  setupSlash,
  settleCard,
  streamTotals,
} from "./page.js";
import { button, el, markdownStream, renderDiff, renderedHtml, renderMarkdownInto, streamedHtml } from "./render.js";
import { closeReview, openReview, setupReview } from "./review.js";
import { decorateApproval, setupRules } from "./rules.js";
import { rewindButton, rewindPicker } from "./rewind.js";
import { commandAnswer, isCommand, rememberMenu, setupExport, showExport } from "./commands.js";
import { currentProject, runChoice, setupPickers, setupProject, whenProject } from "./setup.js";
import { EventStream } from "./sse.js";
import { followSubRun, stopSubRuns } from "./subruns.js";
import { giveBackImages, hasImages, imageChips, setupImages, takeImages } from "./images.js";
import { sessionPicked, setupLayout, showFirstUse } from "./layout.js";
import { offerFullOutput, wasCut } from "./output.js";

const $ = (id) => document.getElementById(id);

const state = {
  info: null,
  sessionId: null,
  runId: null, // the live run shown, if any
  stream: null,
  applied: new Map(), // runId → last seq applied (a replayed event is never applied twice)
  seen: [], // "runId:seq" of every event applied, in order (for tests: no gaps, no repeats)
  tools: new Map(), // toolCallId → card
  bubble: null, // the assistant message being streamed: {node, stream}
  thinking: null,
  sessions: [], // the project's sessions as last listed
  ended: new Set(), // runs whose run_end was shown (a fast run can end before its POST /api/runs answers)
  starting: false, // a send on its way (a second Ctrl+Enter meanwhile is not a second run)
};

function askToken() {
  const dialog = $("token-dialog");
  if (!dialog.open) dialog.showModal();
}
whenUnauthorised(askToken);

// -- the log ---------------------------------------------------------------------------------------------------------
const log = () => $("log");
function append(node) {
  showFirstUse(false);
  const box = log();
  const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 80;
  box.append(node);
  if (atBottom) box.scrollTop = box.scrollHeight;
  return node;
}
// While the log was scrolled to its end, it stays there as a streamed answer grows.
let stick = true;
let sticking = false;
function keepAtBottom() {
  if (!stick || sticking) return;
  sticking = true;
  requestAnimationFrame(() => {
    sticking = false; // after the stream's own render of this frame
    if (stick) log().scrollTop = log().scrollHeight;
  });
}
function notice(text, cls = "notice") {
  return append(el("div", cls, text));
}

function forkButton(node, entry) {
  if (!entry?.parentId || node.querySelector(".fork")) return;
  const fork = button("Fork here", () => forkAt(entry.parentId), "fork");
  fork.title = "Continue the session from before this message (the current branch stays one click away)";
  node.querySelector(".src") ? node.querySelector(".src").after(fork) : node.prepend(fork);
  rewindButton(node, entry, fork, rewindContext);
}
const rewindContext = {
  sessionId: () => state.sessionId,
  reopen: () => openSession(state.sessionId),
  notice,
  compose: (text) => {
    $("prompt").value = text;
    $("prompt").focus();
  },
  busy: () => !!state.runId,
};

function userMessage(text, source, entry, images) {
  const node = el("div", "msg user");
  if (source && source !== "prompt") node.append(el("span", "src", source === "steer" ? "steer" : "follow-up"));
  forkButton(node, entry);
  node.append(document.createTextNode(text));
  if (images?.length) node.append(imageChips(images, state.sessionId));
  return append(node);
}

// After a run, its user messages (shown from events) get their session entries' Fork buttons.
function attachForks(session) {
  const onBranch = new Set(session.branch);
  const users = session.entries.filter((e) => onBranch.has(e.id) && e.type === "message" && e.message.role === "user");
  const nodes = [...document.querySelectorAll("#log .msg.user")];
  if (users.length !== nodes.length) return;
  for (const [i, node] of nodes.entries()) forkButton(node, users[i]);
}

// An answer: its Markdown in a body, a Copy button for the whole text (its label drawn by the stylesheet).
function assistantMessage(text) {
  const node = el("div", "msg assistant");
  const body = el("div", "body");
  node.dataset.raw = text || "";
  node.append(
    copyButton(() => node.dataset.raw, "Copy the answer (its Markdown)"),
    body,
  );
  renderMarkdownInto(body, text || "");
  return append(node);
}

// A streamed answer: deltas are drawn once a frame, rendering only the Markdown block still open (render.js,
// markdownStream).
function streamedMessage() {
  const node = assistantMessage("");
  return { node, stream: markdownStream(node.querySelector(".body")) };
}

function thinkingBlock(text) {
  const node = el("details", "thinking");
  node.append(el("summary", "", "thinking"), el("div", "", text));
  return append(node);
}

function toolCard(call) {
  let card = state.tools.get(call.toolCallId);
  if (card) return card;
  card = el("div", "card tool");
  card.dataset.status = "pending";
  card.dataset.toolCallId = call.toolCallId;
  const head = el("div", "head");
  head.append(
    el("span", "kind", call.kind || call.name),
    el("span", "title", call.title || call.name),
    el("span", "status", "pending"),
  );
  card.append(head);
  if (call.command) card.append(el("pre", "command", `$ ${call.command}`));
  state.tools.set(call.toolCallId, card);
  return append(card);
}

function toolUpdate(ev) {
  const card = state.tools.get(ev.toolCallId) || toolCard({ toolCallId: ev.toolCallId, name: "tool" });
  card.dataset.status = ev.status;
  card.querySelector(".status").textContent = ev.status.replace("_", " ");
  if (ev.output !== undefined && ev.output !== null) {
    let out = card.querySelector("pre.output");
    if (!out) out = card.appendChild(el("pre", "output"));
    out.textContent = ev.output;
    out.scrollTop = out.scrollHeight;
  }
  // The card shows the tail; the whole output was saved with the session (output.js).
  if ((ev.status === "completed" || ev.status === "failed") && wasCut(ev.details))
    offerFullOutput(card, () => state.sessionId, ev.toolCallId, notice);
  if (ev.diff && !card.querySelector(".diff")) {
    const d = renderDiff(ev.diff);
    d.classList.add("tool-diff");
    card.append(d);
  }
  // A task call's sub-agent started: its own events go live into this card (subruns.js).
  if (ev.status === "in_progress" && ev.details?.runId)
    followSubRun(card, ev.details.runId, ev.details.agent, { ask: approvalCard, settle: resolved, notice });
}

// The approval card (page.js, shared with the VS Code panel): Allow once (Enter), Reject (Escape), the lasting
// answers in a menu with their rules; it takes the focus when it appears. `into`: where a sub-agent's goes (its row
// in the sub-run's box under its task card, subruns.js).
function approvalCard(ev, into) {
  const call = ev.toolCall || {};
  const card = into || state.tools.get(call.toolCallId) || toolCard(call);
  const outside = ev.scope === "outside" ? " (outside the workspace)" : "";
  const title = call.command ? `Run a command${outside}` : `${call.title || call.name || "a tool"}${outside}`;
  let box = null;
  box = sharedApprovalCard(
    {
      requestId: ev.requestId,
      title,
      agent: ev.agent ?? undefined,
      reason: ev.reason,
      risk: ev.risk,
      command: call.command ?? undefined,
      path: call.path ?? undefined,
      diff: call.diff ?? undefined,
      options: ev.options || [],
      noRule: ev.noRule ?? undefined,
    },
    { answer: (optionId) => answer(box, optionId), diff: renderDiff },
  );
  if (ev.parentRunId) box.classList.add("sub-agent");
  decorateApproval(box, ev, state.info, answer);
  card.append(box);
  const logBox = log();
  logBox.scrollTop = logBox.scrollHeight;
  focusCard(box);
  refreshAttention();
}

async function answer(box, optionId, newText) {
  for (const b of box.querySelectorAll("button")) b.disabled = true;
  try {
    const body = newText === undefined ? { outcome: "selected", optionId } : { outcome: "selected", optionId, newText };
    await api("POST", `/api/permissions/${encodeURIComponent(box.dataset.requestId)}`, body);
  } catch (err) {
    if (err.status !== 409) {
      for (const b of box.querySelectorAll("button")) b.disabled = false;
      notice(`could not answer: ${err.message}`);
    }
  }
}

function resolved(ev) {
  const card = state.tools.get(ev.toolCallId);
  const box = ev.requestId ? document.querySelector(`.approval[data-request-id="${CSS.escape(ev.requestId)}"]`) : null;
  // The server's words for the decision (permission_resolved's label: "always allowed in this project", "allowed by
  // the project rule `bash(grep *)`"); an approval closed by the page (withdrawn, answered elsewhere) or a decision of
  // an older session has none.
  const text = ev.label || (ev.approved === undefined ? ev.decision : ev.approved ? "allowed" : "rejected");
  if (box) settleCard(box, text, ev.approved, ev.decision === "withdrawn" ? "withdrawn" : "answered");
  else if (card)
    card.append(
      el("div", `decision ${ev.approved === undefined ? "" : ev.approved ? "approved" : "rejected"}`, text, true),
    );
  refreshAttention();
}

// What changed in a run, each file a link into the review, and the whole patch.
function changes(node, runId, paths, patch) {
  if (paths?.length) {
    node.append(el("div", "", "Changed files:"));
    const list = el("ul", "changed");
    for (const path of paths) {
      const li = el("li");
      li.append(button(path, () => reviewRun(runId, path), "link"));
      list.append(li);
    }
    node.append(list);
    node.append(button("Review changes", () => reviewRun(runId), "review-run-button"));
  }
  if (patch) {
    const details = el("details", "patch");
    details.append(el("summary", "", "Patch"), renderDiff(patch));
    node.append(details);
  }
}

async function reviewRun(runId, path) {
  await openReview(state.sessionId, runId);
  if (path) document.querySelector(`.review-file[data-path="${CSS.escape(path)}"]`)?.scrollIntoView({ block: "start" });
}

function runEnd(runId, ev) {
  const node = el("div", `run-end ${ev.status}`);
  node.dataset.runId = runId;
  const cost = ev.usage?.cost ? ` · $${ev.usage.cost.amount.toFixed(4)}` : "";
  const tokens = ev.usage ? ev.usage.inputTokens + ev.usage.cacheReadTokens + ev.usage.cacheWriteTokens : 0;
  node.append(
    el(
      "div",
      "",
      `Run ${ev.status} (${ev.stopReason}) · ${ev.turns} turn(s) · ${tokens} in / ${ev.usage?.outputTokens ?? 0} out${cost}`,
    ),
  );
  if (ev.error) node.append(el("div", "", `${ev.error.code}: ${ev.error.message}`));
  changes(node, runId, ev.changedPaths, ev.patch);
  append(node);
}

// -- events ----------------------------------------------------------------------------------------------------------
function onEvent(params) {
  const last = state.applied.get(params.runId);
  if (last !== undefined && params.seq <= last) return; // already shown
  state.applied.set(params.runId, params.seq);
  state.seen.push(`${params.runId}:${params.seq}`);
  const ev = params.event;
  switch (ev.type) {
    case "run_start":
      setRunning(params.runId);
      notice(`run ${params.runId} · ${ev.mode} · ${ev.provider}/${ev.model}`);
      break;
    case "user_message":
      userMessage(ev.text, ev.source, undefined, ev.images);
      break;
    case "message_delta":
      if (ev.kind === "thinking") {
        if (!state.thinking) state.thinking = thinkingBlock("");
        const text = state.thinking.lastChild;
        // appended to its text node: `textContent +=` copies all the thinking so far on every delta
        if (text.firstChild) text.firstChild.appendData(ev.delta);
        else text.textContent = ev.delta;
      } else {
        if (!state.bubble) state.bubble = streamedMessage();
        state.bubble.stream.append(ev.delta);
        keepAtBottom();
      }
      break;
    case "message_end": {
      const text = ev.message?.text || "";
      if (state.bubble) {
        state.bubble.node.dataset.raw = text;
        state.bubble.stream.end(text); // as renderMarkdownInto(text) draws it: code highlighted, every block closed
        if (!text) state.bubble.node.remove();
        keepAtBottom();
      } else if (text) assistantMessage(text);
      if (ev.message?.error) notice(`model error: ${ev.message.error}`);
      state.bubble = null;
      state.thinking = null;
      break;
    }
    case "tool_call":
      toolCard(ev);
      break;
    case "tool_update":
      toolUpdate(ev);
      break;
    case "permission_request":
      approvalCard(ev);
      break;
    case "permission_resolved":
      resolved(ev);
      break;
    case "queue_update":
      showQueue(params.runId, ev);
      break;
    case "usage":
      if (ev.context && !params.parentRunId) showContext(ev.context);
      break;
    case "retry":
      notice(`retrying the model call (${ev.attempt}/${ev.maxAttempts}): ${ev.error}`);
      break;
    case "instructions":
      notice(instructionsLine(ev.files));
      break;
    case "compaction":
      notice(`compaction ${ev.status}${ev.tokensAfter ? `: ${ev.tokensBefore} → ${ev.tokensAfter} tokens` : ""}`);
      break;
    case "run_end":
      ended(params.runId, ev);
      break;
    default:
      break; // event types this page does not know yet
  }
}

// The instruction files (AGENTS.md, CLAUDE.md) that entered the model's context, as one line of the session view.
function instructionsLine(files) {
  const what = { new: "loaded", changed: "re-read", removed: "dropped" };
  return (
    "instructions " +
    files.map((f) => `${what[f.change] || f.change} ${f.path}${f.truncated ? " (cut at 32 KiB)" : ""}`).join(" · ")
  );
}

function ended(runId, ev) {
  state.ended.add(runId);
  runEnd(runId, ev);
  // What was still queued when the run ended was not sent: say so, and put it back in the composer.
  const left = queued.runId === runId ? queued.items.map((i) => i.text) : [];
  clearShownQueue();
  if (left.length) {
    const box = $("prompt");
    box.value = [...left, box.value].filter((t) => t.trim()).join("\n\n");
    notice(
      `${left.length} queued message(s) were not sent (the run ${ev.status === "cancelled" ? "was stopped" : "ended"}); they are back in the composer.`,
      "queue-dropped",
    );
  } else if (ev.status === "cancelled") notice("Stopped: nothing was queued.", "queue-dropped");
  for (const box of document.querySelectorAll(".approval:not(.closed)"))
    resolved({ requestId: box.dataset.requestId, decision: "withdrawn" });
  setRunning(null);
  loadSessions();
  if (state.sessionId) showBranches(state.sessionId);
}

function setRunning(runId) {
  state.runId = runId;
  $("stop").disabled = $("steer").disabled = $("follow-up").disabled = !runId;
  $("send").disabled = !!runId;
  document.body.dataset.running = runId ? "yes" : "no";
}

function setConn(s) {
  const conn = $("conn");
  conn.dataset.state = s;
  conn.textContent = { live: "connected", retry: "reconnecting…", ended: "idle", closed: "closed" }[s] || s;
  if (s === "closed") api("GET", "/api/info").catch(() => {}); // a 401 asks to sign in again
}

function watch(sessionId, runId) {
  state.stream?.close();
  stopSubRuns();
  const q = runId ? `?runId=${encodeURIComponent(runId)}` : "";
  state.stream = new EventStream(`/api/sessions/${encodeURIComponent(sessionId)}/events${q}`, {
    onEvent,
    onState: setConn,
  });
}

// -- sessions --------------------------------------------------------------------------------------------------------
// "context 24k of 200k tokens (12%)": how full the model's context was after the session's last model call.
function showContext(ctx) {
  const box = $("context");
  if (!ctx) {
    box.hidden = true;
    return;
  }
  box.textContent = ctx.text; // the server's words and share (protocol.md: a host computes neither)
  box.classList.toggle("near-full", ctx.percent >= 80); // compaction comes soon
  box.hidden = false;
}

function resetLog(title) {
  log().replaceChildren();
  showFirstUse(title === "New session");
  showContext(null);
  state.tools.clear();
  state.bubble = state.thinking = null;
  state.applied.clear();
  state.seen = [];
  $("session-title").textContent = title;
  $("branches").replaceChildren();
  clearShownQueue();
  closeReview();
  setRunning(null);
  refreshAttention();
}

function showEntries(entries, upTo) {
  for (const e of entries) {
    if (e.type === "message") {
      const m = e.message;
      if (m.role === "user") userMessage(m.text, "prompt", e, m.images);
      else if (m.role === "assistant") {
        if (m.thinking) thinkingBlock(m.thinking);
        if (m.text) assistantMessage(m.text);
        for (const call of m.toolCalls || []) {
          const args = call.arguments || {};
          const what = args.command ?? args.path ?? args.pattern ?? JSON.stringify(args);
          toolCard({ toolCallId: call.id, name: call.name, title: `${call.name} ${what}` });
        }
      } else if (m.role === "tool") {
        toolUpdate({
          toolCallId: m.toolCallId,
          status: m.isError ? "failed" : "completed",
          output: m.content,
          diff: m.details?.diff,
          details: m.details,
        });
      }
    } else if (e.type === "permission") {
      resolved({ toolCallId: e.toolCallId, decision: e.decision, approved: e.approved, label: e.label });
    } else if (e.type === "instructions" && e.files?.length) {
      notice(instructionsLine(e.files));
    } else if (e.type === "compaction") {
      notice("(earlier messages were compacted)");
    } else if (e.type === "review" && e.files?.length) {
      const node = el("div", "run-end resumed");
      node.dataset.runId = e.runId;
      node.append(el("div", "", `Run ${e.runId} changed ${e.files.length} file(s)`));
      changes(
        node,
        e.runId,
        e.files.map((f) => f.path),
        null,
      );
      append(node);
    }
    if (e.id === upTo) break;
  }
}

// The session's branches, each named by its last prompt: every leaf of the tree (a fork leaves the old branch in it)
// and, when the session's leaf has children (a fork or rewind moved it back, and nothing has been said since), the
// new branch that starts there — so the old conversation is offered as a branch at once, not after the next prompt.
function branchesOf(s) {
  const children = new Map();
  const byId = new Map(s.entries.map((e) => [e.id, e]));
  for (const e of s.entries) if (e.parentId) children.set(e.parentId, (children.get(e.parentId) || 0) + 1);
  const insideSubRun = (e) => {
    for (let x = e; x; x = byId.get(x.parentId)) if (x.type === "subrun") return true;
    return false;
  };
  const leaves = s.entries.filter((e) => !children.has(e.id) && !insideSubRun(e));
  const lastPrompt = (leaf) => {
    for (let x = leaf; x; x = byId.get(x.parentId))
      if (x.type === "message" && x.message.role === "user") return x.message.text;
    return "(empty)";
  };
  const branches = leaves.map((leaf) => ({ leafId: leaf.id, prompt: lastPrompt(leaf) }));
  const here = byId.get(s.leafId);
  if (here && children.has(here.id)) {
    const before = lastPrompt(here);
    branches.push({ leafId: here.id, prompt: before === "(empty)" ? "(new, from the start)" : `${before} (new)` });
  }
  return branches;
}

async function showBranches(sessionId, s) {
  const session = s || (await api("GET", `/api/sessions/${encodeURIComponent(sessionId)}`).catch(() => null));
  if (!session || state.sessionId !== sessionId) return;
  if (!s) attachForks(session);
  const box = $("branches");
  box.replaceChildren();
  const branches = branchesOf(session);
  if (branches.length < 2) return;
  const onBranch = new Set(session.branch);
  box.append(el("span", "muted", "Branches:"));
  branches.forEach((b, i) => {
    const current = onBranch.has(b.leafId);
    const label = `${i + 1}: ${b.prompt.split("\n")[0].slice(0, 30)}`;
    const bt = button(label, () => switchBranch(b.leafId), current ? "branch current" : "branch");
    bt.disabled = current || !!state.runId;
    bt.title = current ? "The branch shown" : "Show this branch (your next prompt continues it)";
    box.append(bt);
  });
}

async function switchBranch(leafId) {
  await api("POST", `/api/sessions/${encodeURIComponent(state.sessionId)}/fork`, { entryId: leafId });
  await openSession(state.sessionId);
}

async function openSession(sessionId) {
  const s = await api("GET", `/api/sessions/${encodeURIComponent(sessionId)}`);
  resetLog(`${s.title || "Untitled"} · ${sessionId}`);
  state.sessionId = sessionId;
  showExport(sessionId);
  history.replaceState(null, "", `#session=${sessionId}`); // no history entry: Back has nothing to undo here
  let upTo;
  if (s.liveRunId) {
    const run = await api("GET", `/api/runs/${encodeURIComponent(s.liveRunId)}`).catch(() => null);
    upTo = run ? run.baseEntryId : undefined;
  }
  const onBranch = new Set(s.branch);
  if (upTo !== null)
    showEntries(
      s.entries.filter((e) => onBranch.has(e.id)),
      upTo,
    );
  watch(sessionId, s.liveRunId || null);
  highlightSession();
  showBranches(sessionId, s);
}

async function forkAt(entryId) {
  try {
    await api("POST", `/api/sessions/${encodeURIComponent(state.sessionId)}/fork`, { entryId });
    await openSession(state.sessionId);
    notice("Forked: your next prompt continues from here.");
  } catch (err) {
    notice(`fork failed: ${err.message}`);
  }
}

function highlightSession() {
  for (const li of $("sessions").children) li.classList.toggle("current", li.dataset.id === state.sessionId);
}

// A title being edited in place ({ input, redraw }): a listing that arrives meanwhile (a run ended, a search answered)
// is drawn when the rename ends.
let renaming = null;

// The sessions as the server listed them: with words in the search box, those whose title, id, prompts or answers
// hold every word (the server reads the conversations: agent/sessions {query}).
function showSessions() {
  if (renaming?.input.isConnected) {
    renaming.redraw = true; // drawn when the rename ends: a redraw now would drop the title being typed
    return;
  }
  const list = $("sessions");
  const focused = focusedRow();
  list.replaceChildren();
  for (const s of state.sessions) {
    const li = el("li");
    li.dataset.id = s.sessionId;
    const title = el("span", "title", s.title || "Untitled");
    title.title = "Double-click to rename";
    title.ondblclick = (e) => {
      e.stopPropagation();
      renameInPlace(li, s);
    };
    // Rename and Delete in words, always shown (no hover needed, no emoji a font may lack); the row itself opens the
    // session by click, Enter or Space, and is reached by Tab.
    const tools = el("span", "session-tools");
    tools.append(
      button(
        "Rename",
        (e) => {
          e.stopPropagation();
          renameInPlace(li, s);
        },
        "rename",
        `Rename “${s.title || "Untitled"}”`,
      ),
      button(
        "Delete",
        (e) => {
          e.stopPropagation();
          askDelete(s);
        },
        "delete danger",
        `Delete “${s.title || "Untitled"}”…`,
      ),
    );
    li.append(title, tools);
    const meta = el("span", "meta", `${s.entryCount} entries · ${new Date(s.updated).toLocaleString()}`);
    if (s.liveRunId) meta.append(el("span", "live", " · running"));
    li.append(meta);
    li.tabIndex = 0;
    li.setAttribute("role", "button");
    li.setAttribute("aria-label", `Open the session “${s.title || "Untitled"}”`);
    const open = () => {
      openSession(s.sessionId);
      sessionPicked();
    };
    li.onclick = open;
    li.onkeydown = (e) => {
      if (e.target === li && (e.key === "Enter" || e.key === " ")) {
        e.preventDefault();
        open();
      }
    };
    list.append(li);
  }
  highlightSession();
  refocusRow(focused);
}

// A list drawn again (a run ended, a search answered) leaves the keyboard where it was: on the same session's row, or
// on the same one of its buttons.
function focusedRow() {
  const active = document.activeElement;
  const row = active?.closest?.("#sessions li");
  if (!row) return null;
  return { id: row.dataset.id, button: [...row.querySelectorAll("button")].indexOf(active) };
}
function refocusRow(focused) {
  if (!focused) return;
  const row = [...$("sessions").children].find((li) => li.dataset.id === focused.id);
  (focused.button >= 0 ? row?.querySelectorAll("button")[focused.button] : row)?.focus();
}

// The title edited in place: Enter saves (an empty title goes back to the derived one), Esc or leaving cancels.
function renameInPlace(li, s) {
  const title = li.querySelector(".title");
  const input = el("input", "rename-input");
  input.value = s.title || "";
  input.maxLength = 200;
  input.onclick = (e) => e.stopPropagation();
  const mine = { input, redraw: false };
  renaming = mine;
  let done = false;
  const finish = async (save) => {
    if (done) return;
    done = true;
    if (renaming === mine) renaming = null;
    if (save && input.value.trim() !== (s.title || "")) {
      try {
        await api("PATCH", `/api/sessions/${encodeURIComponent(s.sessionId)}`, { title: input.value });
      } catch (err) {
        notice(`rename failed: ${err.message}`);
      }
      await loadSessions();
      if (state.sessionId === s.sessionId) {
        const now = state.sessions.find((x) => x.sessionId === s.sessionId);
        if (now) $("session-title").textContent = `${now.title || "Untitled"} · ${s.sessionId}`;
      }
    } else {
      input.replaceWith(title);
      if (mine.redraw) showSessions();
    }
  };
  input.onkeydown = (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      finish(true);
    } else if (e.key === "Escape") {
      e.preventDefault();
      finish(false);
    }
  };
  input.onblur = () => finish(false);
  title.replaceWith(input);
  input.focus();
  input.select();
}

// Delete asks first, in the page's own dialog; the session leaves the list (and the view, if it was open).
function askDelete(s) {
  const dialog = $("delete-dialog");
  $("delete-name").textContent = s.title || s.sessionId;
  $("delete-confirm").onclick = async () => {
    dialog.close();
    try {
      await api("DELETE", `/api/sessions/${encodeURIComponent(s.sessionId)}`);
    } catch (err) {
      notice(`delete failed: ${err.message}`);
      return;
    }
    if (state.sessionId === s.sessionId) newSession();
    await loadSessions();
  };
  $("delete-cancel").onclick = () => dialog.close();
  dialog.showModal();
}

let listed = 0; // the newest listing asked for: an older answer that arrives later is not shown
async function loadSessions() {
  const ws = currentProject();
  if (!ws) return;
  const query = $("session-search").value.trim();
  const ask = ++listed;
  try {
    const { sessions } = await api(
      "GET",
      `/api/sessions?workspace=${encodeURIComponent(ws)}${query ? `&query=${encodeURIComponent(query)}` : ""}`,
    );
    if (ask !== listed) return;
    state.sessions = sessions;
    showSessions();
  } catch (err) {
    if (ask === listed) notice(`could not list sessions: ${err.message}`);
  }
}

// Typing in the search box asks the server once the typing pauses.
const SEARCH_PAUSE_MS = 250;
let searchTimer;
function searchSessions() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(loadSessions, SEARCH_PAUSE_MS);
}

// -- the composer ----------------------------------------------------------------------------------------------------
// Each request takes the text it was given and the box is emptied at once, so what is typed while a request is in
// flight stays; a request that fails puts its text back (before anything typed since).
function takeText() {
  const box = $("prompt");
  const text = box.value;
  if (text.trim()) box.value = "";
  return text;
}
function giveBack(text) {
  const box = $("prompt");
  box.value = box.value.trim() ? `${text}\n\n${box.value}` : text;
}

async function send() {
  if (state.runId || state.starting || (!$("prompt").value.trim() && !hasImages())) return;
  state.starting = true;
  try {
    // Sent before the server said which projects it serves (a quick typist, a slow link): it goes once that is known.
    if (!state.sessionId && !currentProject()) await whenProject();
    if (isCommand($("prompt").value, currentProject())) await command();
    else await startRun();
  } finally {
    state.starting = false;
  }
}

// A slash command that is no prompt (`/help`, `/clear`, `/rewind`…): the server says its action and answers it; the
// page shows the answer, starts afresh or opens the rewind flow. The text goes back to the composer on an error.
async function command() {
  const text = takeText();
  const body = state.sessionId ? { text, sessionId: state.sessionId } : { text, workspace: currentProject() };
  let answer;
  try {
    answer = await api("POST", "/api/command", body);
  } catch (err) {
    giveBack(text);
    notice(`${text.trim().split(/\s/)[0]} failed: ${err.message}`);
    return;
  }
  if (answer.action === "prompt") await startRun(text);
  else if (answer.action === "newSession") {
    newSession();
    if (answer.text) notice(answer.text);
  } else if (answer.action === "rewind") await rewindPicker(rewindContext);
  else append(commandAnswer(text, answer));
}

async function startRun(text = takeText()) {
  const images = takeImages();
  const prompt = images.length
    ? [...(text.trim() ? [{ type: "text", text }] : []), ...images.map(({ size, ...b }) => b)]
    : text;
  const body = { prompt, ...runChoice() };
  if (state.sessionId) body.sessionId = state.sessionId;
  else body.workspace = currentProject();
  $("send").disabled = true;
  try {
    const run = await api("POST", "/api/runs", body);
    if (!state.ended.has(run.runId)) setRunning(run.runId);
    if (state.sessionId !== run.sessionId || !state.stream) {
      state.sessionId = run.sessionId;
      showExport(run.sessionId);
      history.replaceState(null, "", `#session=${run.sessionId}`);
      $("session-title").textContent = `${text.split("\n")[0].slice(0, 80)} · ${run.sessionId}`;
      watch(run.sessionId, run.runId);
      loadSessions();
    }
  } catch (err) {
    giveBack(text);
    giveBackImages(images);
    notice(`could not start the run: ${err.message}`);
    setRunning(null);
  }
}

async function queue(kind) {
  if (!state.runId || !$("prompt").value.trim()) return;
  const runId = state.runId;
  const text = takeText();
  try {
    await api("POST", `/api/runs/${encodeURIComponent(runId)}/${kind}`, { text });
  } catch (err) {
    giveBack(text);
    notice(`${kind === "steer" ? "steer" : "follow-up"} failed: ${err.message}`);
  }
}

async function stop() {
  if (!state.runId) return;
  try {
    await api("POST", `/api/runs/${encodeURIComponent(state.runId)}/cancel`);
  } catch (err) {
    notice(err.message);
  }
}

function newSession() {
  state.stream?.close();
  stopSubRuns();
  state.stream = null;
  state.sessionId = null;
  showExport(null);
  history.replaceState(null, "", location.pathname);
  resetLog("New session");
  highlightSession();
  $("prompt").focus();
}

// -- start -----------------------------------------------------------------------------------------------------------
async function start() {
  const params = new URLSearchParams(location.search);
  if (params.has("token")) {
    const token = params.get("token");
    history.replaceState(null, "", location.pathname + location.hash); // the token leaves the address bar
    if (!(await signIn(token))) {
      askToken();
      return;
    }
  }
  let info;
  try {
    info = await api("GET", "/api/info");
  } catch (err) {
    if (err.status !== 401) throw err;
    return; // the sign-in dialog is open
  }
  $("token-dialog").close();
  state.info = info;
  setupPickers(info);
  const { roots } = await api("GET", "/api/workspaces");
  setupProject(roots, () => {
    newSession();
    loadSessions();
  });
  await loadSessions();
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("session"))
    await openSession(hash.get("session")).catch((err) => notice(`could not open the session: ${err.message}`));
  else showFirstUse(!state.sessionId && !log().children.length); // an empty page says how to begin
}

$("composer").onsubmit = (e) => {
  e.preventDefault();
  send();
};
$("prompt").onkeydown = (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    send();
  }
};
$("stop").onclick = stop;
setupImages({
  box: $("prompt"),
  composer: $("composer"),
  picker: $("attach-image"),
  input: $("image-input"),
  chips: $("images"),
  problem: (text) => notice(text),
});
$("steer").onclick = () => queue("steer");
$("follow-up").onclick = () => queue("followUp");
$("new-session").onclick = newSession;
$("refresh-sessions").onclick = loadSessions;
$("session-search").oninput = searchSessions;
$("sign-out").onclick = async () => {
  await signOut();
  state.stream?.close();
  askToken();
};
$("token-form").onsubmit = async (e) => {
  e.preventDefault();
  const input = $("token-input");
  const tried = input.value;
  const ok = await signIn(tried.trim());
  if (input.value === tried) input.value = ""; // not what was typed meanwhile
  $("token-error").hidden = ok;
  if (ok) start().catch((err) => notice(err.message));
};
setupLayout();
setupReview();
setupRules();
setupNotify();
const slash = setupSlash($("prompt"), $("slash-menu"), () => {
  const ws = currentProject();
  api("GET", `/api/commands?workspace=${encodeURIComponent(ws)}`)
    .then((r) => {
      rememberMenu(ws, r.menu);
      slash.show(r.menu);
    })
    .catch(() => slash.show([]));
});
setupExport(() => state.sessionId, notice);
log().addEventListener("scroll", () => {
  const box = log();
  stick = box.scrollHeight - box.scrollTop - box.clientHeight < 80;
});
// In `kgent desktop` (its URL says ?desktop=1) the window closes from the page; the server stops with it.
if (new URLSearchParams(location.search).has("desktop")) sessionStorage.setItem("kgent.desktop", "1");
if (sessionStorage.getItem("kgent.desktop")) {
  $("close-window").hidden = false;
  $("close-window").onclick = () => window.close();
}

// For tests and debugging: cut the event stream as a network blip would.
window.kgent = {
  state,
  queued,
  notifications,
  streamTotals,
  copied,
  dropStream: () => state.stream?.drop(),
  // the streamed render against a one-shot one (tests, bench/render.py)
  markdownStream,
  renderedHtml,
  streamedHtml,
};
start().catch((err) => notice(`could not start: ${err.message}`));
