// The editor-agnostic Kgent daemon client: spawns `kgent serve --stdio`, speaks protocol.md over its stdin/stdout,
// routes `agent/event`s to per-run handles and `agent/permission` requests to the host's `decide`.
//
// No `vscode` import: this module is tested directly in Node against the real daemon.

import { spawn, type ChildProcess } from "node:child_process";
import {
  CancellationTokenSource,
  createMessageConnection,
  ErrorCodes as RpcErrorCodes,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  type CancellationToken,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import { serveDiagnostics, type DiagnosticsHost } from "./diagnostics";
import { FS_CAPABILITIES, serveFiles, type FileHost } from "./hostFiles";
import * as P from "./protocol";

export const CLIENT_NAME = "kgent-vscode";
export const CLIENT_VERSION = "0.1.0";

/** How to start the daemon. */
export interface DaemonCommand {
  command: string;
  args: string[];
  cwd?: string;
  /** The daemon's whole environment (defaults to this process's). */
  env?: NodeJS.ProcessEnv;
}

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  /** True when the client asked the daemon to end (stop()). */
  expected: boolean;
  /** Set when the process could not be started at all (e.g. ENOENT). */
  spawnError?: Error;
  /** The end of what the process wrote to stderr (its own words on why it stopped). */
  stderrTail?: string;
}

export interface ClientHooks {
  /** Daemon stderr (as it arrives) and the client's own notes. */
  log?(text: string): void;
  /** Every `agent/event`, in arrival order (also routed to the run's handle). */
  onEvent?(params: P.AgentEventParams): void;
  /**
   * Decide one tool call. `token` fires when the daemon withdraws the prompt (`$/cancelRequest`) or the daemon exits:
   * close the prompt then. Anything but a selected, offered option is answered as `{outcome: "cancelled"}` (a reject).
   */
  decide(params: P.PermissionParams, token: CancellationToken): Promise<P.PermissionResult>;
  /** The process ended (after `stop()` too: see `expected`). */
  onExit?(info: ExitInfo): void;
  /** The editor's open buffers: declared in `initialize` (`capabilities.fs`) and served to the daemon. */
  files?: FileHost;
  /** The editor's language features: declared in `initialize` (`capabilities.diagnostics`), asked after edits. */
  diagnostics?: DiagnosticsHost;
}

/** What `initialize` declares: the buffers and the diagnostics the editor serves. */
function capabilitiesOf(hooks: ClientHooks): P.ClientCapabilities {
  return {
    ...(hooks.files !== undefined ? FS_CAPABILITIES : {}),
    ...(hooks.diagnostics !== undefined ? { diagnostics: true } : {}),
  };
}

/** A JSON-RPC error from the daemon (or a client-side failure dressed as one). */
export class KgentError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly dataCode?: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "KgentError";
  }
}

/** Client-side code for "the daemon is gone" (outside the ranges protocol.md and vscode-jsonrpc use). */
export const DAEMON_EXITED = -32090;

function toKgentError(e: unknown): KgentError {
  if (e instanceof KgentError) return e;
  if (e instanceof ResponseError) {
    const data: unknown = e.data;
    const obj = typeof data === "object" && data !== null ? (data as Record<string, unknown>) : undefined;
    const dataCode = obj !== undefined && typeof obj.code === "string" ? obj.code : undefined;
    return new KgentError(e.message, e.code, dataCode, obj);
  }
  const message = e instanceof Error ? e.message : String(e);
  return new KgentError(message, P.ErrorCodes.InternalError);
}

export type RunOutcome = { kind: "ended"; end: P.RunEndEvent } | { kind: "lost"; reason: string };

type Listener<T> = (value: T) => void;

/** One run: its events (replayed from the first one to each new listener) and how it ended. */
export class RunHandle {
  private readonly events: P.AgentEventParams[] = [];
  private readonly listeners = new Set<Listener<P.AgentEventParams>>();
  private resolveDone!: (outcome: RunOutcome) => void;
  private settled = false;
  /** Resolves on `run_end`, or with `lost` if the daemon exits first. Never rejects. */
  readonly done: Promise<RunOutcome>;
  private nextSeq = 0;

  constructor(
    readonly runId: string,
    readonly sessionId: string,
    private readonly log: (text: string) => void,
  ) {
    this.done = new Promise<RunOutcome>((resolve) => {
      this.resolveDone = resolve;
    });
  }

  get ended(): boolean {
    return this.settled;
  }

  /** Every event so far, then each new one. */
  onEvent(listener: Listener<P.AgentEventParams>): { dispose(): void } {
    for (const e of this.events) listener(e);
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** @internal */
  deliver(params: P.AgentEventParams): void {
    if (this.settled) return;
    if (params.seq !== this.nextSeq) {
      this.log(`[kgent-client] run ${this.runId}: event seq ${params.seq}, expected ${this.nextSeq}\n`);
    }
    this.nextSeq = params.seq + 1;
    this.events.push(params);
    for (const l of [...this.listeners]) {
      try {
        l(params);
      } catch (e) {
        this.log(`[kgent-client] event listener failed: ${String(e)}\n`);
      }
    }
    if (params.event.type === "run_end") this.finish({ kind: "ended", end: params.event as P.RunEndEvent });
  }

  /** @internal */
  finish(outcome: RunOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.resolveDone(outcome);
  }
}

export interface StartOptions {
  settings?: P.InitializeSettings;
  clientInfo?: { name: string; version?: string };
  /** How long to wait for the `initialize` answer (default 30 s). */
  initializeTimeoutMs?: number;
}

/** Split a command line into words: whitespace separates, '…' and "…" quote, \ escapes (outside '…'). */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let cur = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else cur += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === "\\" && i + 1 < line.length && (line[i + 1] === '"' || line[i + 1] === "\\")) cur += line[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      cur += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (quote !== null) throw new Error(`unterminated ${quote} quote in command line: ${line}`);
  if (inWord) words.push(cur);
  return words;
}

const MAX_UNCLAIMED_RUNS = 32;

/** One daemon process and its connection. Use `KgentClient.start`. */
export class KgentClient {
  private readonly runs = new Map<string, RunHandle>();
  /** Events of runs whose `agent/run` answer has not been processed yet (the answer always comes first on the wire,
   * but the awaiting code may resume after the next frames were dispatched). */
  private readonly unclaimed = new Map<string, P.AgentEventParams[]>();
  private readonly openPrompts = new Set<CancellationTokenSource>();
  private stopping = false;
  private exitInfo: ExitInfo | undefined;
  private readonly exitPromise: Promise<ExitInfo>;
  private resolveExit!: (info: ExitInfo) => void;
  private initResult: P.InitializeResult | undefined;
  private stderrTail = "";

  private constructor(
    private readonly child: ChildProcess,
    private readonly conn: MessageConnection,
    private readonly hooks: ClientHooks,
  ) {
    this.exitPromise = new Promise<ExitInfo>((resolve) => {
      this.resolveExit = resolve;
    });
  }

  /** Spawn the daemon and complete `initialize`. Rejects (and kills the process) if it cannot be started. */
  static async start(cmd: DaemonCommand, hooks: ClientHooks, options: StartOptions = {}): Promise<KgentClient> {
    const child = spawn(cmd.command, cmd.args, {
      cwd: cmd.cwd,
      env: cmd.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    const log = (text: string): void => hooks.log?.(text);
    const ref: { client?: KgentClient } = {};
    // Always drain stderr, or the daemon blocks on a full pipe; keep its end for start-failure messages.
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      log(chunk);
      ref.client?.keepStderr(chunk);
    });
    child.stdin?.on("error", () => undefined); // EPIPE after a crash: reported through 'exit'
    // A write to a daemon that is exiting fails ("Sending request failed."); its exit is reported on its own, so such
    // a failure is not worth an error-looking line in the log.
    const writeFailed = (m: string): boolean => /^Sending (request|notification|response) failed/.test(m);
    const quiet = (m: string): boolean =>
      writeFailed(m) && (child.stdin?.destroyed === true || child.exitCode !== null || ref.client?.ending === true);
    const conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin), {
      error: (m) => (quiet(m) ? undefined : log(`[kgent-client] ${m}\n`)),
      warn: (m) => log(`[kgent-client] ${m}\n`),
      info: () => undefined,
      log: () => undefined,
    });
    const client = new KgentClient(child, conn, hooks);
    ref.client = client;
    child.on("error", (err) => client.onProcessEnd(null, null, err));
    child.on("exit", (code, signal) => client.onProcessEnd(code, signal));
    conn.onNotification(P.AgentEvent, (params) => client.onAgentEvent(params));
    conn.onRequest(P.AgentPermission, (params, token) => client.onPermission(params, token));
    if (hooks.files !== undefined) serveFiles(conn, hooks.files);
    if (hooks.diagnostics !== undefined) serveDiagnostics(conn, hooks.diagnostics);
    conn.onError(([err]) => log(`[kgent-client] connection error: ${err.message}\n`));
    conn.listen();

    const timeoutMs = options.initializeTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        conn.sendRequest(P.Initialize, {
          protocolVersion: P.PROTOCOL_VERSION,
          clientInfo: options.clientInfo ?? { name: CLIENT_NAME, version: CLIENT_VERSION },
          capabilities: capabilitiesOf(hooks),
          settings: options.settings ?? {},
        }),
        client.exitPromise.then((info): never => {
          throw new KgentError(describeStartFailure(cmd, info), DAEMON_EXITED, "daemon_exited");
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new KgentError(
                  `the Kgent daemon did not answer initialize within ${timeoutMs / 1000} s`,
                  DAEMON_EXITED,
                  "daemon_timeout",
                ),
              ),
            timeoutMs,
          );
        }),
      ]);
      if (result.protocolVersion !== P.PROTOCOL_VERSION) {
        throw new KgentError(
          `the Kgent daemon speaks protocol version ${result.protocolVersion}; this extension speaks ${P.PROTOCOL_VERSION}`,
          P.ErrorCodes.InvalidRequest,
          "protocol_version",
        );
      }
      client.initResult = result;
      return client;
    } catch (e) {
      const exit = client.exitInfo;
      await client.stop(1000);
      if (exit !== undefined) throw new KgentError(describeStartFailure(cmd, exit), DAEMON_EXITED, "daemon_exited");
      throw toKgentError(e);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  /** Remember the last few KB of stderr. */
  keepStderr(chunk: string): void {
    this.stderrTail = (this.stderrTail + chunk).slice(-4000);
  }

  /** The process is stopping or has ended: write failures are expected. */
  get ending(): boolean {
    return this.stopping || this.exitInfo !== undefined;
  }

  get initializeResult(): P.InitializeResult {
    if (this.initResult === undefined) throw new Error("not initialized");
    return this.initResult;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  /** Resolves when the process has ended. */
  get exited(): Promise<ExitInfo> {
    return this.exitPromise;
  }

  /** The live runs started through this client. */
  liveRuns(): RunHandle[] {
    return [...this.runs.values()].filter((r) => !r.ended);
  }

  getRun(runId: string): RunHandle | undefined {
    return this.runs.get(runId);
  }

  // ------------------------------------------------------------------------------------------- requests

  private async request<R>(send: () => Promise<R>): Promise<R> {
    if (!this.alive) throw new KgentError("the Kgent daemon is not running", DAEMON_EXITED, "daemon_exited");
    try {
      return await send();
    } catch (e) {
      if (!this.alive || (e instanceof ResponseError && e.code === RpcErrorCodes.PendingResponseRejected)) {
        // PendingResponseRejected: the connection was disposed because the process ended.
        throw new KgentError(
          `the Kgent daemon exited (${describeExit(this.exitInfo)})`,
          DAEMON_EXITED,
          "daemon_exited",
        );
      }
      throw toKgentError(e);
    }
  }

  /** `agent/rules`: the effective permission rules of a workspace. */
  rules(workspace: string): Promise<P.RulesResult> {
    return this.request(() => this.conn.sendRequest(P.AgentRules, { workspace }));
  }

  /** `agent/addRule`: a bad rule is an InvalidParams error whose message says what is wrong. */
  addRule(params: P.RuleParams): Promise<P.AddRuleResult> {
    return this.request(() => this.conn.sendRequest(P.AgentAddRule, params));
  }

  /** `agent/removeRule`. */
  removeRule(params: P.RuleParams): Promise<P.RemoveRuleResult> {
    return this.request(() => this.conn.sendRequest(P.AgentRemoveRule, params));
  }

  /** Re-send `initialize` with new settings (they apply to runs started afterwards). */
  async reinitialize(settings: P.InitializeSettings): Promise<P.InitializeResult> {
    const result = await this.request(() =>
      this.conn.sendRequest(P.Initialize, {
        protocolVersion: P.PROTOCOL_VERSION,
        clientInfo: { name: CLIENT_NAME, version: CLIENT_VERSION },
        capabilities: capabilitiesOf(this.hooks),
        settings,
      }),
    );
    this.initResult = result;
    return result;
  }

  /** Start a run; resolves with its handle once the daemon has accepted it. */
  async run(params: P.RunParams): Promise<RunHandle> {
    const result = await this.request(() => this.conn.sendRequest(P.AgentRun, params));
    const handle = new RunHandle(result.runId, result.sessionId, (t) => this.hooks.log?.(t));
    this.runs.set(result.runId, handle);
    const early = this.unclaimed.get(result.runId);
    if (early !== undefined) {
      this.unclaimed.delete(result.runId);
      for (const e of early) handle.deliver(e);
    }
    if (!this.alive)
      handle.finish({ kind: "lost", reason: `the Kgent daemon exited (${describeExit(this.exitInfo)})` });
    return handle;
  }

  cancel(runId: string): Promise<P.CancelResult> {
    return this.request(() => this.conn.sendRequest(P.AgentCancel, { runId }));
  }

  steer(runId: string, text: string): Promise<Record<string, never>> {
    return this.request(() => this.conn.sendRequest(P.AgentSteer, { runId, text }));
  }

  followUp(runId: string, text: string): Promise<Record<string, never>> {
    return this.request(() => this.conn.sendRequest(P.AgentFollowUp, { runId, text }));
  }

  /** Drop the run's queued steering and follow-up messages (a `queue_update` with empty lists follows). */
  clearQueue(runId: string): Promise<Record<string, never>> {
    return this.request(() => this.conn.sendRequest(P.AgentClearQueue, { runId }));
  }

  sessions(workspace: string): Promise<P.SessionsResult> {
    return this.request(() => this.conn.sendRequest(P.AgentSessions, { workspace }));
  }

  session(sessionId: string, branchOnly?: boolean): Promise<P.SessionResult> {
    const params: P.SessionParams = branchOnly === undefined ? { sessionId } : { sessionId, branchOnly };
    return this.request(() => this.conn.sendRequest(P.AgentSession, params));
  }

  fork(sessionId: string, entryId: string): Promise<P.ForkResult> {
    return this.request(() => this.conn.sendRequest(P.AgentFork, { sessionId, entryId }));
  }

  /** Give a session a title of the person's choosing ("" goes back to the derived one): `agent/renameSession`. */
  renameSession(sessionId: string, title: string): Promise<Record<string, never>> {
    return this.request(() => this.conn.sendRequest(P.AgentRenameSession, { sessionId, title }));
  }

  /** Remove a session for good (`agent/deleteSession`). */
  deleteSession(sessionId: string): Promise<Record<string, never>> {
    return this.request(() => this.conn.sendRequest(P.AgentDeleteSession, { sessionId }));
  }

  /** The workspace's slash commands: built-ins and prompt templates (`agent/commands`). */
  commands(workspace: string): Promise<P.CommandsResult> {
    return this.request(() => this.conn.sendRequest(P.AgentCommands, { workspace }));
  }

  /** A slash command as typed: its action, and the daemon's answer to `/help`, `/cost`, `/mode`, `/model`
   *  (`agent/command`). */
  command(params: P.CommandParams): Promise<P.CommandResult> {
    return this.request(() => this.conn.sendRequest(P.AgentCommand, params));
  }

  /** A session's active branch as Markdown, HTML or JSON, redacted (`agent/exportSession`). */
  exportSession(params: P.ExportParams): Promise<P.ExportResult> {
    return this.request(() => this.conn.sendRequest(P.AgentExportSession, params));
  }

  /** `token` cancellation sends `$/cancelRequest` (the request then fails with -32800). */
  compact(params: P.CompactParams, token?: CancellationToken): Promise<P.CompactResult> {
    return this.request(() =>
      token === undefined
        ? this.conn.sendRequest(P.AgentCompact, params)
        : this.conn.sendRequest(P.AgentCompact, params, token),
    );
  }

  /** The hunks a session's (or one run's) changes are made of, with their review status (`agent/review`). */
  review(params: P.ReviewParams): Promise<P.ReviewResult> {
    return this.request(() => this.conn.sendRequest(P.AgentReview, params));
  }

  /** Keep (accept) and revert (reject) hunks; conflicts come back per hunk (`agent/applyReview`). */
  applyReview(params: P.ApplyReviewParams): Promise<P.ApplyReviewResult> {
    return this.request(() => this.conn.sendRequest(P.AgentApplyReview, params));
  }

  /** Restore the files changed since a user message and fork before it (`dryRun`: only say what would happen). */
  rewind(params: P.RewindParams): Promise<P.RewindResult> {
    return this.request(() => this.conn.sendRequest(P.AgentRewind, params));
  }

  /**
   * End the daemon: `exit`, then wait up to `timeoutMs` for the process to go, then SIGKILL it. Idempotent.
   * (`exit` cancels every live run; their handles resolve as `lost`.)
   */
  async stop(timeoutMs = 3000): Promise<ExitInfo> {
    this.stopping = true;
    if (this.alive) {
      try {
        await Promise.race([this.conn.sendNotification(P.Exit), delay(500)]);
      } catch {
        // the pipe may already be closed
      }
      this.child.stdin?.end();
      const timer = setTimeout(() => {
        if (this.alive) this.child.kill("SIGKILL");
      }, timeoutMs);
      await this.exitPromise;
      clearTimeout(timer);
    }
    return this.exitPromise;
  }

  /** Kill the process outright (SIGKILL), as a crash would. For tests and "Restart Daemon" of a hung daemon. */
  kill(): void {
    if (this.alive) this.child.kill("SIGKILL");
  }

  // ------------------------------------------------------------------------------------------- incoming

  private onAgentEvent(params: P.AgentEventParams): void {
    try {
      this.hooks.onEvent?.(params);
    } catch (e) {
      this.hooks.log?.(`[kgent-client] onEvent failed: ${String(e)}\n`);
    }
    const handle = this.runs.get(params.runId);
    if (handle !== undefined) {
      handle.deliver(params);
      return;
    }
    if (params.parentRunId !== undefined && params.parentRunId !== null) return; // a sub-agent's run: no agent/run of ours
    let buf = this.unclaimed.get(params.runId);
    if (buf === undefined) {
      buf = [];
      this.unclaimed.set(params.runId, buf);
      while (this.unclaimed.size > MAX_UNCLAIMED_RUNS) {
        const oldest = this.unclaimed.keys().next().value;
        if (oldest === undefined) break;
        this.unclaimed.delete(oldest);
      }
    }
    buf.push(params);
  }

  private async onPermission(params: P.PermissionParams, token: CancellationToken): Promise<P.PermissionResult> {
    const source = new CancellationTokenSource();
    this.openPrompts.add(source);
    const sub = token.onCancellationRequested(() => source.cancel());
    if (!this.alive) source.cancel();
    try {
      const answer = await this.hooks.decide(params, source.token);
      return sanitizeAnswer(params, answer);
    } catch (e) {
      this.hooks.log?.(`[kgent-client] permission prompt failed (answered as a reject): ${String(e)}\n`);
      return { outcome: "cancelled" };
    } finally {
      sub.dispose();
      this.openPrompts.delete(source);
      source.dispose();
    }
  }

  private onProcessEnd(code: number | null, signal: NodeJS.Signals | null, spawnError?: Error): void {
    if (this.exitInfo !== undefined) return;
    const info: ExitInfo = { code, signal, expected: this.stopping, spawnError, stderrTail: this.stderrTail };
    this.exitInfo = info;
    const reason = `the Kgent daemon exited (${describeExit(info)})`;
    for (const source of this.openPrompts) source.cancel();
    for (const run of this.runs.values()) run.finish({ kind: "lost", reason });
    this.unclaimed.clear();
    this.conn.dispose(); // rejects pending requests
    this.resolveExit(info);
    try {
      this.hooks.onExit?.(info);
    } catch (e) {
      this.hooks.log?.(`[kgent-client] onExit failed: ${String(e)}\n`);
    }
  }
}

/**
 * Only a selected option the daemon offered is passed on; anything else is a reject (`cancelled`). The person's own
 * text (`newText`, "approve with changes") goes along only with an allow option on a call that proposed a text.
 */
export function sanitizeAnswer(params: P.PermissionParams, answer: P.PermissionResult | undefined): P.PermissionResult {
  const option =
    answer !== undefined && answer.outcome === "selected"
      ? params.options.find((o) => o.optionId === answer.optionId)
      : undefined;
  if (answer === undefined || answer.outcome !== "selected" || option === undefined) return { outcome: "cancelled" };
  const newText = (answer as P.PermissionSelected & { newText?: unknown }).newText;
  const allow = option.kind === "allow_once" || option.kind === "allow_always";
  if (typeof newText === "string" && allow && typeof params.toolCall.newText === "string") {
    const withText: P.PermissionSelected & { newText: string } = {
      outcome: "selected",
      optionId: option.optionId,
      newText,
    };
    return withText;
  }
  return { outcome: "selected", optionId: option.optionId };
}

export function describeExit(info: ExitInfo | undefined): string {
  if (info === undefined) return "still running";
  if (info.spawnError !== undefined) return info.spawnError.message;
  if (info.signal !== null) return `killed by ${info.signal}`;
  return `exit status ${info.code ?? "unknown"}`;
}

/**
 * Why the daemon did not start, as one message naming the command, the exit status and the daemon's own last words.
 * It reads after "could not start the daemon: " (callers add that prefix, so it is not repeated here).
 */
export function describeStartFailure(cmd: DaemonCommand, info: ExitInfo): string {
  const line = [cmd.command, ...cmd.args].join(" ");
  const err = info.spawnError as NodeJS.ErrnoException | undefined;
  if (err?.code === "ENOENT") {
    return `'${cmd.command}' was not found (command: ${line}). Install Kgent or set kgent.serverCommand.`;
  }
  if (err !== undefined) return `${err.message} (command: ${line}).`;
  const said = lastWords(info.stderrTail ?? "");
  const words = said === "" ? " It wrote nothing to stderr." : ` It said: ${said}`;
  const hint = /\bserve\b/.test(line) ? "" : " The command must start the daemon (`kgent serve --stdio`).";
  return `'${line}' exited before answering initialize (${describeExit(info)}).${words}${hint}`;
}

/** The last non-empty lines of a process's stderr, joined on one line (at most ~600 characters). */
function lastWords(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "");
  let out = "";
  for (let i = lines.length - 1; i >= 0; i--) {
    const next = out === "" ? lines[i] : `${lines[i]} ⏎ ${out}`;
    if (next.length > 600) break;
    out = next;
  }
  if (out === "" && lines.length > 0) out = `…${lines[lines.length - 1].slice(-600)}`;
  return out;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function errorOf(e: unknown): KgentError {
  return toKgentError(e);
}
