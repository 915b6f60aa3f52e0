// The items the Kgent panel shows and the state it posts to its page. Types only (and one text helper), shared by the
// model (panelModel.ts), the stored-session reader (panelHistory.ts) and the page (webview/main.ts).

import type * as P from "./protocol";

/** Every item has a stable `id` and a `rev` that grows whenever it changes: the extension posts (panelMessages.ts'
 *  PageMirror) and the page re-renders only changed items. */
interface Base {
  id: string;
  rev: number;
  runId: string;
  /** The run whose section the item sits in (a sub-agent's items: its parent run's); absent: outside any run. */
  section?: string;
}

export interface UserItem extends Base {
  type: "user";
  text: string;
  source: string;
  /** Files and selections attached to the message (`@file` mentions), shown collapsed. */
  attachments: Attachment[];
  sessionId: string;
  /** Its session entry (the page offers to fork there: edit and resend the message). */
  entryId?: string;
  /** The images it carried (names and types; the bytes stay in the session), shown as chips. */
  images?: P.ImageRef[];
}
export interface Attachment {
  uri: string;
  /** The file's name and lines, e.g. `app.py#L3-L9`. */
  name: string;
  text: string;
}
export interface TextItem extends Base {
  type: "assistant" | "thinking";
  /** It only grows (each delta is appended): a new rev posts the new text alone. */
  text: string;
  /** A sub-agent's text: the sub-agent's name (it sits under the `task` card that started it). */
  agent?: string;
}
export interface ToolItem extends Base {
  type: "tool";
  toolCallId: string;
  name: string;
  kind: string;
  title: string;
  command?: string;
  path?: string;
  status: string;
  output: string;
  diff?: string;
  isError: boolean;
  /** How its permission was decided when not by you (a session rule, the mode, a timeout). */
  decidedBy?: string;
  /** What the edit's change added, from the final `tool_update` (errors first); `[]`: none; absent: not asked. */
  diagnostics?: P.Diagnostic[];
  /** A sub-agent's call: the sub-agent's name (its card sits under the `task` card that started it). */
  agent?: string;
  /** A cancel cut the call short (its result is the daemon's `cancelled: the run was cancelled`): not a failure. */
  cancelled?: boolean;
}
export interface ApprovalItem extends Base {
  type: "approval";
  requestId: string;
  toolCallId: string;
  title: string;
  reason: string;
  risk: string;
  scope: string;
  command?: string;
  path?: string;
  diff?: string;
  /** True when a side-by-side diff can be opened in the editor. */
  canOpenDiff: boolean;
  options: P.PermissionOption[];
  /** Why no "always" option is offered (the daemon's sentence), when it said so. */
  noRule?: string;
  /** True when the daemon takes "approve with changes" (the diff editor's right side is editable). */
  canEdit?: boolean;
  /** True once the person changed the proposed text in the diff editor (the card offers "Accept my version"). */
  edited?: boolean;
  /** Epoch milliseconds after which the daemon rejects the call (the countdown), if a timeout is set. */
  deadline?: number;
  state: "pending" | "answered" | "withdrawn";
  /** The option chosen (its name), once answered. */
  answer?: string;
  /** A sub-agent's prompt: its name. */
  agent?: string;
}
export interface EndItem extends Base {
  type: "end";
  sessionId: string;
  status: string;
  text: string;
  error?: string;
  errorCode?: string;
  changedPaths: string[];
  workspace: string;
  usage: P.Usage;
  turns: number;
}
export interface NoteItem extends Base {
  type: "note";
  text: string;
  severity: "info" | "error";
}

/** The agent's plan (`todo_write`): one card per run, replaced in place by each `plan` event. */
export interface PlanItem extends Base {
  type: "plan";
  entries: P.PlanEntry[];
}

export type PanelItem = UserItem | TextItem | ToolItem | ApprovalItem | EndItem | NoteItem | PlanItem;

export interface LiveRun {
  runId: string;
  sessionId: string;
  label: string;
  steering: string[];
  followUp: string[];
  usage?: P.Usage;
}

/** A run's section in the panel: its heading says which run (started here or by Run Task) and with what prompt. */
export interface RunSection {
  runId: string;
  label: string;
  /** "panel": sent from the panel's input; "task": Kgent: Run Task (or another command), its own session. */
  origin: "panel" | "task";
  live: boolean;
}

export interface PanelChoices {
  modes: string[];
  mode: string;
  models: string[];
  model: string;
  provider: string;
}

/** Everything the page needs: posted whole to a new page, then patched (panelMessages.ts); items carry revs so the
 *  extension posts and the page renders only the changed ones. */
export interface PanelState {
  items: PanelItem[];
  live: LiveRun[];
  choices: PanelChoices;
  /** The session the next message continues (after a run, a resume or a fork); undefined: a new session. */
  sessionId?: string;
  sessionLabel?: string;
  /** True when the session was resumed or forked from the history ("Continuing: …"), not begun here. */
  sessionResumed?: boolean;
  /** The session's tokens and cost so far, with the text to show: the daemon's (`agent/session`'s `usage`), read
   *  when the session is resumed and after each of its runs here. */
  sessionUsage?: P.Usage;
  /** How full the model's context was after the conversation's last model call (known once a run here made one). */
  sessionContext?: P.ContextUse;
  /** The runs shown, each a section of the conversation. */
  sections: RunSection[];
  /** The daemon's shell sandbox in words ("bubblewrap", "none: every command asks"), once known. */
  sandbox?: { text: string; tooltip: string; warn: boolean };
  trusted: boolean;
}

/** The result the daemon gives a call that a cancel cut short (protocol.md, `tool_update`). */
export const CANCELLED_RESULT = "cancelled: the run was cancelled";

/** Whether a failed call's result says a cancel cut it short (not that the call itself failed). */
export function cancelledResult(output: string | null | undefined): boolean {
  return typeof output === "string" && output.trim() === CANCELLED_RESULT;
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, " ⏎ ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
