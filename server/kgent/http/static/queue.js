// The run's queue as the server reports it (`queue_update`): each waiting steer / follow-up is shown, editable and
// removable. The server's queue is changed as a whole: clear it, then queue again what should stay (in order).

import { api } from "./api.js";
import { button, el } from "./render.js";

const $ = (id) => document.getElementById(id);
export const queued = { runId: null, items: [] }; // items: {kind: "steer" | "followUp", text}

export function showQueue(runId, ev) {
  queued.runId = runId;
  queued.items = [
    ...ev.steering.map((text) => ({ kind: "steer", text })),
    ...ev.followUp.map((text) => ({ kind: "followUp", text })),
  ];
  render();
}

export function clearShownQueue() {
  queued.runId = null;
  queued.items = [];
  render();
}

function render() {
  const list = $("queue");
  list.replaceChildren();
  list.hidden = !queued.items.length;
  queued.items.forEach((item, i) => {
    const li = el("li", `queued ${item.kind}`);
    li.append(el("span", "kind", item.kind === "steer" ? "steer" : "follow-up"), el("span", "text", item.text));
    li.append(
      button("Edit", () => edit(li, i), "edit"),
      button("Remove", () => replace(queued.items.filter((_, k) => k !== i)), "remove"),
    );
    list.append(li);
  });
}

function edit(li, i) {
  const input = el("input", "edit-text");
  input.value = queued.items[i].text;
  const save = () => {
    const text = input.value.trim();
    const items = queued.items.map((it, k) => (k === i ? { ...it, text } : it)).filter((it) => it.text);
    replace(items);
  };
  input.onkeydown = (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      save();
    } else if (e.key === "Escape") render();
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
