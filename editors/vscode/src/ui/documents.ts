// Virtual documents under the `kgent:` scheme (diff sides, patches, call details): never written to disk.

import * as vscode from "vscode";

export const SCHEME = "kgent";

export class VirtualDocuments implements vscode.TextDocumentContentProvider {
  private readonly docs = new Map<string, string>();
  private readonly order: string[] = [];

  add(docPath: string, text: string): vscode.Uri {
    if (!this.docs.has(docPath)) this.order.push(docPath);
    this.docs.set(docPath, text);
    while (this.order.length > 200) {
      const old = this.order.shift();
      if (old !== undefined) this.docs.delete(old);
    }
    return vscode.Uri.from({ scheme: SCHEME, path: docPath });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.path) ?? "(this Kgent preview is no longer available)\n";
  }
}
