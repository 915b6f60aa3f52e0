// Rendering: the pages' shared code (page.js, built from editors/web/src: markdown-it, DOMPurify and highlight.js
// set up once for the web client and the VS Code webview) and diffs as text rows. Nothing here builds markup from
// strings of its own.

import { addCopyButtons, button, el, Markdown, MarkdownStream, streamedHtml } from "./page.js";

export { button, el };

const md = new Markdown({ links: "open", breaks: false, smallHeadings: false });

// The Markdown `text` rendered into `node` (its old children replaced), each code block with a Copy button.
export function renderMarkdownInto(node, text) {
  md.into(node, text);
  addCopyButtons(node);
}

// A streamed answer into `node`: `append(delta)` queues, a frame renders only the open block (linear in the
// answer's length); `end(text)` makes it what renderMarkdownInto would have drawn. `options` (tests): {schedule, openMs}.
export function markdownStream(node, options) {
  return new MarkdownStream(node, md, options);
}

// For tests and the benchmark: the HTML a one-shot render of `text` gives, and what a stream's node shows.
export function renderedHtml(text) {
  const node = document.createElement("div");
  renderMarkdownInto(node, text);
  return node.innerHTML;
}
export { streamedHtml };

// A unified diff as lines classed add / del / hunk / file (text only: nothing in it becomes markup).
export function renderDiff(diff) {
  const box = document.createElement("div");
  box.className = "diff";
  for (const line of String(diff).replace(/\n$/, "").split("\n")) {
    const row = document.createElement("div");
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ")) row.className = "file";
    else if (line.startsWith("@@")) row.className = "hunk";
    else if (line.startsWith("+")) row.className = "add";
    else if (line.startsWith("-")) row.className = "del";
    row.textContent = line || " ";
    box.append(row);
  }
  return box;
}
