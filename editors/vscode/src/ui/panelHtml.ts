// The Kgent panel's page shell: its Content-Security-Policy (the extension's own script by nonce and stylesheet,
// nothing remote) and the elements the page script (webview/main.ts) fills in.

import { randomBytes } from "node:crypto";
import * as vscode from "vscode";

/** `trusted`: VS Code trusts the folder (in Restricted Mode the page promises nothing about approvals). */
export function panelHtml(webview: vscode.Webview, extensionUri: vscode.Uri, trusted: boolean): string {
  const nonce = randomBytes(16).toString("base64");
  const css = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "media", "panel.css"));
  const js = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "dist", "webview.js"));
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
  ].join("; ");
  // In Restricted Mode the trust note says it all: no promise about approvals Kgent is not there to ask.
  const empty = trusted
    ? "Ask Kgent to do something in this folder. When it needs your approval, the card appears here."
    : "";
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css.toString()}"><title>Kgent</title></head>
<body>
<div id="toolbar">
<select id="mode" title="Permission mode: what Kgent may do without asking"></select>
<select id="model" title="Model"></select>
<span class="grow"></span>
<button id="historyButton" class="secondary" title="Sessions in this folder: resume or fork">History</button>
<button id="new" class="secondary" title="Start a new conversation">New</button>
</div>
<div id="trust" class="note error" hidden>This folder is in Restricted Mode, so Kgent is off: it would read, edit and run
commands here. Trust the folder (Manage Workspace Trust) to use Kgent.</div>
<div id="session" class="session"></div>
<div id="log" role="log" aria-live="polite"><div id="empty" class="empty">${empty}</div></div>
<div id="live" hidden></div>
<div id="composer">
<ul id="slash-menu" role="listbox" hidden></ul>
<textarea id="input" rows="3" aria-label="Message to Kgent"></textarea>
<div id="images" class="image-chips" hidden></div>
<div class="composer-buttons"><button id="attach" class="secondary" title="Mention the editor's selection (or file) as @path#Lx-y">@ Selection</button>
<span class="grow"></span><button id="send">Send</button></div>
</div>
<script nonce="${nonce}" src="${js.toString()}"></script>
</body></html>`;
}
