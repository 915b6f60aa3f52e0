// Markdown → HTML for the panel, by well-kept libraries (pinned in package.json, bundled into dist/webview.js):
// markdown-it (CommonMark + GFM tables and strikethrough; raw HTML in the input is escaped, never passed through),
// highlight.js for fenced code, and DOMPurify over the result wherever a DOM exists (the webview). Links are shown
// as text with the address in a tooltip, never followed from the panel.

import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import lua from "highlight.js/lib/languages/lua";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import MarkdownIt from "markdown-it";

for (const [name, lang] of Object.entries({
  bash,
  css,
  diff,
  go,
  java,
  javascript,
  json,
  lua,
  markdown,
  python,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
})) {
  hljs.registerLanguage(name, lang);
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const md = new MarkdownIt({
  html: false, // tags in the model's text are shown as text
  linkify: false,
  breaks: true, // a line break in the answer is one on screen
  highlight(code: string, lang: string): string {
    const language = lang !== "" && hljs.getLanguage(lang) !== undefined ? lang : undefined;
    if (language === undefined) return ""; // markdown-it escapes it
    try {
      return hljs.highlight(code, { language, ignoreIllegals: true }).value;
    } catch {
      return "";
    }
  },
});

// Small headings in a side panel: # → h3 … (as before).
md.renderer.rules.heading_open = (tokens, idx) => `<h${Math.min(Number(tokens[idx].tag.slice(1)) + 2, 6)}>`;
md.renderer.rules.heading_close = (tokens, idx) => `</h${Math.min(Number(tokens[idx].tag.slice(1)) + 2, 6)}>\n`;
// Links: the text, with the address as its tooltip; nothing to follow.
md.renderer.rules.link_open = (tokens, idx) =>
  `<span class="link" title="${escapeHtml(String(tokens[idx].attrGet("href") ?? ""))}">`;
md.renderer.rules.link_close = () => "</span>";
// Images: their alt text and address, nothing loaded.
md.renderer.rules.image = (tokens, idx) => {
  const t = tokens[idx];
  return `<span class="link" title="${escapeHtml(String(t.attrGet("src") ?? ""))}">${escapeHtml(t.content)}</span>`;
};
// Fenced code keeps its language as data-lang (the page's styles and tests use it).
const fence = md.renderer.rules.fence;
md.renderer.rules.fence = (tokens, idx, options, env, self) => {
  const lang = tokens[idx].info.trim().split(/\s+/)[0] ?? "";
  const html = fence !== undefined ? fence(tokens, idx, options, env, self) : self.renderToken(tokens, idx, options);
  return lang !== "" ? html.replace(/^<pre>/, `<pre data-lang="${escapeHtml(lang)}">`) : html;
};

const purifier = typeof window !== "undefined" && typeof document !== "undefined" ? DOMPurify(window) : undefined;

/** Render Markdown to HTML; the result contains no tag or attribute from the input. */
export function renderMarkdown(text: string): string {
  const html = md.render(text);
  return purifier?.isSupported ? purifier.sanitize(html, { ADD_ATTR: ["data-lang"] }) : html;
}
