// A sub-agent's run (the `task` tool) shown live inside its task call's card. The parent's stream names the sub-run
// (a `tool_update` `in_progress` of the task call with `details: {runId, agent}`, protocol.md § Sub-agents); its own
// events are on its own stream (GET /api/runs/{runId}/events), read here: its tool calls with their status (and the
// "Full output" of a command too long for its result, as on the parent's cards), the end of its streamed text, its
// approvals (asked in its name, on this box) and its end. Sub-agents side by side each have their box under their own
// task card.

import { offerFullOutput, wasCut } from "./output.js";
import { el } from "./render.js";
import { EventStream } from "./sse.js";

const TEXT_TAIL = 2000; // characters of the sub-agent's text kept in view (its answer is the task's result)

const following = new Map(); // sub-run id → its stream

// Follow sub-run `runId` (named `agent`) in `card`; `ask(ev, box)` shows one of its approvals, `settle(ev)` closes
// one, `notice(text)` says what went wrong opening a full output. Once per sub-run.
export function followSubRun(card, runId, agent, { ask, settle, notice }) {
  if (following.has(runId)) return;
  const box = el("div", "sub-run");
  box.dataset.runId = runId;
  box.dataset.status = "in_progress";
  const head = el("div", "sub-head");
  head.append(el("span", "sub-name", `sub-agent "${agent || "task"}"`), el("span", "status", "running"));
  const calls = el("div", "sub-calls");
  const text = el("div", "sub-text");
  box.append(head, calls, text);
  card.append(box);
  const items = new Map();
  const stream = new EventStream(`/api/runs/${encodeURIComponent(runId)}/events`, {
    onEvent: (params) => {
      const ev = params.event;
      switch (ev.type) {
        case "tool_call": {
          const row = el("div", "sub-call");
          row.dataset.toolCallId = ev.toolCallId;
          row.dataset.status = "pending";
          row.append(el("span", "title", ev.title || ev.name), el("span", "status", "pending"));
          items.set(ev.toolCallId, row);
          calls.append(row);
          break;
        }
        case "tool_update": {
          const row = items.get(ev.toolCallId);
          if (row) {
            row.dataset.status = ev.status;
            row.querySelector(".status").textContent = ev.status.replace("_", " ");
            // the sub-agent's calls are kept in its run's session, which the stream names
            if ((ev.status === "completed" || ev.status === "failed") && wasCut(ev.details))
              offerFullOutput(row, () => params.sessionId, ev.toolCallId, notice);
          }
          break;
        }
        case "message_delta":
          if (ev.kind !== "thinking") {
            const node = text.firstChild || text.appendChild(document.createTextNode(""));
            node.appendData(ev.delta);
            if (node.length > TEXT_TAIL * 2) node.deleteData(0, node.length - TEXT_TAIL);
          }
          break;
        case "permission_request":
          ask({ ...ev, parentRunId: params.parentRunId }, items.get(ev.toolCall?.toolCallId) || box);
          break;
        case "permission_resolved":
          settle(ev);
          break;
        case "run_end":
          box.dataset.status = ev.status;
          head.querySelector(".status").textContent = ev.status;
          break;
      }
    },
    endsWith: (params) => params.event?.type === "run_end",
  });
  following.set(runId, stream);
  stream.done.finally(() => following.delete(runId));
}

// Stop following every sub-run (the page leaves the session).
export function stopSubRuns() {
  for (const stream of following.values()) stream.close();
  following.clear();
}
