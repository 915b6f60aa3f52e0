// The slash commands the page does itself (protocol.md § `agent/commands`, `action`): what the menu says of a typed
// `/name`, the server's answer (`POST /api/command`) shown in the transcript and put in the pickers; and the
// session's Export menu (`GET /api/sessions/{id}/export`), whose answer is saved as a file.

import { api } from "./api.js";
import { el } from "./render.js";

const $ = (id) => document.getElementById(id);
// The server's (kgent.service.commands): `/name` then whitespace or the end; `//text` sends `/text` as a prompt.
const INVOCATION = /^\/([A-Za-z0-9][A-Za-z0-9_.-]*)(?:\s[\s\S]*)?$/;

const menu = { workspace: null, actions: new Map() }; // name → action, from the last menu listed

export function rememberMenu(workspace, entries) {
  menu.workspace = workspace;
  menu.actions = new Map(entries.map((c) => [c.name, c.action]));
}

// True when `text` is a slash command the page does itself, or one it does not know (the server's answer says what it
// is); a command the menu lists as `prompt` is sent as a run.
export function isCommand(text, workspace) {
  const call = INVOCATION.exec(text);
  if (!call) return false;
  return menu.workspace !== workspace || menu.actions.get(call[1]) !== "prompt";
}

// An answer (`/help`, `/cost`, `/mode`, `/model`): the typed command and the server's text, its lines kept; a mode
// or model in it goes into the pickers (changed as a person would, so the page remembers it).
export function commandAnswer(typed, answer) {
  const node = el("div", "command-answer");
  node.append(el("div", "command", typed.trim()), el("div", "text", answer.text));
  pick($("mode"), answer.mode);
  pick($("model"), answer.model);
  return node;
}

function pick(input, value) {
  if (!value || input.value === value) return;
  if (input instanceof HTMLSelectElement && ![...input.options].some((o) => o.value === value)) return;
  input.value = value;
  input.dispatchEvent(new Event("change"));
}

// -- export ----------------------------------------------------------------------------------------------------------
// The Export menu shows while a session is open; each format saves the server's transcript under its file name.
export function setupExport(sessionId, problem) {
  const menuBox = $("export");
  for (const b of menuBox.querySelectorAll("button[data-format]")) {
    b.onclick = async () => {
      menuBox.open = false;
      try {
        await download(sessionId(), b.dataset.format);
      } catch (err) {
        problem(`export failed: ${err.message}`);
      }
    };
  }
  menuBox.onkeydown = (e) => {
    if (e.key === "Escape" && menuBox.open) {
      e.preventDefault();
      menuBox.open = false;
      menuBox.querySelector("summary").focus();
    }
  };
}

export function showExport(sessionId) {
  $("export").hidden = !sessionId;
  $("export").open = false;
}

async function download(sessionId, format) {
  const path = `/api/sessions/${encodeURIComponent(sessionId)}/export?format=${encodeURIComponent(format)}`;
  const file = await api("GET", path);
  const url = URL.createObjectURL(new Blob([file.text], { type: file.mimeType }));
  const link = el("a");
  link.href = url;
  link.download = file.filename;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000); // once the browser has read it
}
