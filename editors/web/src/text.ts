// Small text helpers every page needs: HTML escaping, and the server's texts that mark code with backticks (option
// names, rule words, decision labels) turned into <code> spans instead of showing the backticks.

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** `text` with its `backticked` spans as <code> elements, appended to `node` (no markup from the text itself). */
export function appendCodeSpans(node: HTMLElement, text: string): HTMLElement {
  const parts = text.split(/`([^`]+)`/);
  parts.forEach((part, i) => {
    if (part === "") return;
    if (i % 2 === 1) {
      const code = document.createElement("code");
      code.textContent = part;
      node.append(code);
    } else node.append(document.createTextNode(part));
  });
  return node;
}

/** An element of `tag` with class `cls` holding `text` (plain text; backticked spans as code when `code` is set). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string,
  code = false,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) {
    if (code) appendCodeSpans(node, text);
    else node.textContent = text;
  }
  return node;
}

export function button(label: string, onClick: (e: MouseEvent) => void, cls = "", title?: string): HTMLButtonElement {
  const b = el("button", cls, label, true);
  b.type = "button";
  if (title) b.title = title;
  b.addEventListener("click", onClick);
  return b;
}
