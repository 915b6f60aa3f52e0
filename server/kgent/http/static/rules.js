// Rules and approve with changes in the web client: the proposed text editable in the card ("Accept my version"
// answers allow_once with newText; the card itself, with each lasting answer's rules, is page.js's), and the Rules
// dialog (GET /api/rules, POST /api/rules, POST /api/rules/remove; protocol-http.md).

import { api } from "./api.js";
import { button, el } from "./render.js";
import { currentProject } from "./setup.js";

const $ = (id) => document.getElementById(id);

// The proposal as an editable text with "Accept my version": allow once with the textarea's text as the file's new
// content (no newText when it is unchanged: a plain allow once).
function editableProposal(box, ev, info, answer) {
  const call = ev.toolCall || {};
  const allow =
    (ev.options || []).find((o) => o.optionId === "allow_once") ||
    (ev.options || []).find((o) => o.kind === "allow_once");
  if (typeof call.newText !== "string" || !allow || !info?.capabilities?.permissionNewText) return;
  const details = el("details", "edit-proposal");
  details.append(el("summary", "", "Edit the proposal"));
  const text = el("textarea", "proposal");
  text.value = call.newText;
  text.spellcheck = false;
  text.rows = Math.min(20, Math.max(4, call.newText.split("\n").length + 1));
  const accept = button(
    "Accept my version",
    () => answer(box, allow.optionId, text.value === call.newText ? undefined : text.value),
    "primary accept-mine",
  );
  details.append(text, accept);
  box.querySelector(".buttons")?.before(details);
}

// Called by the approval card once it is built (app.js): `answer(box, optionId, newText?)` answers it.
export function decorateApproval(box, ev, info, answer) {
  editableProposal(box, ev, info, answer);
}

// -- the Rules dialog ------------------------------------------------------------------------------------------------
const SCOPES = [
  ["session", "Session rules (until the session ends)"],
  ["project", "Project rules (this project only)"],
  ["user", "User rules (every project)"],
];

async function removeRule(item) {
  const body = { workspace: currentProject(), rule: item.rule, decision: item.decision, scope: item.scope };
  if (item.sessionId) body.sessionId = item.sessionId;
  await api("POST", "/api/rules/remove", body);
  await loadRules();
}

function renderRules(res) {
  const body = $("rules-body");
  body.replaceChildren();
  const files = res.files || {};
  if (files.project) {
    const trust = res.projectTrusted ? "" : " (not trusted: its allows are ignored, its denies kept)";
    body.append(el("div", "muted rules-file", `Project file: ${files.project}${trust}`));
  }
  if (files.personal && !res.projectTrusted) {
    body.append(el("div", "muted rules-file", `Your project rules (they count): ${files.personal}`));
  }
  if (files.user) body.append(el("div", "muted rules-file", `User file: ${files.user}`));
  for (const [scope, title] of SCOPES) {
    const section = el("section", "rules-scope");
    section.dataset.scope = scope;
    section.append(el("h3", "", title));
    const list = el("ul", "rules-list");
    for (const item of (res.rules || []).filter((r) => r.scope === scope)) {
      const li = el("li", `rule-item ${item.decision}`);
      li.dataset.rule = item.rule;
      li.dataset.decision = item.decision;
      li.append(el("span", "decision", item.decision), " ", el("code", "rule", item.rule), " ");
      li.append(el("span", "rule-text", item.text || "", true));
      const remove = button("Remove", () => removeRule(item).catch((err) => showError(err)), "danger remove-rule");
      remove.title = "Remove this rule";
      li.append(remove);
      list.append(li);
    }
    if (!list.children.length) list.append(el("li", "muted", "none"));
    section.append(list);
    body.append(section);
  }
}

function showError(err) {
  $("rules-error").textContent = err ? err.message : "";
}

export async function loadRules() {
  showError(null);
  const ws = currentProject();
  const res = await api("GET", `/api/rules?workspace=${encodeURIComponent(ws)}`);
  renderRules(res);
  return res;
}

async function addRule(e) {
  e.preventDefault();
  const body = {
    workspace: currentProject(),
    rule: $("rule-input").value.trim(),
    decision: $("rule-decision").value,
    scope: $("rule-scope").value,
  };
  try {
    await api("POST", "/api/rules", body);
    $("rule-input").value = "";
    await loadRules();
  } catch (err) {
    showError(err);
  }
}

export function setupRules() {
  $("rules").onclick = () => {
    $("rules-dialog").showModal();
    loadRules().catch((err) => showError(err));
  };
  $("rules-close").onclick = () => $("rules-dialog").close();
  $("rule-form").onsubmit = addRule;
}
