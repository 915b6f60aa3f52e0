// The page's chrome on any screen: the sessions pane shown or hidden (a drawer over the chat on a narrow screen,
// hidden there by default), the theme (auto follows prefers-color-scheme; the toggle picks light or dark, remembered
// per browser), and the first-use hint on an empty conversation.

const $ = (id) => document.getElementById(id);
const THEME = "kgent.theme";
const THEMES = ["auto", "dark", "light"];
export const narrow = () => window.matchMedia("(max-width: 720px)").matches;

function applyTheme(theme) {
  if (theme === "auto") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  $("theme").textContent = `Theme: ${theme}`;
  $("theme").dataset.theme = theme;
}

export function setSessionsOpen(open) {
  document.body.dataset.sessions = open ? "open" : "closed";
  $("sessions-toggle").setAttribute("aria-expanded", String(open));
}

// On a narrow screen the pane is a drawer: it closes once a session is picked.
export function sessionPicked() {
  if (narrow()) setSessionsOpen(false);
}

// The hint shows while the conversation is empty and no session is open.
export function showFirstUse(show) {
  $("first-use").hidden = !show;
}

export function setupLayout() {
  let theme = localStorage.getItem(THEME);
  if (!THEMES.includes(theme)) theme = "auto";
  applyTheme(theme);
  $("theme").onclick = () => {
    const next = THEMES[(THEMES.indexOf($("theme").dataset.theme) + 1) % THEMES.length];
    localStorage.setItem(THEME, next);
    applyTheme(next);
  };
  setSessionsOpen(!narrow());
  $("sessions-toggle").onclick = () => setSessionsOpen(document.body.dataset.sessions !== "open");
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && narrow() && document.body.dataset.sessions === "open") setSessionsOpen(false);
  });
}
