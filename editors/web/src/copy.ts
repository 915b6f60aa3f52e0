// Copy buttons: on every fenced code block of a rendered answer, and on whole messages. The clipboard API where the
// page is a secure context (localhost, https, VS Code's webview), else a selected textarea and execCommand("copy").

import { button } from "./text";

/** What the last copy put on the clipboard (tests read it: a headless browser's clipboard may be out of reach). */
export const copied = { last: "" };

export async function copyText(text: string): Promise<boolean> {
  copied.last = text;
  try {
    if (navigator.clipboard !== undefined) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // not allowed here: fall through to the old way
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.className = "copy-buffer";
  document.body.append(area);
  area.select();
  const ok = document.execCommand("copy");
  area.remove();
  return ok;
}

/** A button that copies `text()` and says so for a moment. Its label is drawn by the stylesheet (`.copy::before`),
 * so the text of a message or a code block stays what was said (what a person selects, what tests read). */
export function copyButton(text: () => string, title = "Copy to the clipboard"): HTMLButtonElement {
  const b = button(
    "",
    async () => {
      const ok = await copyText(text());
      b.dataset.copied = ok ? "yes" : "no";
      setTimeout(() => {
        delete b.dataset.copied;
      }, 1500);
    },
    "copy",
    title,
  );
  b.setAttribute("aria-label", title);
  return b;
}

/** A Copy button on each fenced code block under `root` that has none yet. */
export function addCopyButtons(root: ParentNode): void {
  for (const pre of root.querySelectorAll<HTMLPreElement>("pre")) {
    if (pre.parentElement?.classList.contains("code-block")) continue;
    const box = document.createElement("div");
    box.className = "code-block";
    pre.replaceWith(box);
    // the <pre>'s text: its <code>'s, and while a streamed block is open, the lines after it (stream.ts)
    box.append(
      copyButton(() => pre.textContent ?? "", "Copy this code"),
      pre,
    );
  }
}
