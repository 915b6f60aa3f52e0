// Kgent's web client: one page over the HTTP front (protocol-http.md). Sessions on the left; the conversation, tool
// cards, approval cards and run summaries in the middle; events arrive over one SSE stream per open session.

import { escapeHtml, renderDiff, renderMarkdown } from "./markdown.js";
import { EventStream } from "./sse.js";

const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
};

const state = {
  token: null,
  info: null,
  sessionId: null,
  runId: null, // the live run shown, if any
  stream: null,
  applied: new Map(), // runId → last seq applied (a replayed event is never applied twice)
  seen: [], // "runId:seq" of every event applied, in order (for tests: no gaps, no repeats)
  tools: new Map(), // toolCallId → card
  bubble: null, // the assistant message being streamed
  thinking: null,
};

// -- the API ---------------------------------------------------------------------------------------------------------
async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${state.token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await res.json().catch(() => ({}));
  if (res.status === 401) askToken();
  if (!res.ok) {
    const err = new Error(data?.error?.message || `HTTP ${res.status}`);
    err.status = res.status;
    err.code = data?.error?.data?.code;
    throw err;
  }
  return data;
}

function askToken() {
  sessionStorage.removeItem("kgent.token");
  const dialog = $("token-dialog");
  if (!dialog.open) dialog.showModal();
}

// -- the log ---------------------------------------------------------------------------------------------------------
const log = () => $("log");
function append(node) {
  const box = log();
  const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 80;
  box.append(node);
  if (atBottom) box.scrollTop = box.scrollHeight;
  return node;
}
function notice(text, cls = "notice") {
  return append(el("div", cls, text));
}

function userMessage(text, source, entry) {
  const node = el("div", "msg user");
  if (source && source !== "prompt") node.append(el("span", "src", source === "steer" ? "steer" : "follow-up"));
  if (entry?.parentId) {
    const fork = el("button", "fork", "Fork here");
    fork.type = "button";
    fork.title = "Continue the session from before this message";
    fork.onclick = () => forkAt(entry.parentId);
    node.append(fork);
  }
  node.append(document.createTextNode(text));
  return append(node);
}

function assistantMessage(text) {
  const node = el("div", "msg assistant");
  node.dataset.raw = text || "";
  node.innerHTML = renderMarkdown(text || "");
  return append(node);
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
  head.append(el("span", "kind", call.kind || call.name), el("span", "title", call.title || call.name), el("span", "status", "pending"));
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
  if (ev.diff && !card.querySelector(".diff")) {
    const d = renderDiff(ev.diff);
    d.classList.add("tool-diff");
    card.append(d);
  }
}

function approvalCard(ev) {
  const call = ev.toolCall || {};
  const card = state.tools.get(call.toolCallId) || toolCard(call);
  const box = el("div", ev.parentRunId ? "approval sub-agent" : "approval");
  box.dataset.requestId = ev.requestId;
  box.append(el("div", "why", `${ev.reason} (risk: ${ev.risk})`));
  if (call.command) box.append(el("div", "command", call.command));
  if (call.diff) box.append(renderDiff(call.diff));
  else if (call.path) box.append(el("div", "path", call.path));
  const buttons = el("div", "buttons");
  for (const option of ev.options || []) {
    const b = el("button", option.kind.startsWith("allow") ? "primary" : "danger", option.name);
    b.type = "button";
    b.dataset.optionId = option.optionId;
    b.onclick = () => answer(box, option.optionId);
    buttons.append(b);
  }
  box.append(buttons);
  card.append(box);
  const logBox = log();
  logBox.scrollTop = logBox.scrollHeight;
}

async function answer(box, optionId) {
  for (const b of box.querySelectorAll("button")) b.disabled = true;
  try {
    await api("POST", `/api/permissions/${encodeURIComponent(box.dataset.requestId)}`, { outcome: "selected", optionId });
  } catch (err) {
    if (err.status !== 409) {
      for (const b of box.querySelectorAll("button")) b.disabled = false;
      notice(`could not answer: ${err.message}`);
    }
  }
}

const DECISIONS = { allow_once: "allowed once", allow_always: "allowed for this session", reject_once: "rejected", reject_always: "rejected always" };
function resolved(ev) {
  const card = state.tools.get(ev.toolCallId);
  const box = ev.requestId ? document.querySelector(`.approval[data-request-id="${CSS.escape(ev.requestId)}"]`) : null;
  const who = { host: "", policy: " by the mode", session_rule: " by a session rule", timeout: " (no answer in time)" }[ev.source] ?? "";
  const text = `${DECISIONS[ev.decision] || ev.decision}${who}`;
  const line = el("div", `decision ${ev.approved === undefined ? "" : ev.approved ? "approved" : "rejected"}`, text);
  if (box) {
    box.classList.add("closed");
    box.querySelector(".buttons")?.remove();
    box.append(line);
  } else if (card) card.append(line);
}

// A sub-agent's (the `task` tool's) events go to its own run's stream; its approvals are asked here, on the card of
// the task call that started it: while a task call runs, the pending approvals naming this run as parent are polled.
let subAgentTimer = null;
function watchSubAgents() {
  if (subAgentTimer) return;
  const parent = state.runId;
  subAgentTimer = setInterval(async () => {
    const live = parent && state.runId === parent;
    if (!live) {
      clearInterval(subAgentTimer);
      subAgentTimer = null;
    }
    const { permissions } = live ? await api("GET", "/api/permissions").catch(() => ({ permissions: [] })) : { permissions: [] };
    const open = new Set();
    for (const p of permissions) {
      if (p.parentRunId !== parent) continue;
      open.add(p.requestId);
      if (document.querySelector(`.approval[data-request-id="${CSS.escape(p.requestId)}"]`)) continue;
      const call = { ...(p.toolCall || {}), title: `sub-agent "${p.agent || "task"}": ${p.toolCall?.title || ""}` };
      approvalCard({ ...p, toolCall: call });
    }
    for (const box of document.querySelectorAll(".approval.sub-agent:not(.closed)")) {
      if (!open.has(box.dataset.requestId)) resolved({ requestId: box.dataset.requestId, decision: "answered" });
    }
  }, 500);
}

function runEnd(ev) {
  const node = el("div", `run-end ${ev.status}`);
  const cost = ev.usage?.cost ? ` · $${ev.usage.cost.amount.toFixed(4)}` : "";
  const tokens = ev.usage ? ev.usage.inputTokens + ev.usage.cacheReadTokens + ev.usage.cacheWriteTokens : 0;
  node.append(el("div", "", `Run ${ev.status} (${ev.stopReason}) · ${ev.turns} turn(s) · ${tokens} in / ${ev.usage?.outputTokens ?? 0} out${cost}`));
  if (ev.error) node.append(el("div", "", `${ev.error.code}: ${ev.error.message}`));
  if (ev.changedPaths?.length) {
    node.append(el("div", "", "Changed files:"));
    const list = el("ul", "changed");
    for (const path of ev.changedPaths) list.append(el("li", "", path));
    node.append(list);
  }
  if (ev.patch) {
    const details = el("details", "patch");
    details.append(el("summary", "", "Patch"), renderDiff(ev.patch));
    node.append(details);
  }
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
      userMessage(ev.text, ev.source);
      break;
    case "message_delta":
      if (ev.kind === "thinking") {
        if (!state.thinking) state.thinking = thinkingBlock("");
        state.thinking.lastChild.textContent += ev.delta;
      } else {
        if (!state.bubble) state.bubble = assistantMessage("");
        state.bubble.dataset.raw += ev.delta;
        state.bubble.innerHTML = renderMarkdown(state.bubble.dataset.raw);
      }
      break;
    case "message_end": {
      const text = ev.message?.text || "";
      if (state.bubble) {
        state.bubble.dataset.raw = text;
        state.bubble.innerHTML = renderMarkdown(text);
        if (!text) state.bubble.remove();
      } else if (text) assistantMessage(text);
      if (ev.message?.error) notice(`model error: ${ev.message.error}`);
      state.bubble = null;
      state.thinking = null;
      break;
    }
    case "tool_call":
      toolCard(ev);
      if (ev.name === "task") watchSubAgents();
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
    case "queue_update": {
      const waiting = [...ev.steering, ...ev.followUp];
      if (waiting.length) notice(`queued: ${waiting.join(" · ")}`, "queue");
      break;
    }
    case "retry":
      notice(`retrying the model call (${ev.attempt}/${ev.maxAttempts}): ${ev.error}`);
      break;
    case "compaction":
      notice(`compaction ${ev.status}${ev.tokensAfter ? `: ${ev.tokensBefore} → ${ev.tokensAfter} tokens` : ""}`);
      break;
    case "run_end":
      runEnd(ev);
      setRunning(null);
      loadSessions();
      break;
    default:
      break; // event types this page does not know yet
  }
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
}

function watch(sessionId, runId) {
  state.stream?.close();
  const q = runId ? `?runId=${encodeURIComponent(runId)}` : "";
  state.stream = new EventStream(`/api/sessions/${encodeURIComponent(sessionId)}/events${q}`, {
    token: state.token,
    onEvent,
    onState: setConn,
  });
}

// -- sessions --------------------------------------------------------------------------------------------------------
function resetLog(title) {
  log().replaceChildren();
  state.tools.clear();
  state.bubble = state.thinking = null;
  state.applied.clear();
  state.seen = [];
  $("session-title").textContent = title;
  setRunning(null);
}

function showEntries(entries, upTo) {
  for (const e of entries) {
    if (e.type === "message") {
      const m = e.message;
      if (m.role === "user") userMessage(m.text, "prompt", e);
      else if (m.role === "assistant") {
        if (m.thinking) thinkingBlock(m.thinking);
        if (m.text) assistantMessage(m.text);
        for (const call of m.toolCalls || []) {
          const args = call.arguments || {};
          const what = args.command ?? args.path ?? args.pattern ?? JSON.stringify(args);
          toolCard({ toolCallId: call.id, name: call.name, title: `${call.name} ${what}` });
        }
      } else if (m.role === "tool") {
        toolUpdate({ toolCallId: m.toolCallId, status: m.isError ? "failed" : "completed", output: m.content, diff: m.details?.diff });
      }
    } else if (e.type === "permission") {
      resolved({ toolCallId: e.toolCallId, decision: e.decision, approved: e.approved, source: e.source });
    } else if (e.type === "compaction") {
      notice("(earlier messages were compacted)");
    }
    if (e.id === upTo) break;
  }
}

async function openSession(sessionId) {
  const s = await api("GET", `/api/sessions/${encodeURIComponent(sessionId)}?branchOnly=true`);
  resetLog(`${s.title || "Untitled"} · ${sessionId}`);
  state.sessionId = sessionId;
  location.hash = `session=${sessionId}`;
  let upTo = undefined;
  if (s.liveRunId) {
    const run = await api("GET", `/api/runs/${encodeURIComponent(s.liveRunId)}`).catch(() => null);
    upTo = run ? run.baseEntryId : undefined;
  }
  if (upTo !== null) showEntries(s.entries, upTo);
  watch(sessionId, s.liveRunId || null);
  highlightSession();
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

async function loadSessions() {
  const ws = $("workspace").value;
  if (!ws) return;
  try {
    const { sessions } = await api("GET", `/api/sessions?workspace=${encodeURIComponent(ws)}`);
    const list = $("sessions");
    list.replaceChildren();
    for (const s of sessions) {
      const li = el("li");
      li.dataset.id = s.sessionId;
      li.append(el("span", "title", s.title || "Untitled"));
      const meta = el("span", "meta", `${s.entryCount} entries · ${new Date(s.updated).toLocaleString()}`);
      if (s.liveRunId) meta.append(el("span", "live", " · running"));
      li.append(meta);
      li.onclick = () => openSession(s.sessionId);
      list.append(li);
    }
    highlightSession();
  } catch (err) {
    notice(`could not list sessions: ${err.message}`);
  }
}

// -- the composer ----------------------------------------------------------------------------------------------------
async function send() {
  const text = $("prompt").value;
  if (!text.trim() || state.runId) return;
  const [provider, ...model] = $("model").value.split("/");
  const body = { prompt: text, mode: $("mode").value, provider, model: model.join("/") };
  if (state.sessionId) body.sessionId = state.sessionId;
  else body.workspace = $("workspace").value;
  $("send").disabled = true;
  try {
    const run = await api("POST", "/api/runs", body);
    $("prompt").value = "";
    setRunning(run.runId);
    if (state.sessionId !== run.sessionId || !state.stream) {
      state.sessionId = run.sessionId;
      location.hash = `session=${run.sessionId}`;
      $("session-title").textContent = `${text.split("\n")[0].slice(0, 80)} · ${run.sessionId}`;
      watch(run.sessionId, run.runId);
      loadSessions();
    }
  } catch (err) {
    notice(`could not start the run: ${err.message}`);
    setRunning(null);
  }
}

async function queue(kind) {
  const text = $("prompt").value;
  if (!text.trim() || !state.runId) return;
  try {
    await api("POST", `/api/runs/${encodeURIComponent(state.runId)}/${kind}`, { text });
    $("prompt").value = "";
  } catch (err) {
    notice(`${kind} failed: ${err.message}`);
  }
}

function newSession() {
  state.stream?.close();
  state.stream = null;
  state.sessionId = null;
  history.replaceState(null, "", location.pathname);
  resetLog("New session");
  highlightSession();
  $("prompt").focus();
}

// -- start -----------------------------------------------------------------------------------------------------------
function fill(select, values, selected) {
  select.replaceChildren();
  for (const [value, label] of values) {
    const o = el("option", "", label);
    o.value = value;
    o.selected = value === selected;
    select.append(o);
  }
}

async function start() {
  const params = new URLSearchParams(location.search);
  if (params.has("token")) {
    sessionStorage.setItem("kgent.token", params.get("token"));
    history.replaceState(null, "", location.pathname + location.hash); // the token leaves the address bar
  }
  state.token = sessionStorage.getItem("kgent.token");
  if (!state.token) {
    askToken();
    return;
  }
  const [info, roots] = await Promise.all([api("GET", "/api/info"), api("GET", "/api/workspaces")]);
  state.info = info;
  const caps = info.capabilities;
  fill($("workspace"), roots.roots.map((r) => [r, r]), roots.roots[0]);
  fill($("mode"), caps.modes.map((m) => [m, m]), caps.defaultMode);
  for (const o of $("mode").options) o.title = caps.modeDescriptions?.[o.value] ?? "";
  const models = [];
  for (const [provider, names] of Object.entries(caps.models)) for (const m of names) models.push([`${provider}/${m}`, `${provider} · ${m}`]);
  fill($("model"), models, `${caps.defaultProvider}/${caps.defaultModel}`);
  await loadSessions();
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("session")) await openSession(hash.get("session")).catch((err) => notice(`could not open the session: ${err.message}`));
}

$("composer").onsubmit = (e) => { e.preventDefault(); send(); };
$("prompt").onkeydown = (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); send(); } };
$("stop").onclick = () => state.runId && api("POST", `/api/runs/${encodeURIComponent(state.runId)}/cancel`).catch((err) => notice(err.message));
$("steer").onclick = () => queue("steer");
$("follow-up").onclick = () => queue("followUp");
$("new-session").onclick = newSession;
$("refresh-sessions").onclick = loadSessions;
$("workspace").onchange = () => { newSession(); loadSessions(); };
$("token-form").onsubmit = () => {
  sessionStorage.setItem("kgent.token", $("token-input").value.trim());
  start().catch((err) => notice(err.message));
};

// For tests and debugging: cut the event stream as a network blip would.
window.kgent = { state, dropStream: () => state.stream?.drop(), escapeHtml };
start().catch((err) => notice(`could not start: ${err.message}`));
