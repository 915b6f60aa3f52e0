// Markdown → HTML for the panel: the pages' one pipeline (editors/web/src/markdown.ts: markdown-it, highlight.js,
// DOMPurify wherever a DOM exists, pinned once in editors/web/package.json), set up for a side bar: links shown as
// text with the address in a tooltip (never followed from the panel), a line break in the answer is one on screen,
// headings two levels smaller.

import { Markdown } from "../../web/src/markdown";

export { escapeHtml } from "../../web/src/text";

export const panelMarkdown = new Markdown({ links: "text", breaks: true, smallHeadings: true });

/** Render Markdown to HTML; the result contains no tag or attribute from the input. */
export function renderMarkdown(text: string): string {
  return panelMarkdown.render(text);
}
