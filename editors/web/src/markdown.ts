// The one Markdown pipeline of every page: markdown-it (CommonMark + GFM tables and strikethrough; raw HTML in the
// input stays text), highlight.js for fenced code, DOMPurify over the result wherever a DOM exists. Each host picks
// how links behave: opened in a new tab (the web client) or shown as text with the address as a tooltip (VS Code).

import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import lua from "highlight.js/lib/languages/lua";
import makefile from "highlight.js/lib/languages/makefile";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import MarkdownIt from "markdown-it";
import { escapeHtml } from "./text";

/** A markdown-it instance (the library's types name only its constructor). */
export type MarkdownEngine = InstanceType<typeof MarkdownIt>;

const LANGUAGES = {
  bash,
  c,
  cpp,
  css,
  diff,
  dockerfile,
  go,
  ini,
  java,
  javascript,
  json,
  lua,
  makefile,
  markdown,
  python,
  ruby,
  rust,
  shell,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);

export interface MarkdownOptions {
  /** "open": links open in a new tab (rel=noopener); "text": the link's text, its address as a tooltip. */
  links: "open" | "text";
  /** A line break in the text is one on screen. */
  breaks: boolean;
  /** Headings two levels smaller (# → h3), for a side bar. */
  smallHeadings: boolean;
}

/** Code past this size (~400 lines) stays plain: highlighting a block, then sanitising its thousands of spans, is one
 * task — ~75 ms for 20 KB in Chromium here (~130 ms the first time), ~0.6 s a megabyte — the page could not answer in. */
export const HIGHLIGHT_MAX = 16 * 1024;

function highlight(code: string, lang: string): string {
  const language = lang !== "" && hljs.getLanguage(lang) !== undefined ? lang : undefined;
  if (language === undefined || code.length > HIGHLIGHT_MAX) return ""; // markdown-it escapes it
  try {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return "";
  }
}

/** A markdown-it instance set up for one host. */
export function markdownIt(o: MarkdownOptions): MarkdownEngine {
  const md = new MarkdownIt({ html: false, linkify: o.links === "open", breaks: o.breaks, highlight });
  if (o.smallHeadings) {
    const level = (tag: string): number => Math.min(Number(tag.slice(1)) + 2, 6);
    md.renderer.rules.heading_open = (tokens, idx) => `<h${level(tokens[idx].tag)}>`;
    md.renderer.rules.heading_close = (tokens, idx) => `</h${level(tokens[idx].tag)}>\n`;
  }
  if (o.links === "text") {
    md.renderer.rules.link_open = (tokens, idx) =>
      `<span class="link" title="${escapeHtml(String(tokens[idx].attrGet("href") ?? ""))}">`;
    md.renderer.rules.link_close = () => "</span>";
    md.renderer.rules.image = (tokens, idx) => {
      const t = tokens[idx];
      return `<span class="link" title="${escapeHtml(String(t.attrGet("src") ?? ""))}">${escapeHtml(t.content)}</span>`;
    };
  }
  // Fenced code keeps its language as data-lang (styles and tests use it).
  const fence = md.renderer.rules.fence;
  md.renderer.rules.fence = (tokens, idx, options, env, self) => {
    const lang = tokens[idx].info.trim().split(/\s+/)[0] ?? "";
    const html = fence !== undefined ? fence(tokens, idx, options, env, self) : self.renderToken(tokens, idx, options);
    return lang !== "" ? html.replace(/^<pre>/, `<pre data-lang="${escapeHtml(lang)}">`) : html;
  };
  return md;
}

const purifier = typeof window !== "undefined" && typeof document !== "undefined" ? DOMPurify(window) : undefined;
if (purifier !== undefined) {
  purifier.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A") {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
}

/** HTML from markdown-it, sanitised where a DOM exists (outside a page — tests in Node — it is returned as is). */
export function sanitize(html: string): string {
  return purifier?.isSupported ? purifier.sanitize(html, { ADD_ATTR: ["data-lang", "target"] }) : html;
}

/** Sanitised nodes of `html` (code blocks classed `hljs`). */
export function fragment(html: string): DocumentFragment {
  if (purifier === undefined) throw new Error("Markdown fragments need a page (a DOM)");
  const clean = purifier.sanitize(html, { ADD_ATTR: ["data-lang", "target"], RETURN_DOM_FRAGMENT: true });
  clean.querySelectorAll("pre > code").forEach((block) => {
    block.classList.add("hljs");
  });
  return clean;
}

/** A host's Markdown: `render` to an HTML string (sanitised), `into` a node (its children replaced). */
export class Markdown {
  readonly md: MarkdownEngine;
  constructor(options: MarkdownOptions) {
    this.md = markdownIt(options);
  }
  render(text: string): string {
    return sanitize(this.md.render(text));
  }
  into(node: HTMLElement, text: string): void {
    node.replaceChildren(fragment(this.md.render(String(text))));
  }
}
