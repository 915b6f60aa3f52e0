// Rendering by the vendored libraries (vendor/MANIFEST.json): Markdown by markdown-it (tables, strikethrough, no raw
// HTML), sanitised by DOMPurify, code highlighted by highlight.js; diffs as text rows. Nothing here builds markup
// from strings of its own.

import DOMPurify from "./vendor/purify.js";
import hljs from "./vendor/highlight.js";
import markdownit from "./vendor/markdown-it.js";

const md = markdownit({
  html: false, // HTML in model output stays text
  linkify: true,
  highlight(code, lang) {
    if (lang && hljs.getLanguage(lang)) {
      try {
        return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
      } catch {
        return ""; // markdown-it escapes it itself
      }
    }
    return "";
  },
});

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

// The Markdown `text` rendered into `node` (its old children replaced).
export function renderMarkdownInto(node, text) {
  const clean = DOMPurify.sanitize(md.render(String(text)), { RETURN_DOM_FRAGMENT: true });
  for (const block of clean.querySelectorAll("pre > code")) block.classList.add("hljs");
  node.replaceChildren(clean);
}

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

export const el = (tag, cls, text) => {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
};

export function button(label, onclick, cls = "") {
  const b = el("button", cls, label);
  b.type = "button";
  b.onclick = onclick;
  return b;
}
