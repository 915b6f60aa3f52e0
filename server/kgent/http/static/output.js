// A tool card's "Full output": a command whose output was too long for its card (and for the model, which sees the
// tail) saved it whole with the session; agent/toolOutput (GET /api/sessions/{id}/tools/{callId}/output) reads it
// back, and it opens as plain text in a tab of its own — readable, searchable, as long as it is.

import { api } from "./api.js";
import { button } from "./render.js";

const RETRIES = 5; // a live call's result is stored when its batch of calls ends: just after the card says "completed"
const RETRY_MS = 400;

// Whether a result's details say its text was cut (the card shows the tail, as the model saw it).
export function wasCut(details) {
  return !!(details?.fullOutputPath || details?.truncation?.truncated);
}

// Put the "Full output" button on the card (or a sub-agent's call row) of call `toolCallId` of the session
// `sessionId()` (once).
export function offerFullOutput(card, sessionId, toolCallId, notice) {
  if (card.querySelector("button.full-output")) return;
  const open = button("Full output", () => show(sessionId(), toolCallId, notice), "full-output");
  open.title = "All the command printed, not only the tail shown here (opens in a new tab)";
  (card.querySelector(".head") || card).append(open);
}

async function fetchOutput(sessionId, toolCallId) {
  const path = `/api/sessions/${encodeURIComponent(sessionId)}/tools/${encodeURIComponent(toolCallId)}/output`;
  for (let attempt = 1; ; attempt++) {
    try {
      return await api("GET", path);
    } catch (err) {
      if (err.code !== "tool_call_not_found" || attempt >= RETRIES) throw err;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}

async function show(sessionId, toolCallId, notice) {
  let out;
  try {
    out = await fetchOutput(sessionId, toolCallId);
  } catch (err) {
    notice(`could not read the full output: ${err.message}`);
    return;
  }
  const head = out.truncated
    ? "[Kgent: not all of the output was kept; see the line that says what was dropped]\n"
    : "";
  const url = URL.createObjectURL(new Blob([head + out.text], { type: "text/plain;charset=utf-8" }));
  const tab = window.open(url, "_blank");
  if (!tab) notice("The browser blocked the new tab: allow pop-ups for this page to see the full output.");
  setTimeout(() => URL.revokeObjectURL(url), 60_000); // the tab has loaded it by then
}
