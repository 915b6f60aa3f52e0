// What the Kgent panel shows, folded from `agent/event`s and approval requests. Editor-agnostic (no `vscode`): the
// webview view (ui/panel.ts) posts `PanelState` to the page (webview/main.ts), which renders it: whole to a new page,
// then what changed, known by each item's rev (so every change to an item goes through `touch`).

import { instructionsNote } from "./instructionsModel";
import { storedItems, userItem } from "./panelHistory";
import type {
  ApprovalItem,
  EndItem,
  LiveRun,
  NoteItem,
  PanelChoices,
  PanelItem,
  PanelState,
  PlanItem,
  RunSection,
  TextItem,
  ToolItem,
} from "./panelItems";
import { cancelledResult, oneLine } from "./panelItems";
import { knownEvent } from "./protocol";
import { noRuleOf } from "./rules";
import type * as P from "./protocol";

/** The title an approval card carries: what the call does, in words. */
export function approvalTitle(params: P.PermissionParams): string {
  const tc = params.toolCall;
  const outside = params.scope === "outside" ? " (outside the workspace)" : "";
  if (tc.command) return `Run a command${outside}`;
  if (tc.path) return `${tc.name} ${tc.path}${outside}`;
  return `${tc.title || tc.name}${outside}`;
}

export class PanelModel {
  private items: PanelItem[] = [];
  private readonly byId = new Map<string, PanelItem>();
  private readonly live = new Map<string, LiveRun>();
  /** The open assistant/thinking item of each run (deltas append to it until `message_end` or another item). */
  private readonly open = new Map<string, TextItem>();
  private readonly workspaces = new Map<string, string>();
  private readonly ended = new Set<string>();
  /** Live sub-agent runs (`parentRunId` on their events): run id → the sub-agent's name. */
  private readonly subRuns = new Map<string, string>();
  /** Sub-agent run → the run it belongs to (its items sit in that run's section). */
  private readonly parents = new Map<string, string>();
  private readonly sectionList = new Map<string, RunSection>();
  /** What the person typed for a run the panel started, when the daemon expanded it (a slash command: `/review`). */
  private readonly typed = new Map<string, string>();
  /** Queued messages a run ended without reading (cancelled, failed, lost), not yet put back into the input. */
  private unread: string[] = [];
  private seq = 0;
  sessionResumed = false;
  sessionUsage: P.Usage | undefined;
  sessionContext: P.ContextUse | undefined;
  sandbox: PanelState["sandbox"];
  choices: PanelChoices = {
    modes: ["plan", "ask", "auto", "full", "risk_based"],
    mode: "ask",
    models: [],
    model: "",
    provider: "",
  };
  sessionId: string | undefined;
  sessionLabel: string | undefined;
  trusted = true;

  snapshot(): PanelState {
    return {
      items: this.items,
      live: [...this.live.values()],
      choices: this.choices,
      sessionId: this.sessionId,
      sessionLabel: this.sessionLabel,
      sessionResumed: this.sessionResumed,
      sessionUsage: this.sessionUsage,
      sessionContext: this.sessionContext,
      sections: [...this.sectionList.values()],
      sandbox: this.sandbox,
      trusted: this.trusted,
    };
  }

  liveRun(runId: string): LiveRun | undefined {
    return this.live.get(runId);
  }

  get liveRuns(): LiveRun[] {
    return [...this.live.values()];
  }

  item(id: string): PanelItem | undefined {
    return this.byId.get(id);
  }

  /** Forget the conversation (not the live runs): "New conversation". */
  clear(): void {
    this.items = this.items.filter((i) => this.live.has(i.runId) || (i.type === "approval" && i.state === "pending"));
    this.byId.clear();
    for (const i of this.items) this.byId.set(i.id, i);
    this.sessionId = undefined;
    this.sessionLabel = undefined;
    this.sessionResumed = false;
    this.sessionUsage = undefined;
    this.sessionContext = undefined;
    for (const id of [...this.sectionList.keys()]) if (!this.live.has(id)) this.sectionList.delete(id);
  }

  private push<T extends PanelItem>(item: T): T {
    if (item.runId !== "") {
      const section = this.parents.get(item.runId) ?? item.runId;
      item.section = section;
      if (!this.sectionList.has(section))
        this.sectionList.set(section, { runId: section, label: "", origin: "task", live: this.live.has(section) });
    }
    this.items.push(item);
    this.byId.set(item.id, item);
    return item;
  }

  private nextId(prefix: string): string {
    return `${prefix}-${++this.seq}`;
  }

  /** `item` changed: the panel posts it again (a text item: only what was appended since), the page renders it. */
  private touch(item: PanelItem): void {
    item.rev++;
  }

  note(text: string, severity: "info" | "error" = "info", runId = ""): void {
    this.open.delete(runId);
    this.push<NoteItem>({ type: "note", id: this.nextId("note"), rev: 0, runId, text, severity });
  }

  /**
   * A run started: by the panel (`origin` "panel": the conversation continues its session) or by a command such as
   * Run Task (`origin` "task": its own section, the panel's conversation stays where it is). Also called from its
   * `run_start` event (`origin` undefined: its label, the expanded prompt, gives way to the starter's). `typed`: the
   * text as the person typed it, when the daemon expands it (a slash command): their message shows that.
   */
  runStarted(
    runId: string,
    sessionId: string,
    label: string,
    workspace: string,
    origin?: "panel" | "task",
    typed?: string,
  ): void {
    const run = this.live.get(runId);
    if (!this.ended.has(runId) && run === undefined)
      this.live.set(runId, { runId, sessionId, label, steering: [], followUp: [] });
    else if (run !== undefined && origin !== undefined) run.label = label;
    const sec = this.sectionList.get(runId) ?? { runId, label, origin: "task" as const, live: !this.ended.has(runId) };
    if (sec.label === "" || origin !== undefined) sec.label = label;
    if (origin !== undefined) sec.origin = origin;
    this.sectionList.set(runId, sec);
    if (typed !== undefined && isExpanded(typed)) this.showTyped(runId, typed);
    if (this.ended.has(runId) && origin === undefined) return;
    this.workspaces.set(runId, workspace);
    if (origin !== "panel") return;
    if (this.sessionId !== sessionId) {
      this.sessionLabel = label;
      this.sessionResumed = false;
      this.sessionUsage = undefined;
      this.sessionContext = undefined;
    }
    this.sessionId = sessionId;
  }

  /** The run's prompt as typed (`/review`), not its expansion: its message (if shown already) and the next one. */
  private showTyped(runId: string, typed: string): void {
    this.typed.set(runId, typed);
    const shown = this.items.find((i) => i.type === "user" && i.runId === runId && i.source === "prompt");
    if (shown !== undefined && shown.type === "user" && shown.text !== typed) {
      shown.text = typed;
      this.touch(shown);
    }
  }

  /**
   * The queued messages runs ended without reading (their last `queue_update`: a cancel, a failure or a lost daemon
   * drops them), once: the panel puts them back into the input. Empty when there are none.
   */
  takeUnread(): string[] {
    const out = this.unread;
    this.unread = [];
    return out;
  }

  /** A run ended with messages still queued: they go back to the person (takeUnread), and a note says so. */
  private returnQueued(run: LiveRun, why: string): void {
    const queued = [...run.steering, ...run.followUp];
    if (queued.length === 0) return;
    this.unread.push(...queued);
    const what = queued.length === 1 ? "the queued message is" : `the ${queued.length} queued messages are`;
    this.note(`${why}: ${what} back in the box, not sent (the model never read them).`, "info", run.runId);
  }

  /** A run ended without a `run_end` (the daemon exited): its calls still pending or running end, as lost. */
  runLost(runId: string, reason: string): void {
    const run = this.live.get(runId);
    if (run === undefined || !this.live.delete(runId)) return;
    this.open.delete(runId);
    const sec = this.sectionList.get(runId);
    if (sec !== undefined) sec.live = false;
    for (const i of this.items) {
      const mine = i.runId === runId || this.parents.get(i.runId) === runId;
      if (!mine) continue;
      if (i.type === "tool" && (i.status === "pending" || i.status === "in_progress")) {
        i.status = "failed";
        i.isError = true;
        i.output = `${i.output ? `${i.output.trimEnd()}\n` : ""}lost: ${reason}`;
        this.touch(i);
      } else if (i.type === "approval" && i.state === "pending") {
        i.state = "withdrawn";
        this.touch(i);
      }
    }
    this.note(`The run was lost: ${reason}`, "error", runId);
    this.returnQueued(run, "The run was lost");
    this.typed.delete(runId);
  }

  event(params: P.AgentEventParams): void {
    const e = knownEvent(params.event);
    if (e === undefined) return;
    const runId = params.runId;
    if (params.parentRunId !== undefined && params.parentRunId !== null) {
      this.parents.set(runId, this.parents.get(params.parentRunId) ?? params.parentRunId);
      if (!this.subEvent(runId, e)) return;
    }
    switch (e.type) {
      case "run_start":
        this.runStarted(runId, params.sessionId, oneLine(e.prompt, 60), e.workspace);
        return;
      case "user_message": {
        this.open.delete(runId);
        const item = userItem(
          this.nextId("user"),
          runId,
          e.text,
          e.source,
          params.sessionId,
          e.entryId ?? undefined,
          e.images,
        );
        const typed = this.typed.get(runId);
        if (typed !== undefined && e.source === "prompt") item.text = typed;
        this.push(item);
        return;
      }
      case "message_delta": {
        const kind = e.kind === "thinking" ? "thinking" : "assistant";
        let cur = this.open.get(runId);
        if (cur === undefined || cur.type !== kind) {
          cur = this.push<TextItem>({ type: kind, id: this.nextId(kind), rev: 0, runId, text: "" });
          const agent = this.subRuns.get(runId);
          if (agent !== undefined) cur.agent = agent;
          this.open.set(runId, cur);
        }
        cur.text += e.delta;
        this.touch(cur);
        return;
      }
      case "message_end":
        this.open.delete(runId);
        return;
      case "tool_call":
        this.open.delete(runId);
        this.push<ToolItem>({
          type: "tool",
          id: `tool-${runId}-${e.toolCallId}`,
          rev: 0,
          runId,
          toolCallId: e.toolCallId,
          name: e.name,
          kind: e.kind,
          title: e.title || e.name,
          command: e.command ?? undefined,
          path: e.path ?? undefined,
          status: "pending",
          output: "",
          isError: false,
          agent: this.subRuns.get(runId),
        });
        return;
      case "tool_update": {
        const t = this.byId.get(`tool-${runId}-${e.toolCallId}`);
        if (t === undefined || t.type !== "tool") return;
        const live = t.status === "in_progress" ? t.output : "";
        t.status = e.status;
        if (typeof e.output === "string") {
          // A final result that does not carry the live output (a cancelled command's "cancelled: …") keeps it above.
          const final = e.status !== "in_progress" && live !== "" && !e.output.includes(live.trimEnd());
          t.output = final ? `${live.trimEnd()}\n${e.output}` : e.output;
        }
        if (typeof e.diff === "string" && e.diff !== "") t.diff = e.diff;
        if (Array.isArray(e.diagnostics)) t.diagnostics = e.diagnostics;
        t.isError = e.isError === true;
        t.cancelled = e.status === "failed" && cancelledResult(e.output) ? true : undefined;
        this.touch(t);
        return;
      }
      case "permission_resolved": {
        const t = this.byId.get(`tool-${runId}-${e.toolCallId}`);
        if (t !== undefined && t.type === "tool" && e.source !== "host") {
          t.decidedBy = e.label; // the server's words: "allowed by the project rule `bash(grep *)`", "rejected by the plan mode"
          this.touch(t);
        }
        return;
      }
      case "plan": {
        const id = `plan-${runId}`;
        const p = this.byId.get(id);
        if (p !== undefined && p.type === "plan") {
          p.entries = e.entries;
          this.touch(p);
        } else {
          this.open.delete(runId);
          this.push<PlanItem>({ type: "plan", id, rev: 0, runId, entries: e.entries });
        }
        return;
      }
      case "instructions":
        // AGENTS.md entering the model's context is worth a line: the person sees what the model was told to follow.
        if (e.files.length > 0) this.note(instructionsNote(e.files, this.workspaces.get(runId) ?? ""), "info", runId);
        return;
      case "queue_update": {
        const r = this.live.get(runId);
        if (r !== undefined) {
          r.steering = e.steering;
          r.followUp = e.followUp;
        }
        return;
      }
      case "usage": {
        const r = this.live.get(runId);
        if (r !== undefined) r.usage = e.total;
        // The gauge follows the panel's conversation (a Run Task run has a session of its own, a sub-agent its own
        // context).
        const own = params.parentRunId === undefined || params.parentRunId === null;
        if (
          e.context &&
          own &&
          (this.sectionList.get(runId)?.origin === "panel" || params.sessionId === this.sessionId)
        )
          this.sessionContext = e.context;
        return;
      }
      case "run_end": {
        this.ended.add(runId);
        this.open.delete(runId);
        const run = this.live.get(runId);
        this.live.delete(runId);
        this.typed.delete(runId);
        const sec = this.sectionList.get(runId);
        if (sec !== undefined) sec.live = false;
        // The panel's conversation follows its own runs only (a Run Task run is in a session of its own).
        if (sec?.origin === "panel" || e.sessionId === this.sessionId) this.sessionId = e.sessionId;
        this.push<EndItem>({
          type: "end",
          id: this.nextId("end"),
          rev: 0,
          runId,
          sessionId: e.sessionId,
          status: e.status,
          text: e.text,
          error: e.error?.message,
          errorCode: e.error?.code,
          changedPaths: e.changedPaths,
          workspace: this.workspaces.get(runId) ?? "",
          usage: e.usage,
          turns: e.turns,
        });
        this.workspaces.delete(runId);
        // What its last queue_update still listed never reached the model: the person gets it back.
        const why = e.status === "cancelled" ? "Stopped" : e.status === "failed" ? "The run failed" : "The run ended";
        if (run !== undefined) this.returnQueued(run, why);
        return;
      }
      default:
        return;
    }
  }

  /**
   * A sub-agent's event: its streamed text and its calls (and their approvals and updates) show labelled with its
   * name, under the `task` card that started it (they arrive before that call ends); the rest of its run is the
   * `task` call's business. True when the event is to be shown as any other.
   */
  private subEvent(runId: string, e: P.KnownEvent): boolean {
    switch (e.type) {
      case "run_start":
        this.subRuns.set(runId, e.agent ?? "sub-agent");
        return false;
      case "run_end":
        this.subRuns.delete(runId);
        return false;
      case "message_delta":
      case "message_end":
      case "tool_call":
      case "tool_update":
      case "permission_resolved":
      case "plan":
        return true;
      default:
        return false;
    }
  }

  /** An approval card for a pending `agent/permission` request. */
  approvalRequested(params: P.PermissionParams, deadline: number | undefined, canOpenDiff: boolean): ApprovalItem {
    this.open.delete(params.runId);
    const tc = params.toolCall;
    return this.push<ApprovalItem>({
      type: "approval",
      id: `approval-${params.requestId}`,
      rev: 0,
      runId: params.runId,
      requestId: params.requestId,
      toolCallId: tc.toolCallId,
      title: approvalTitle(params),
      reason: params.reason,
      risk: params.risk,
      scope: params.scope,
      command: tc.command ?? undefined,
      path: tc.path ?? undefined,
      diff: tc.diff ?? undefined,
      canOpenDiff,
      options: params.options,
      noRule: noRuleOf(params),
      deadline,
      state: "pending",
      agent: params.agent ?? undefined,
    });
  }

  /**
   * An approval was answered (`answer`: the option's name) or withdrawn. Its card folds into the tool card it was
   * about (one line saying how it was decided), so the conversation reads in order.
   */
  approvalSettled(requestId: string, answer: string | undefined): void {
    const a = this.byId.get(`approval-${requestId}`);
    if (a === undefined || a.type !== "approval" || a.state !== "pending") return;
    a.state = answer === undefined ? "withdrawn" : "answered";
    a.answer = answer;
    this.touch(a);
    const t = this.byId.get(`tool-${a.runId}-${a.toolCallId}`);
    if (t !== undefined && t.type === "tool") {
      t.decidedBy =
        answer !== undefined
          ? `Answered: ${answer}`
          : "Approval withdrawn (the run was cancelled or the approval timed out)";
      this.touch(t);
      this.items = this.items.filter((i) => i !== a);
      this.byId.delete(a.id);
    }
  }

  /**
   * Show a stored session's active branch (a resume, a fork): its messages and tool calls as the live events showed
   * them, in place of the conversation (live runs stay). The next message continues the session.
   */
  showSession(session: P.SessionResult, label: string): void {
    this.clear();
    this.sessionId = session.sessionId;
    this.sessionLabel = label;
    this.sessionResumed = true;
    this.sessionUsage = session.usage ?? undefined;
    this.sessionContext = undefined; // known again after the next model call
    for (const item of storedItems(session, (prefix) => this.nextId(prefix))) this.push(item);
  }

  /** The last run shown that changed files (what Kgent: Review Changes reviews). */
  lastChangingRun(): { sessionId: string; runId: string } | undefined {
    const end = [...this.items].reverse().find((i): i is EndItem => i.type === "end" && i.changedPaths.length > 0);
    return end === undefined ? undefined : { sessionId: end.sessionId, runId: end.runId };
  }

  /** The person changed a pending approval's proposed text (in the diff editor). */
  approvalEdited(requestId: string): void {
    const a = this.byId.get(`approval-${requestId}`);
    if (a === undefined || a.type !== "approval" || a.state !== "pending" || a.edited === true) return;
    a.edited = true;
    this.touch(a);
  }

  pendingApprovals(): ApprovalItem[] {
    return this.items.filter((i): i is ApprovalItem => i.type === "approval" && i.state === "pending");
  }
}

/** Whether the daemon expands what was typed before the model sees it: a slash command (`//text` is sent as `/text`). */
function isExpanded(typed: string): boolean {
  return /^\/[\w.-]/.test(typed);
}
