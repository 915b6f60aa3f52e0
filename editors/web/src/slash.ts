// The slash menu of every page's composer: `/` at the start of the message lists the workspace's commands (the host
// asks the server: built-ins and prompt templates, each with its description and argument hint); ↑/↓ move, Tab or
// Enter picks (the input then reads `/name `), Escape closes. Enter on a name typed in full sends it instead.

export interface SlashCommand {
  name: string;
  description: string;
  argumentHint?: string | null;
  source?: string;
  shadowed?: boolean;
}

const TYPED = /^\/([\w.-]*)$/;

export interface Slash {
  /** The host's answer to `ask()`: show the matches of what is typed now. */
  show(commands: SlashCommand[]): void;
}

/** Wire the menu to the input. Call before the input's own keydown handler: an open menu takes Enter first. */
export function setupSlash(input: HTMLTextAreaElement, menu: HTMLUListElement, ask: () => void): Slash {
  let commands: SlashCommand[] | undefined; // listed afresh each time a message starts with `/`
  let shown: SlashCommand[] = [];
  let active = 0;

  const close = (): void => {
    menu.hidden = true;
    shown = [];
  };
  const pick = (c: SlashCommand): void => {
    input.value = `/${c.name} `;
    close();
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  };
  const render = (): void => {
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
        hint.className = "slash-hint muted";
        hint.textContent = c.argumentHint ? ` ${c.argumentHint}` : "";
        const what = document.createElement("span");
        what.className = "slash-desc";
        what.textContent = ` — ${c.description}`;
        li.append(name, hint, what);
        li.addEventListener("mousedown", (e) => {
          e.preventDefault(); // keep the focus in the input
          pick(c);
        });
        return li;
      }),
    );
    menu.hidden = shown.length === 0;
  };
  const update = (): void => {
    const m = TYPED.exec(input.value);
    if (m === null) {
      close();
      return;
    }
    if (commands === undefined) return; // asked: `show` renders when the list arrives
    shown = commands.filter((c) => c.name.startsWith(m[1]));
    active = Math.min(active, Math.max(shown.length - 1, 0));
    render();
  };

  input.addEventListener("input", () => {
    if (input.value === "/") {
      active = 0;
      commands = undefined;
      ask();
    }
    update();
  });
  input.addEventListener("blur", close);
  // A `/` typed before this script ran (a page still loading its bundle on a busy machine) fired no listener above.
  if (TYPED.test(input.value)) ask();
  input.addEventListener("keydown", (e) => {
    if (menu.hidden || shown.length === 0) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      active = (active + (e.key === "ArrowDown" ? 1 : shown.length - 1)) % shown.length;
      render();
    } else if (e.key === "Enter" && !e.shiftKey && !e.ctrlKey && !e.metaKey && !e.isComposing) {
      // `/compact` typed in full: Enter sends it (the menu closes); a partial name is completed first.
      if (input.value === `/${shown[active].name}`) return close();
      e.preventDefault();
      e.stopImmediatePropagation(); // the input's own Enter would send the message
      pick(shown[active]);
    } else if (e.key === "Tab") {
      e.preventDefault();
      e.stopImmediatePropagation();
      pick(shown[active]);
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.stopImmediatePropagation();
      close();
    }
  });
  return {
    show(list: SlashCommand[]): void {
      commands = list.filter((c) => c.shadowed !== true);
      update();
    },
  };
}
