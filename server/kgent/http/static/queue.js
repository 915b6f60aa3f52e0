// The run's queue as the server reports it (`queue_update`): each waiting steer / follow-up is shown, editable and
// removable. The server's queue is changed as a whole: clear it, then queue again what should stay (in order).

import { api } from "./api.js";
import { button, el } from "./render.js";

const $ = (id) => document.getElementById(id);
export const queued = { runId: null, items: [] }; // items: {kind: "steer" | "followUp", text}
// A queued message being edited ({ input }): the queue the server reports meanwhile (another tab queued one, the run
// took a steer) is drawn when the edit ends, so the text being typed stays.
let editing = null;

export function showQueue(runId, ev) {
  queued.runId = runId;
  queued.items = [
    ...ev.steering.map((text) => ({ kind: "steer", text })),
    ...ev.followUp.map((text) => ({ kind: "followUp", text })),
  ];
  if (!editing?.input.isConnected) render();
}

export function clearShownQueue() {
  queued.runId = null;
  queued.items = [];
  editing = null; // the run ended: its queue is gone (app.js gives the texts back to the composer)
  render();
}

function render() {
  const list = $("queue");
  list.replaceChildren();
  list.hidden = !queued.items.length;
  for (const item of queued.items) {
    const li = el("li", `queued ${item.kind}`);
    li.append(el("span", "kind", item.kind === "steer" ? "steer" : "follow-up"), el("span", "text", item.text));
    li.append(
      button("Edit", () => edit(li, item), "edit"),
      button(
        "Remove",
        () => {
          const at = where(item);
          if (at >= 0) replace(queued.items.filter((_, k) => k !== at));
        },
        "remove",
      ),
    );
    list.append(li);
  }
}

// Where a message shown is in the queue as it is now (the list may have changed since it was drawn): by what it says.
function where(item) {
  return queued.items.findIndex((it) => it.kind === item.kind && it.text === item.text);
}

function edit(li, original) {
  const input = el("input", "edit-text");
  input.value = original.text;
  editing = { input };
  const save = () => {
    editing = null;
    const text = input.value.trim();
    const at = where(original);
    if (at < 0) return render(); // the run took it already
    replace(queued.items.map((it, k) => (k === at ? { ...it, text } : it)).filter((it) => it.text));
  };
  input.onkeydown = (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      save();
    } else if (e.key === "Escape") {
      editing = null;
      render();
    }
  };
  li.querySelector(".text").replaceWith(input);
  li.querySelector(".edit").replaceWith(button("Save", save, "save"));
  input.focus();
}

async function replace(items) {
  const runId = queued.runId;
  if (!runId) return;
  await api("POST", `/api/runs/${encodeURIComponent(runId)}/clearQueue`);
  for (const item of items)
    await api("POST", `/api/runs/${encodeURIComponent(runId)}/${item.kind}`, { text: item.text });
}
