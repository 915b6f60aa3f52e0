// Review in the page: the session's (or one run's) changes per file and hunk, each with Accept / Reject, and the same
// for a whole file or run (agent/review, agent/applyReview over HTTP). A hunk whose lines changed since cannot be
// reverted: its conflict is shown on it.

import { api } from "./api.js";
import { button, el } from "./render.js";

const $ = (id) => document.getElementById(id);
const view = { sessionId: null, runId: null, outcomes: new Map() }; // hunkId → last outcome {outcome, message}

export function setupReview() {
  $("review-close").onclick = closeReview;
}

export function closeReview() {
  $("review").hidden = true;
  view.sessionId = null;
}

export async function openReview(sessionId, runId) {
  view.sessionId = sessionId;
  view.runId = runId || null;
  view.outcomes.clear();
  $("review").hidden = false;
  await refresh();
}

async function refresh() {
  const q = view.runId ? `?runId=${encodeURIComponent(view.runId)}` : "";
  const body = $("review-body");
  let result;
  try {
    result = await api("GET", `/api/sessions/${encodeURIComponent(view.sessionId)}/review${q}`);
  } catch (err) {
    body.replaceChildren(el("div", "notice", `could not load the review: ${err.message}`));
    return;
  }
  body.replaceChildren();
  if (!result.runs.length) body.append(el("div", "muted", "No changes to review."));
  for (const run of result.runs) body.append(runBox(run));
}

const ids = (hunks, pred = () => true) => hunks.filter(pred).map((h) => h.id);
const pending = (h) => h.status === "pending";

function runBox(run) {
  const box = el("div", "review-run");
  box.dataset.runId = run.runId;
  const all = run.files.flatMap((f) => f.hunks);
  const head = el("div", "review-run-head");
  head.append(el("span", "", `Run ${run.runId}`));
  head.append(
    button("Accept run", () => decide(ids(all, pending), []), "accept-run"),
    button(
      "Reject run",
      () =>
        decide(
          [],
          ids(all, (h) => h.status !== "rejected"),
        ),
      "reject-run danger",
    ),
  );
  box.append(head);
  for (const file of run.files) box.append(fileBox(file));
  return box;
}

function fileBox(file) {
  const box = el("div", "review-file");
  box.dataset.path = file.path;
  const head = el("div", "review-file-head");
  const note = file.created ? " (new)" : file.deleted ? " (deleted)" : "";
  head.append(el("code", "path", file.path + note));
  head.append(
    button("Accept file", () => decide(ids(file.hunks, pending), []), "accept-file"),
    button(
      "Reject file",
      () =>
        decide(
          [],
          ids(file.hunks, (h) => h.status !== "rejected"),
        ),
      "reject-file danger",
    ),
  );
  box.append(head);
  for (const h of file.hunks) box.append(hunkBox(h));
  return box;
}

function hunkBox(h) {
  const box = el("div", "review-hunk");
  box.dataset.hunkId = h.id;
  box.dataset.status = h.status;
  const head = el("div", "review-hunk-head");
  head.append(
    el("span", "where", `@@ -${h.oldStart},${h.oldCount} +${h.newStart},${h.newCount} @@`),
    el("span", "status", h.status),
  );
  if (h.status !== "rejected") {
    if (h.status === "pending") head.append(button("Accept", () => decide([h.id], []), "accept"));
    head.append(button("Reject", () => decide([], [h.id]), "reject danger"));
  }
  box.append(head);
  const diff = el("div", "diff");
  const rows = (text, sign, cls) => {
    if (!text) return;
    for (const line of text.replace(/\n$/, "").split("\n")) diff.append(el("div", cls, `${sign}${line}`));
  };
  rows(h.oldText, "-", "del");
  rows(h.newText, "+", "add");
  box.append(diff);
  const last = view.outcomes.get(h.id);
  if (last && !["accepted", "rejected"].includes(last.outcome)) {
    box.append(
      el(
        "div",
        `outcome ${last.outcome}`,
        `${last.outcome.replace("_", " ")}${last.message ? `: ${last.message}` : ""}`,
      ),
    );
  } else if (h.status !== "rejected" && h.currentStart === null) {
    box.append(el("div", "outcome stale", "changed since: this hunk's lines are no longer in the file"));
  }
  return box;
}

async function decide(accept, reject) {
  if (!accept.length && !reject.length) return;
  try {
    const { results } = await api("POST", `/api/sessions/${encodeURIComponent(view.sessionId)}/review`, {
      accept,
      reject,
    });
    for (const r of results) view.outcomes.set(r.hunkId, r);
  } catch (err) {
    $("review-body").prepend(el("div", "notice", `review failed: ${err.message}`));
    return;
  }
  await refresh();
}
