// Slash commands in the composer: typing `/` at the start of the prompt lists the project's commands
// (GET /api/commands: built-ins and prompt templates, docs/prompts.md); ↑/↓ move, Enter or Tab picks (the box then
// reads `/name `), Escape closes. The server expands the command when the prompt is sent.

// `box`: the composer's textarea; `menu`: an empty <ul>; `load()`: a promise of the commands to offer.
export function setupSlash(box, menu, load) {
  let commands = null; // listed afresh each time a prompt starts with `/` (the project may have changed)
  let shown = [];
  let active = 0;
  let loading = null;

  const close = () => {
    menu.hidden = true;
    shown = [];
  };
  const pick = (c) => {
    box.value = `/${c.name} `;
    close();
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  };
  const render = () => {
    menu.replaceChildren(
      ...shown.map((c, i) => {
        const li = document.createElement("li");
        li.className = "slash-item";
        li.setAttribute("role", "option");
        li.setAttribute("aria-selected", String(i === active));
        li.dataset.name = c.name;
        const name = document.createElement("strong");
        name.textContent = `/${c.name}`;
        const hint = document.createElement("span");
        hint.className = "muted";
        hint.textContent = c.argumentHint ? ` ${c.argumentHint}` : "";
        const what = document.createElement("span");
        what.className = "slash-desc";
        what.textContent = ` — ${c.description}${c.source === "builtin" ? "" : ` (${c.source})`}`;
        li.append(name, hint, what);
        li.onmousedown = (e) => {
          e.preventDefault(); // keep the focus in the box
          pick(c);
        };
        return li;
      }),
    );
    menu.hidden = shown.length === 0;
  };
  const update = async () => {
    const m = /^\/([\w.-]*)$/.exec(box.value);
    if (!m) return close();
    if (commands === null) {
      loading ??= load()
        .then((r) => (commands = r.commands.filter((c) => !c.shadowed)))
        .catch(() => (commands = []))
        .finally(() => (loading = null));
      await loading;
    }
    const again = /^\/([\w.-]*)$/.exec(box.value); // the text may have changed while loading
    if (!again) return close();
    shown = commands.filter((c) => c.name.startsWith(again[1]));
    active = Math.min(active, Math.max(shown.length - 1, 0));
    render();
  };

  box.addEventListener("input", () => {
    if (box.value === "/") {
      active = 0;
      commands = null;
    }
    update();
  });
  box.addEventListener("blur", close);
  box.addEventListener("keydown", (e) => {
    if (menu.hidden || !shown.length) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      active = (active + (e.key === "ArrowDown" ? 1 : shown.length - 1)) % shown.length;
      render();
    } else if ((e.key === "Enter" && !e.ctrlKey && !e.metaKey) || e.key === "Tab") {
      e.preventDefault();
      e.stopImmediatePropagation();
      pick(shown[active]);
    } else if (e.key === "Escape") {
      e.preventDefault();
      close();
    }
  });
}
