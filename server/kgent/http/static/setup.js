// First use: the project (a directory under the server's roots, picked by browsing when the page first opens), the
// mode, the provider and any model id (known ones suggested). The server's configured provider and model are the default; what a person picks
// is remembered per browser (localStorage), and the recent projects with it.

import { api } from "./api.js";
import { button, el } from "./render.js";

const $ = (id) => document.getElementById(id);
const KEY = "kgent.prefs";
const RECENT = 8;

export function loadPrefs() {
  try {
    return JSON.parse(localStorage.getItem(KEY) || "{}") || {};
  } catch {
    return {};
  }
}

export function savePrefs(change) {
  const prefs = { ...loadPrefs(), ...change };
  localStorage.setItem(KEY, JSON.stringify(prefs));
  return prefs;
}

function fill(select, values, selected) {
  select.replaceChildren();
  for (const value of values) {
    const o = el("option", "", value);
    o.value = value;
    select.append(o);
  }
  select.value = values.includes(selected) ? selected : values[0];
}

// The model suggestions for a provider: the server's known ones, the configured default, what was used here.
function suggest(caps, provider, prefs) {
  const names = new Set(caps.models[provider] || []);
  if (provider === caps.defaultProvider && caps.defaultModel) names.add(caps.defaultModel);
  const used = prefs.models?.[provider];
  if (used) names.add(used);
  $("model-list").replaceChildren(...[...names].map((n) => Object.assign(el("option"), { value: n })));
  return names;
}

export function setupPickers(info) {
  const caps = info.capabilities;
  // What was picked here is remembered, until the server's own configuration changes: then that is the default again.
  const configured = `${caps.defaultProvider}/${caps.defaultModel}`;
  if (loadPrefs().configured !== configured) savePrefs({ configured, provider: null, models: {} });
  const prefs = loadPrefs();
  const providers = [...caps.providers];
  if (!providers.includes(caps.defaultProvider)) providers.unshift(caps.defaultProvider);
  fill($("mode"), caps.modes, prefs.mode || caps.defaultMode);
  for (const o of $("mode").options) o.title = caps.modeDescriptions?.[o.value] ?? ""; // what the mode really does
  fill($("provider"), providers, prefs.provider || caps.defaultProvider);
  const modelFor = (provider, p) =>
    p.models?.[provider] ||
    (provider === caps.defaultProvider ? caps.defaultModel : (caps.models[provider] || [])[0] || "");
  const showProvider = () => {
    const p = loadPrefs();
    suggest(caps, $("provider").value, p);
    $("model").value = modelFor($("provider").value, p);
  };
  showProvider();
  $("mode").onchange = () => savePrefs({ mode: $("mode").value });
  $("provider").onchange = () => {
    savePrefs({ provider: $("provider").value });
    showProvider();
  };
  $("model").onchange = () => {
    const p = loadPrefs();
    savePrefs({ models: { ...(p.models || {}), [$("provider").value]: $("model").value.trim() } });
  };
}

// What a run is started with: {mode, provider, model} (an empty model: the provider's default on the server).
export function runChoice() {
  const choice = { mode: $("mode").value, provider: $("provider").value };
  const model = $("model").value.trim();
  if (model) choice.model = model;
  return choice;
}

// -- the project -------------------------------------------------------------------------------------------------
// The first time a browser opens the page it asks which project to work in — a directory under the server's roots,
// or a root itself when that is what the person picks — and remembers the answer. A link may name it instead
// (`?project=ABS`, under the roots): read here, before the page takes the token out of the address bar, and taken out
// as well.
const project = { path: null, roots: [], onChange: () => {} };
const linked = new URLSearchParams(location.search).get("project");
if (linked !== null) {
  const address = new URL(location.href);
  address.searchParams.delete("project");
  history.replaceState(null, "", address.pathname + address.search + address.hash);
}
let projectKnown;
const projectSet = new Promise((resolve) => (projectKnown = resolve));

export function currentProject() {
  return project.path;
}

// The project once the server has said which directories it serves (at once when it has).
export function whenProject() {
  return project.path ? Promise.resolve(project.path) : projectSet;
}

function underRoots(path) {
  return project.roots.some((r) => path === r || path.startsWith(r.endsWith("/") ? r : `${r}/`));
}

export function setProject(path) {
  project.path = path;
  const name = path.split("/").filter(Boolean).pop() || path;
  $("project").textContent = `Project: ${name}`;
  $("project").title = path;
  const prefs = loadPrefs();
  const recent = [path, ...(prefs.recentProjects || []).filter((p) => p !== path)].slice(0, RECENT);
  savePrefs({ project: path, recentProjects: recent });
  projectKnown(path);
  project.onChange(path);
}

export function setupProject(roots, onChange) {
  project.roots = roots;
  const chosen = [linked, loadPrefs().project].find((p) => p && underRoots(p));
  $("project").onclick = () => openPicker(project.path || roots[0]);
  $("project-cancel").onclick = () => $("project-dialog").close();
  // Until a project is chosen the picker stays open: it has no Cancel, and Escape does not close it (a browser may
  // close it anyway, when the page had no click yet: then it opens again).
  const dialog = $("project-dialog");
  dialog.addEventListener("cancel", (e) => {
    if (!project.path) e.preventDefault();
  });
  dialog.addEventListener("close", () => {
    if (!project.path) dialog.showModal();
  });
  if (chosen) {
    setProject(chosen);
    project.onChange = onChange;
    return;
  }
  project.onChange = onChange;
  $("project").textContent = "Project: choose…";
  if (roots.length === 1) openPicker(roots[0]);
  else showRoots();
}

async function openPicker(path) {
  const dialog = $("project-dialog");
  $("project-cancel").hidden = !project.path;
  // nothing to use until the directory's listing is in (a click meanwhile would pick the directory shown before)
  $("project-use").disabled = true;
  if (!dialog.open) dialog.showModal();
  let listing;
  try {
    listing = await api("GET", `/api/directories?path=${encodeURIComponent(path)}`);
  } catch {
    listing = await api("GET", "/api/directories");
  }
  const at = listing.path;
  $("project-path").textContent = at || "workspace roots";
  $("project-up").disabled = !listing.parent && !at;
  $("project-up").onclick = () => (listing.parent ? openPicker(listing.parent) : showRoots());
  $("project-use").disabled = !at;
  $("project-use").onclick = () => {
    dialog.close();
    if (at !== project.path) setProject(at);
  };
  const list = $("project-dirs");
  list.replaceChildren();
  for (const d of listing.directories) {
    const li = el("li");
    li.append(button(`${d.name}/`, () => openPicker(d.path), "dir"));
    list.append(li);
  }
  if (!listing.directories.length) list.append(el("li", "muted", "(no subdirectories)"));
  const recent = $("project-recent");
  recent.replaceChildren();
  for (const p of (loadPrefs().recentProjects || []).filter(underRoots)) {
    const li = el("li");
    li.append(
      button(
        p,
        () => {
          dialog.close();
          if (p !== project.path) setProject(p);
        },
        "recent",
      ),
    );
    recent.append(li);
  }
}

async function showRoots() {
  const dialog = $("project-dialog");
  $("project-cancel").hidden = !project.path;
  if (!dialog.open) dialog.showModal();
  const listing = await api("GET", "/api/directories");
  if (listing.directories.length === 1) return openPicker(listing.directories[0].path);
  $("project-path").textContent = "workspace roots";
  $("project-use").disabled = true;
  const list = $("project-dirs");
  list.replaceChildren();
  for (const d of listing.directories) {
    const li = el("li");
    li.append(button(`${d.path}/`, () => openPicker(d.path), "dir"));
    list.append(li);
  }
}
