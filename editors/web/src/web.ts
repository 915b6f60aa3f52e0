// The web client's share of the one page source, bundled by build.py into server/kgent/http/static/page.js (an ES
// module the client's own modules import). The VS Code webview imports the same modules from its own bundle.

export { approvalCard, arrange, focusCard, settleCard } from "./approval";
export type { ApprovalOption, ApprovalView } from "./approval";
export { addCopyButtons, copied, copyButton, copyText } from "./copy";
export { Markdown } from "./markdown";
export { setupSlash } from "./slash";
export { MarkdownStream, streamedHtml, streamTotals } from "./stream";
export { appendCodeSpans, button, el, escapeHtml } from "./text";
