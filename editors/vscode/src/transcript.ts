// Turns a run's events into a transcript a person can read (streamed into an output channel). Editor-agnostic.

import * as path from "node:path";
import { pathToFileURL } from "node:url";
import type { RunOutcome } from "./client";
import * as P from "./protocol";

export interface TextSink {
  append(text: string): void;
}

const OUTPUT_LINES = 12;

export function shortId(id: string): string {
  const bare = id.startsWith("run-") ? id.slice(4) : id;
  return bare.slice(0, 8);
}

export function firstLine(text: string, max = 80): string {
  const line = text.split("\n", 1)[0].trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function indent(text: string, prefix: string): string {
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  return body
    .split("\n")
    .map((l) => `${prefix}${l}`)
    .join("\n");
}

function clip(text: string, maxLines: number): string {
  const lines = (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
  if (lines.length <= maxLines) return lines.join("\n");
  return [...lines.slice(0, maxLines), `… (${lines.length - maxLines} more lines)`].join("\n");
}

/** The absolute file: URI of a changed path (clickable in an output channel). */
export function changedFileUri(workspace: string, relPath: string): string {
  return pathToFileURL(path.resolve(workspace, relPath)).href;
}

/**
 * Writes the transcript of any number of runs into one sink. Streamed text of one run is written as it comes; when
 * events of another run interleave, lines are tagged with the run.
 */
export class TranscriptWriter {
  /** Run currently owning the open line, and what is streaming there. */
  private lineRun: string | undefined;
  private streaming: "text" | "thinking" | undefined;
  private atLineStart = true;
  private readonly tools = new Map<string, { title: string; name: string }>();
  private readonly workspaces = new Map<string, string>();
  private readonly tagged = new Set<string>();
  /** Live sub-agent runs → their names: sub-agents run side by side, so each of their lines says whose it is. */
  private readonly agents = new Map<string, string>();

  constructor(private readonly sink: TextSink) {}

  private write(text: string): void {
    if (text === "") return;
    this.sink.append(text);
    this.atLineStart = text.endsWith("\n");
  }

  private endLine(): void {
    if (!this.atLineStart) this.write("\n");
    this.streaming = undefined;
  }

  /** A whole line of `runId` (closing any open streamed line first). */
  private line(runId: string, text: string): void {
    this.switchTo(runId);
    this.endLine();
    this.write(`${this.tag(runId)}${text}\n`);
  }

  private tag(runId: string): string {
    const agent = this.agents.get(runId);
    if (this.tagged.has(runId)) return `[${shortId(runId)}${agent !== undefined ? ` ${agent}` : ""}] `;
    return agent !== undefined ? `[${agent}] ` : "";
  }

  private switchTo(runId: string): void {
    if (this.lineRun !== undefined && this.lineRun !== runId) {
      this.endLine();
      // Two runs interleave: from now on both are tagged.
      this.tagged.add(runId);
      this.tagged.add(this.lineRun);
    }
    this.lineRun = runId;
  }

  /** A note not tied to a run (daemon restarts and the like). */
  note(text: string): void {
    this.endLine();
    this.lineRun = undefined;
    this.write(`${text}\n`);
  }

  event(params: P.AgentEventParams): void {
    const e = P.knownEvent(params.event);
    if (e === undefined) return; // unknown event types are ignored
    const runId = params.runId;
    switch (e.type) {
      case "run_start":
        this.workspaces.set(runId, e.workspace);
        if (params.parentRunId) {
          const agent = firstLine(e.agent ?? "sub-agent", 60);
          this.agents.set(runId, agent);
          this.line(
            runId,
            `▶ Sub-agent “${agent}” · run ${shortId(runId)} of run ${shortId(params.parentRunId)} · ${e.mode} · ${e.provider}/${e.model}`,
          );
          return;
        }
        this.line(
          runId,
          `▶ Run ${shortId(runId)} · session ${shortId(params.sessionId)} · ${e.mode} · ${e.provider}/${e.model} · ${e.workspace}`,
        );
        return;
      case "user_message": {
        const who = e.source === "steer" ? "You (steer)" : e.source === "follow_up" ? "You (follow-up)" : "You";
        this.line(runId, `${who}: ${indent(e.text, "  ").trimStart()}`);
        return;
      }
      case "message_delta": {
        const kind = e.kind === "thinking" ? "thinking" : "text";
        this.switchTo(runId);
        if (this.streaming !== kind) {
          this.endLine();
          this.write(`${this.tag(runId)}${kind === "thinking" ? "  (thinking) " : "Kgent: "}`);
          this.streaming = kind;
        }
        this.write(e.delta);
        return;
      }
      case "message_end":
        if (this.lineRun === runId) this.endLine();
        if (e.message.stopReason === "error" && e.message.error)
          this.line(runId, `  ✗ model error: ${e.message.error}`);
        return;
      case "tool_call": {
        this.tools.set(e.toolCallId, { title: e.title, name: e.name });
        this.line(runId, `  ⚙ ${e.title} [${e.name}]`);
        if (e.command) this.line(runId, `    $ ${e.command}`);
        return;
      }
      case "tool_update": {
        if (e.status === "completed") {
          this.line(runId, `    ✓ done`);
          if (e.diff) this.line(runId, indent(e.diff, "    "));
          else if (e.output) this.line(runId, indent(clip(e.output, OUTPUT_LINES), "    │ "));
        } else if (e.status === "failed") {
          this.line(runId, `    ✗ failed: ${firstLine(e.output ?? "", 200)}`);
        }
        return;
      }
      case "permission_request":
        this.line(runId, `    ? approval needed (${e.risk} risk): ${e.reason}`);
        return;
      case "permission_resolved":
        this.line(runId, `    ${e.approved ? "✔" : "✗"} ${e.label}`); // the server's words for the decision
        return;
      case "queue_update":
        if (e.steering.length + e.followUp.length > 0) {
          this.line(runId, `  … queued: ${e.steering.length} steering, ${e.followUp.length} follow-up`);
        }
        return;
      case "usage":
        return;
      case "retry":
        this.line(
          runId,
          `  ↻ retrying the model call (${e.attempt}/${e.maxAttempts}) in ${e.delaySeconds}s: ${e.error}`,
        );
        return;
      case "compaction": {
        const tokens =
          e.tokensBefore != null && e.tokensAfter != null ? ` (${e.tokensBefore} → ${e.tokensAfter} tokens)` : "";
        this.line(runId, `  ⧉ compaction ${e.status}${tokens}${e.error ? `: ${e.error}` : ""}`);
        return;
      }
      case "run_end":
        this.runEnd(runId, e);
        return;
    }
  }

  private runEnd(runId: string, e: P.RunEndEvent): void {
    const u = e.usage;
    const tokens = u ? ` · ${u.text}` : "";
    const turns = `${e.turns} turn${e.turns === 1 ? "" : "s"}`;
    const err = e.error ? `: ${e.error.code}: ${e.error.message}` : "";
    this.line(runId, `■ Run ${e.status} (${e.stopReason}) · ${turns}${tokens}${err}`);
    const ws = this.workspaces.get(runId);
    if (e.changedPaths.length > 0) {
      this.line(runId, `  Changed files:`);
      for (const p of e.changedPaths) this.line(runId, `    ${ws !== undefined ? changedFileUri(ws, p) : p}`);
    } else {
      this.line(runId, `  No files changed.`);
    }
    if (e.patch) {
      this.line(runId, `  Patch:`);
      this.line(runId, indent(e.patch, "    "));
    }
    this.finishRun(runId);
  }

  /** The run ended without a run_end (the daemon went away). */
  outcome(runId: string, outcome: RunOutcome): void {
    if (outcome.kind === "lost") {
      this.line(runId, `■ Run lost: ${outcome.reason}`);
      this.finishRun(runId);
    }
  }

  private finishRun(runId: string): void {
    this.endLine();
    this.write("\n");
    this.lineRun = undefined;
    this.tagged.delete(runId);
    this.workspaces.delete(runId);
    this.agents.delete(runId);
  }

  /** An earlier conversation (a resumed session's active branch), briefly. */
  history(session: P.SessionResult, maxMessages = 6): void {
    const onBranch = new Set(session.branch);
    const messages = session.entries.filter(
      (en) => onBranch.has(en.id) && en.type === "message" && en.message !== undefined,
    );
    const shown = messages
      .map((en) => en.message as P.SessionMessage)
      .filter((m) => m.role === "user" || (m.role === "assistant" && m.text) || m.role === "summary");
    this.note(`↺ Session ${shortId(session.sessionId)} “${session.title}” (${messages.length} messages so far)`);
    if (shown.length > maxMessages) this.note(`  … ${shown.length - maxMessages} earlier messages`);
    for (const m of shown.slice(-maxMessages)) {
      if (m.role === "user") this.note(`  You: ${firstLine(m.text, 200)}`);
      else if (m.role === "assistant") this.note(`  Kgent: ${firstLine(m.text, 200)}`);
      else if (m.role === "summary") this.note(`  (summary) ${firstLine(m.text, 200)}`);
    }
    for (const w of session.warnings) this.note(`  ⚠ ${w}`);
  }
}
