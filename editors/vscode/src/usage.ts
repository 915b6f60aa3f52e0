// Which shell sandbox the daemon has, in words a person reads (no vscode import: the panel and the status bar share
// it). What a run used and cost comes in words from the server (each usage object's `text`, the context's `text`).

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
