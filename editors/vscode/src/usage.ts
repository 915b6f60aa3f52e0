// What a run used and cost, and which shell sandbox the daemon has, in words a person reads (no vscode import: the
// panel's page, the transcript and the status bar share it).

import type { ContextUse, Tokens } from "./protocol";

/** "1200 in (900 cached) / 40 out tokens · ≈ $0.0012": input counts every input token (plain, read from and written
 *  to the prompt cache); the cost shows only when the daemon knows the model's price. */
export function formatUsage(u: Tokens): string {
  const cached = u.cacheReadTokens ?? 0;
  const input = u.inputTokens + cached + (u.cacheWriteTokens ?? 0);
  let text = `${input} in${cached > 0 ? ` (${cached} cached)` : ""} / ${u.outputTokens} out tokens`;
  if (u.cost !== undefined && u.cost !== null) {
    const sign = u.cost.currency === "USD" ? "$" : `${u.cost.currency} `;
    text += ` · ≈ ${sign}${u.cost.amount.toFixed(4)}`;
  }
  return text;
}

/** "context 24k of 200k tokens (12%)": how full the model's context was after the last call. */
export function formatContext(c: Pick<ContextUse, "tokens" | "window">): string {
  const k = (n: number): string =>
    n >= 10_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : `${n}`;
  const share = c.window > 0 ? Math.round((100 * c.tokens) / c.window) : 0;
  return `context ${k(c.tokens)} of ${k(c.window)} tokens (${share}%)`;
}

export interface SandboxStatus {
  /** Appended to the idle status text ("" when all is well or unknown). */
  suffix: string;
  /** A line for the tooltip. */
  tooltip: string;
  warn: boolean;
}

/** The daemon's `capabilities.sandbox` (bwrap | none; absent from older daemons) as the status bar shows it. */
export function sandboxStatus(sandbox: string | undefined, reason: string | undefined): SandboxStatus {
  if (sandbox === "bwrap") {
    return { suffix: "", tooltip: "Shell sandbox: bubblewrap (read-only commands run unasked inside it)", warn: false };
  }
  if (sandbox === "none") {
    return {
      suffix: " (no sandbox)",
      tooltip: `No shell sandbox${reason ? ` (${reason})` : ""}: every shell command asks. Install bubblewrap to let read-only commands run unasked.`,
      warn: true,
    };
  }
  return { suffix: "", tooltip: "Shell sandbox: not reported by this daemon", warn: false };
}
