// Generated from protocol.schema.json by `python -m kgent.service.wire` (from the daemon's wire models): do not edit.
// The hand-written part of the protocol (message types, method names, helpers) is protocol.ts.
//
// Optional fields may be absent or null. Enumerations the daemon sends are open: a field typed by one also
// takes strings this version does not know (protocol.md, Versioning), hence `Kind | (string & {})`.

/** ACP's form of the answer, the outcome nested one level deeper. */
export interface AcpPermissionResult {
  outcome: PermissionSelected | PermissionCancelled;
}

export interface AddRuleResult {
  rule: RuleInfo;
}

/** `agent/event`: one event of one run. */
export interface AgentEventParams {
  runId: string;
  sessionId: string;
  /** Present on every event of a sub-agent's run: the run that started it. */
  parentRunId?: string | null;
  /** 0, 1, 2, … per run, without gaps. */
  seq: number;
  event: KnownEvent;
}

/** Keep (accept) and revert (reject) hunks of a session. */
export interface ApplyReviewParams {
  sessionId: string;
  /** Hunk ids to keep. */
  accept?: string[];
  /** Hunk ids to revert. */
  reject?: string[];
}

export interface ApplyReviewResult {
  /** One per hunk id given: accepts first, then rejects. */
  results: HunkResult[];
  /**
   * How the model learns of the rejections: steered into the session's live run, or put before the session's next
   * prompt; null when nothing was rejected.
   */
  told: "run" | "next_prompt" | (string & {}) | null;
}

/** One model turn, as stored in the session. */
export interface AssistantMessage {
  role: "assistant";
  text: string;
  stopReason: StopReason | (string & {});
  thinking?: string | null;
  toolCalls?: ToolCallRef[] | null;
  usage?: Tokens | null;
  error?: string | null;
  errorCode?: string | null;
  provider?: string | null;
  model?: string | null;
  [key: string]: unknown;
}

/** One background command of a session, as the `background` event describes it. */
export interface BackgroundCommand {
  id: string;
  command: string;
  state: "running" | "exited" | "stopped" | "failed" | (string & {});
  exitCode?: number | null;
  toolCallId: string;
  startedRunId: string;
  outputBytes: number;
  sandbox?: string | null;
  /** When it started (epoch seconds). */
  started: number;
}

/**
 * A background command of the session (bash with `background: true`) started or ended; `agent/background` lists them
 * and stops one.
 */
export interface BackgroundEvent {
  type: "background";
  /** The command's id in its session (bg1, bg2 …): what the model and agent/background use. */
  id: string;
  command: string;
  /**
   * running; exited (its program ended, exitCode says how); stopped (bash_stop, agent/background, the run's end);
   * failed (killed by a signal).
   */
  state: "running" | "exited" | "stopped" | "failed" | (string & {});
  exitCode?: number | null;
  /** The bash call that started it. */
  toolCallId: string;
  /** The run whose call started it. */
  startedRunId: string;
  /** Bytes of output so far. */
  outputBytes: number;
  /** What it runs with, when it runs inside the sandbox. */
  sandbox?: string | null;
}

/** `agent/background`: list a session's background commands; `stop` one (its id) or "all" first. */
export interface BackgroundParams {
  sessionId: string;
  /** A command id to stop first, or "all". */
  stop?: string | null;
}

export interface BackgroundResult {
  /** Oldest first; ended ones too while the session's run lasts (or a cancel kept some running). */
  commands: BackgroundCommand[];
}

export interface CancelParams {
  runId: string;
  /** Also stop the session's background commands (default: they go on, listed by agent/background). */
  stopBackground?: boolean | null;
}

/** `$/cancelRequest`, both ways: the id of a request that is no longer wanted. */
export interface CancelRequestParams {
  id: number | string;
}

export interface CancelResult {
  /** False if the run had already ended. */
  cancelled: boolean;
}

export interface ClientCapabilities {
  fs?: FsCapabilities | null;
  /** It answers agent/diagnostics with its language servers' findings (protocol.md § Diagnostics). */
  diagnostics?: boolean;
}

/** Who the client is (for logs). */
export interface ClientInfo {
  name?: string;
  /** Not checked. */
  version?: unknown;
}

export interface CommandInfo {
  /** Typed as `/name args` at the start of an agent/run prompt. */
  name: string;
  /** The template's `description` front matter (else its first line). */
  description: string;
  /** The template's `argument-hint` front matter: shown after the name. */
  argumentHint?: string | null;
  source: "builtin" | "project" | "user" | "extension" | (string & {});
  /** The template file (templates only). */
  path?: string | null;
  /**
   * True: another command of this name wins (a built-in over a template, a project template over a user one); listed
   * so the user sees why this one does not run.
   */
  shadowed?: boolean | null;
  /**
   * What a client does with it: `prompt` — send the typed text as agent/run's prompt (the daemon expands it); `answer`
   * — send it to agent/command and show the answer; `newSession` — start the conversation afresh (the next prompt
   * without a sessionId); `rewind` — open the client's rewind flow (agent/rewind).
   */
  action: "prompt" | "answer" | "newSession" | "rewind" | (string & {});
}

export interface CommandParams {
  /** The command as typed: `/name args`. */
  text: string;
  /** The conversation's folder (default: the session's); one of the two is needed. */
  workspace?: string | null;
  /** The conversation's session, if it has one. */
  sessionId?: string | null;
}

export interface CommandResult {
  /** The command's name. */
  command: string;
  /**
   * What a client does with it: `prompt` — send the typed text as agent/run's prompt (the daemon expands it); `answer`
   * — send it to agent/command and show the answer; `newSession` — start the conversation afresh (the next prompt
   * without a sessionId); `rewind` — open the client's rewind flow (agent/rewind).
   */
  action: "prompt" | "answer" | "newSession" | "rewind" | (string & {});
  /** What to show the person, as it is (empty for `prompt` and `rewind`). */
  text: string;
  /**
   * `/mode`: the mode of the session's next runs (also when only shown); a client shows it in its mode picker and
   * sends it with its next runs.
   */
  mode?: string | null;
  /** `/model`: the model of the session's next runs (also when only shown), as `mode`. */
  model?: string | null;
}

export interface CommandsParams {
  /** An absolute path (of the daemon's machine). */
  workspace: string;
}

export interface CommandsResult {
  /** Built-ins first, then the project's, then the user's templates. */
  commands: CommandInfo[];
  /**
   * What a slash menu shows, in order: the commands that run (no shadowed template), each with the text to show. A
   * front lays it out and filters it by what is typed; it derives nothing.
   */
  menu: MenuEntry[];
}

export interface CompactParams {
  sessionId: string;
  /** What the summary should focus on. */
  instructions?: string | null;
  provider?: string | null;
  model?: string | null;
}

export interface CompactResult {
  /** False (and entryId null) when there was too little history. */
  compacted: boolean;
  entryId: string | null;
  tokensBefore: number | null;
  tokensAfter: number | null;
}

export interface CompactionEvent {
  type: "compaction";
  status: "started" | "completed" | "failed" | (string & {});
  trigger: "automatic" | "manual" | "overflow" | (string & {});
  entryId?: string | null;
  tokensBefore?: number | null;
  tokensAfter?: number | null;
  error?: string | null;
}

export type ContentBlock = TextBlock | ResourceLinkBlock | ResourceBlock | ImageBlock;

export interface ContextUse {
  /** What the context held after the call: its whole prompt and its answer. */
  tokens: number;
  /** The model's context window (KGENT_CONTEXT_WINDOW or the built-in table). */
  window: number;
  /** tokens / window as a whole percent (half up): the gauge's figure. */
  percent: number;
  /** The gauge's text: "context 24k of 200k tokens (12%)". */
  text: string;
}

export interface Cost {
  /** An estimate, from the model's price. */
  amount: number;
  /** "USD". */
  currency: string;
}

export interface DeleteSessionParams {
  sessionId: string;
}

/** One finding of a language server (protocol.md § Diagnostics). */
export interface Diagnostic {
  /** Workspace-relative when inside the workspace, else absolute. */
  path: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  severity: "error" | "warning" | "information" | "hint" | (string & {});
  message: string;
  /** Who said it, e.g. `Ruff`, `Pylance`. */
  source?: string | null;
  /** The rule or error code, e.g. `F821`. */
  code?: string | null;
}

/** `agent/diagnostics`: the file's diagnostics in the editor, once its language server has settled. */
export interface DiagnosticsParams {
  /** The run that needs the file; absent for agent/applyReview's reads and writes. */
  runId?: string | null;
  sessionId: string;
  /** Absolute path (of the daemon's machine). */
  path: string;
}

export interface DiagnosticsResult {
  /**
   * The file's diagnostics as the editor has them now; null when nothing in the editor speaks for this file (then the
   * run reports none).
   */
  diagnostics: EditorDiagnostic[] | null;
}

/** One finding as the editor reports it (its file is the request's). */
export interface EditorDiagnostic {
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  severity: "error" | "warning" | "information" | "hint" | (string & {});
  message: string;
  source?: string | null;
  code?: string | number | null;
}

/** `{}`. */
export type EmptyResult = Record<string, never>;

export interface ExportParams {
  sessionId: string;
  /** `md` (Markdown), `html` (one page, no script) or `json`. */
  format?: "md" | "html" | "json" | (string & {});
}

export interface ExportResult {
  /** The transcript: the active branch, every string redacted. */
  text: string;
  /** `text/markdown`, `text/html` or `application/json`. */
  mimeType: string;
  /** A name to save it under: `kgent-<sessionId>.<format>`. */
  filename: string;
}

export interface ExtensionInfo {
  name: string;
  source: "entry point" | "user" | "project" | (string & {});
  /** What was loaded: `module:attr`, a module or a file. */
  target: string;
  status: "loaded" | "failed" | "untrusted" | "disabled" | (string & {});
  version: string;
  /** `tool:NAME`, `provider:NAME`, `entry_kind:NAME`, `hook:NAME`. */
  registered: string[];
  /** Why it failed to load (names the extension). */
  error?: string | null;
}

export interface ExtensionsInfo {
  /** The extension API's version (kgent.ext.API_VERSION). */
  apiVersion: string;
  /** The daemon's working directory as a project; null: none. */
  project: ProjectTrust | null;
  extensions: ExtensionInfo[];
  mcpServers: McpServerInfo[];
  /** Config files that could not be read. */
  errors: string[];
}

export interface ForkParams {
  sessionId: string;
  entryId: string;
}

export interface ForkResult {
  sessionId: string;
  leafId: string;
}

/** The files a client serves from its open buffers (named after ACP's `fs/read_text_file` / `fs/write_text_file`). */
export interface FsCapabilities {
  /** It answers agent/readTextFile. */
  readTextFile?: boolean;
  /** It answers agent/writeTextFile. */
  writeTextFile?: boolean;
  /** It answers agent/saveFiles. */
  saveFiles?: boolean;
}

export type HunkOutcome = "accepted" | "rejected" | "conflict" | "not_found" | "already_rejected";

export interface HunkResult {
  hunkId: string;
  /**
   * accepted: kept. rejected: reverted. conflict: its lines changed since the run, nothing touched (still pending).
   * not_found: no such hunk in the session. already_rejected: it was reverted before.
   */
  outcome: HunkOutcome | (string & {});
  path?: string | null;
  message?: string | null;
}

export type HunkStatus = "pending" | "accepted" | "rejected";

/** An image (ACP's ImageContent): PNG, JPEG, WebP or GIF, told by its bytes; at most 5 MiB decoded. */
export interface ImageBlock {
  type: "image";
  /** The image's bytes, base64 (standard alphabet, padded); at most 5 MiB once decoded. */
  data: string;
  /** image/png, image/jpeg, image/webp or image/gif; the bytes decide the type the model is told. */
  mimeType: string;
  /** Where the image came from (a file name or URI), kept as its name; the daemon never reads it. */
  uri?: string | null;
}

/** An image a user message carries, as sessions record it (the bytes are a blob beside the session file). */
export interface ImageRef {
  mimeType: string;
  sha256: string;
  size: number;
  name?: string | null;
}

export interface InitializeParams {
  /** The latest protocol version the client speaks. */
  protocolVersion: number;
  clientInfo?: ClientInfo | null;
  /** What the client offers (fs: host-owned files); {} for nothing. */
  capabilities?: ClientCapabilities | null;
  settings?: InitializeSettings | null;
}

export interface InitializeResult {
  serverInfo: ServerInfo;
  /** The version spoken on this connection. */
  protocolVersion: number;
  capabilities: ServerCapabilities;
}

/** Connection-wide overrides of the environment; they apply to runs started afterwards. */
export interface InitializeSettings {
  provider?: string | null;
  model?: string | null;
  baseUrl?: string | null;
  apiKey?: string | null;
  mode?: string | null;
  /** Seconds an approval may take before it counts as a reject; null: no limit. */
  approvalTimeout?: number | null;
  /** Model turns a run may take (runs started afterwards); default: KGENT_MAX_TURNS. */
  maxTurns?: number | null;
  /**
   * Seconds the client may take to answer a file request (agent/readTextFile, …) before the daemon uses the disk;
   * default KGENT_FS_TIMEOUT or 10.
   */
  fsTimeout?: number | null;
  /**
   * Whether the project's own extensions and MCP servers (.kgent/config.toml, .mcp.json) may run; null: the user's
   * trust file decides (`kgent extensions --trust`).
   */
  trustProjectExtensions?: boolean | null;
}

/**
 * Instruction files entered the context: when the run opened, or when a tool call touched their directory; `skipped`
 * names the instruction files and skills the files gate left out (a link to a secret or outside).
 */
export interface InstructionsEvent {
  type: "instructions";
  files: LoadedFile[];
  entryId?: string | null;
  skipped?: SkippedFile[];
}

export type KnownEvent =
  | RunStartEvent
  | UserMessageEvent
  | MessageDeltaEvent
  | MessageEndEvent
  | ToolCallEvent
  | ToolUpdateEvent
  | PermissionRequestEvent
  | PermissionResolvedEvent
  | QueueUpdateEvent
  | UsageEvent
  | RetryEvent
  | CompactionEvent
  | PlanEvent
  | InstructionsEvent
  | BackgroundEvent
  | RunEndEvent;

export interface LoadedFile {
  /** Absolute path of the AGENTS.md (or CLAUDE.md). */
  path: string;
  source: "user" | "project" | "directory" | (string & {});
  change: "new" | "changed" | "removed" | (string & {});
  /** Only its first 32 KiB reached the model. */
  truncated?: boolean;
  /** Bytes on disk. */
  size?: number;
}

export interface McpServerInfo {
  name: string;
  transport: "stdio" | "http" | (string & {});
  source: "user" | "project" | (string & {});
  /** The config file that names the server. */
  file: string;
  /** The command line or the URL. */
  target: string;
  status: "not started" | "running" | "stopped" | "failed" | "untrusted" | (string & {});
  /** The server's tools once it has started. */
  tools?: string[] | null;
  error?: string | null;
}

/** One line of the slash menu, to show as it is: `/name`, the hint, the description. */
export interface MenuEntry {
  /** Typed as `/name args`. */
  name: string;
  /** For people (no protocol names); a template's ends with where it comes from: `(project)`, `(user)`. */
  description: string;
  /** Shown after the name. */
  argumentHint?: string | null;
  /**
   * What a client does with it: `prompt` — send the typed text as agent/run's prompt (the daemon expands it); `answer`
   * — send it to agent/command and show the answer; `newSession` — start the conversation afresh (the next prompt
   * without a sessionId); `rewind` — open the client's rewind flow (agent/rewind).
   */
  action: "prompt" | "answer" | "newSession" | "rewind" | (string & {});
}

export interface MessageDeltaEvent {
  type: "message_delta";
  kind: "text" | "thinking" | (string & {});
  /** The new text only (never cumulative). */
  delta: string;
}

export interface MessageEndEvent {
  type: "message_end";
  message: AssistantMessage;
  /** Its session entry (absent if the turn was not stored). */
  entryId?: string | null;
}

export interface PermissionCancelled {
  outcome: "cancelled";
}

export type PermissionMode = "plan" | "ask" | "auto" | "full" | "risk_based";

export interface PermissionOption {
  /**
   * allow_once, allow_always, allow_always_project, reject_once, reject_always or reject_always_project; a front
   * renders whatever options arrive.
   */
  optionId: string;
  kind: PermissionOptionKind | (string & {});
  /** A label for the button; an 'always' option says its rule and scope in words. */
  name: string;
  /** 'Always' options: how long the answer lasts. */
  scope?: "session" | "project" | "user" | (string & {}) | null;
  /** 'Always' options: the rule(s) the answer creates. */
  rules?: RuleItem[] | null;
}

export type PermissionOptionKind = "allow_once" | "allow_always" | "reject_once" | "reject_always";

/** `agent/permission`: decide one tool call (the permission_request event's fields, plus the run asking). */
export interface PermissionParams {
  /** Unique per connection; also the agent/permission request's id. */
  requestId: string;
  toolCall: PermissionToolCall;
  risk: "low" | "medium" | "high" | (string & {});
  /** Why the daemon asks (one sentence). */
  reason: string;
  operation: "read" | "write" | "shell" | "network" | "unknown" | (string & {});
  scope: "workspace" | "outside" | (string & {});
  options: PermissionOption[];
  /** A sub-agent's prompt: its name (the `task` call's description). */
  agent?: string | null;
  /** Why no 'always' option is offered: no rule can describe this call (one sentence, for the card). */
  noRule?: string | null;
  runId: string;
  sessionId: string;
  /** A sub-agent's prompt: the run that started it. */
  parentRunId?: string | null;
}

export interface PermissionRequestEvent {
  /** Unique per connection; also the agent/permission request's id. */
  requestId: string;
  toolCall: PermissionToolCall;
  risk: "low" | "medium" | "high" | (string & {});
  /** Why the daemon asks (one sentence). */
  reason: string;
  operation: "read" | "write" | "shell" | "network" | "unknown" | (string & {});
  scope: "workspace" | "outside" | (string & {});
  options: PermissionOption[];
  /** A sub-agent's prompt: its name (the `task` call's description). */
  agent?: string | null;
  /** Why no 'always' option is offered: no rule can describe this call (one sentence, for the card). */
  noRule?: string | null;
  type: "permission_request";
}

export interface PermissionResolvedEvent {
  type: "permission_resolved";
  /** Absent (null) when no prompt was shown. */
  requestId?: string | null;
  toolCallId: string;
  decision: PermissionOptionKind | (string & {});
  approved: boolean;
  source: "host" | "policy" | "session_rule" | "project_rule" | "user_rule" | "timeout" | (string & {});
  reason: string;
  /**
   * The decision in a person's words, as every front shows it: 'allowed once', 'always allowed in this project',
   * 'rejected by the plan mode', 'allowed by the project rule `bash(grep *)`', 'rejected: no answer in time'.
   */
  label: string;
  /**
   * true: the host approved the user's own version of the edit (answer's newText), which was written instead of the
   * proposal. Absent otherwise.
   */
  edited?: boolean | null;
}

export type PermissionResult = PermissionSelected | PermissionCancelled | AcpPermissionResult;

export interface PermissionSelected {
  outcome: "selected";
  /** The optionId of an offered option. */
  optionId: string;
  /**
   * Approve with changes: the whole file the user wants instead of the proposal — only with an allow option, on a
   * request whose toolCall has newText (edit and write).
   */
  newText?: string | null;
}

/** The call to decide, in a form a person can judge. */
export interface PermissionToolCall {
  toolCallId: string;
  name: string;
  kind: ToolKind | (string & {});
  title: string;
  args: Record<string, unknown>;
  /** The file it touches (workspace-relative or absolute). */
  path?: string | null;
  /** The shell command. */
  command?: string | null;
  /** Edits: a unified diff of the proposed change. */
  diff?: string | null;
  /** Edits: the file before (null for a new file). */
  oldText?: string | null;
  /** Edits: the whole file after the change. */
  newText?: string | null;
}

export interface PlanEntry {
  content: string;
  status: "pending" | "in_progress" | "completed" | (string & {});
  priority: "high" | "medium" | "low" | (string & {});
}

/** The agent's plan (`todo_write`): the whole list, replacing the previous one. */
export interface PlanEvent {
  type: "plan";
  entries: PlanEntry[];
}

export interface ProjectTrust {
  root: string;
  trusted: boolean;
  /** Whether the project's own files name code to run. */
  needsTrust: boolean;
}

export interface QueueUpdateEvent {
  type: "queue_update";
  steering: string[];
  followUp: string[];
}

/** `agent/readTextFile`: the text of a file the client has open (unsaved edits included). */
export interface ReadTextFileParams {
  /** The run that needs the file; absent for agent/applyReview's reads and writes. */
  runId?: string | null;
  sessionId: string;
  /** Absolute path (of the daemon's machine). */
  path: string;
}

export interface ReadTextFileResult {
  /** The buffer's full text; null when the client does not have the file open (the daemon then reads the disk). */
  content: string | null;
}

export interface RemoveRuleResult {
  /** False if there was no such rule. */
  removed: boolean;
}

export interface RenameSessionParams {
  sessionId: string;
  /** The session's title; '' goes back to the derived one. */
  title: string;
}

export interface ResourceBlock {
  type: "resource";
  resource: TextResource;
}

export interface ResourceLinkBlock {
  type: "resource_link";
  uri: string;
  name: string;
  title?: string | null;
  description?: string | null;
  mimeType?: string | null;
}

export interface RetryEvent {
  type: "retry";
  attempt: number;
  maxAttempts: number;
  delaySeconds: number;
  error: string;
}

export interface ReviewFile {
  /** Workspace-relative. */
  path: string;
  absolutePath: string;
  /** The run created the file. */
  created: boolean;
  /** The run deleted the file. */
  deleted: boolean;
  hunks: ReviewHunk[];
}

/** One contiguous change. Line numbers are 1-based; an empty range (count 0) sits just before its start line. */
export interface ReviewHunk {
  /** Unique in the session: '<runId>.<n>'. */
  id: string;
  status: HunkStatus | (string & {});
  /** First line of the replaced text in the file before the run. */
  oldStart: number;
  oldCount: number;
  /** First line of the new text in the file as the run left it. */
  newStart: number;
  newCount: number;
  /**
   * Where the new text is in the file now (1-based; the editor's buffer when the client serves it), which differs from
   * newStart once lines above changed; null when the hunk is rejected or its lines (or the unchanged lines around
   * them) changed since — rejecting it would be a conflict.
   */
  currentStart: number | null;
  /** The lines the run replaced (with their line endings). */
  oldText: string;
  /** The lines the run put there. */
  newText: string;
}

/** List the hunks of a session's runs (all of them, or one run's). */
export interface ReviewParams {
  /** Required unless runId names a run this daemon process started. */
  sessionId?: string | null;
  /** Only this run's hunks. */
  runId?: string | null;
}

export interface ReviewResult {
  sessionId: string;
  workspace: string;
  /** In the order the runs ended; runs that changed nothing are absent. */
  runs: ReviewRun[];
}

export interface ReviewRun {
  runId: string;
  files: ReviewFile[];
}

export interface RewindFile {
  /** Workspace-relative. */
  path: string;
  /**
   * restored: back to its text at the checkpoint (created files removed; on dryRun: would be). conflict: changed since
   * the agent left it (by the user, an editor, another branch): left as it is. unchanged: already as it was.
   * unrestorable: its earlier content was not kept (binary, too large).
   */
  outcome: RewindOutcome | (string & {});
  reason?: string | null;
}

export type RewindOutcome = "restored" | "conflict" | "unchanged" | "unrestorable";

/** Restore the files the agent changed since a user message and fork the conversation just before it. */
export interface RewindParams {
  sessionId: string;
  /** A user message on the session's active branch: the checkpoint. */
  entryId: string;
  /** Only say what would happen: nothing written, no fork. */
  dryRun?: boolean;
}

export interface RewindResult {
  sessionId: string;
  /** Where the new branch continues: the entry before the checkpoint message (null: the root). */
  leafId: string | null;
  /** False on dryRun: the session's leaf did not move. */
  forked: boolean;
  /** The checkpoint message's text, for the client to offer again. */
  prompt: string;
  /** Every file the runs after the checkpoint changed, by path. */
  files: RewindFile[];
  /**
   * What cannot be restored and is not a file: outside a git work tree, each run's shell commands, whose effects are
   * unknown.
   */
  notes: string[];
}

export interface RuleFilesInfo {
  /** The project's rule file (`<workspace>/.kgent/config.toml`). */
  project: string;
  /** The user's rule file (`<user config dir>/config.toml`). */
  user: string;
  /**
   * The user's own rule file for this project (`<user config dir>/projects/<name>-<hash>.toml`): where project rules
   * are written while the project is not trusted; its rules count either way.
   */
  personal: string;
}

export interface RuleInfo {
  /** In the rule syntax, e.g. `bash(npm test *)`. */
  rule: string;
  decision: "allow" | "deny" | (string & {});
  scope: "session" | "project" | "user" | (string & {});
  /** Scope `session`: the session it belongs to. */
  sessionId?: string | null;
  /** The rule in words. */
  text: string;
  /** Scopes `project` and `user`: the file it is in. */
  file?: string | null;
}

/** A rule an 'always' option creates. */
export interface RuleItem {
  /** The rule in the rule syntax, e.g. `bash(npm test *)` (protocol.md, Rules). */
  rule: string;
  /** The same in words, e.g. allow `npm test` with any arguments in this project. */
  text: string;
}

export interface RuleParams {
  /** An absolute path (of the daemon's machine). */
  workspace: string;
  /** In the rule syntax, e.g. `bash(npm test *)` (protocol.md, Rules). */
  rule: string;
  decision: "allow" | "deny" | (string & {});
  scope: "session" | "project" | "user" | (string & {});
  /** Scope `session`: the session (required). */
  sessionId?: string | null;
}

export interface RulesParams {
  /** An absolute path (of the daemon's machine). */
  workspace: string;
}

export interface RulesResult {
  /** Deny rules first, then allows; the user's, the project's, the sessions'. */
  rules: RuleInfo[];
  files: RuleFilesInfo;
  /**
   * False: the allow rules in the project's own file are ignored (its denies still count), and new project rules go to
   * the user's own file for it (`files.personal`).
   */
  projectTrusted: boolean;
  /** Rules in the files that could not be read (file and rule), left out. */
  problems?: string[] | null;
}

/** The run's terminal event: exactly one, always last. */
export interface RunEndEvent {
  type: "run_end";
  status: RunStatus | (string & {});
  stopReason: "end" | "max_tokens" | "cancelled" | "error" | "aborted" | "max_turns" | "cost_limit" | (string & {});
  /** The final assistant text. */
  text: string;
  error?: RunError | null;
  /** Workspace-relative paths the run created, changed or deleted. */
  changedPaths: string[];
  /** A unified diff of the run's workspace changes; empty if none. */
  patch: string;
  usage: Usage;
  sessionId: string;
  turns: number;
}

export interface RunError {
  code: string;
  message: string;
}

export interface RunIdParams {
  runId: string;
}

/** Start a run (a new session, or a turn of an existing one). */
export interface RunParams {
  prompt: string | ContentBlock[];
  /** Continue this session; absent: a new one. */
  sessionId?: string | null;
  /** With sessionId: continue from this entry instead of the active leaf. */
  parentEntryId?: string | null;
  /** Where tools run; required unless sessionId is given. */
  workspace?: string | null;
  mode?: string | null;
  provider?: string | null;
  model?: string | null;
  /** US dollars this run may spend (needs a priced model); default: KGENT_COST_LIMIT. */
  costLimit?: number | null;
  /** Model turns this run may take; default: settings.maxTurns, else KGENT_MAX_TURNS, else 200. */
  maxTurns?: number | null;
}

export interface RunResult {
  runId: string;
  /** The run's session (a new one when the request named none). */
  sessionId: string;
}

export interface RunStartEvent {
  type: "run_start";
  runId: string;
  sessionId: string;
  workspace: string;
  mode: string;
  provider: string;
  model: string;
  prompt: string;
  /** A sub-agent's run: the run whose `task` call started it. */
  parentRunId?: string | null;
  /** A sub-agent's run: that `task` call. */
  parentToolCallId?: string | null;
  /** A sub-agent's run: its name. */
  agent?: string | null;
}

export type RunStatus = "settled" | "cancelled" | "failed";

export interface RunTextParams {
  runId: string;
  text: string;
}

/** `agent/saveFiles`: save these buffers (the run wrote them) before a shell command reads the disk. */
export interface SaveFilesParams {
  runId?: string | null;
  sessionId: string;
  /** Absolute paths. */
  paths: string[];
}

export interface SaveFilesResult {
  /** The paths now saved; the others stay unsaved (the model is told). */
  saved: string[];
}

export interface ServerCapabilities {
  modes: (PermissionMode | (string & {}))[];
  /** What each mode lets run unasked, asks or refuses, in words for people (every front shows these). */
  modeDescriptions: Record<string, string>;
  defaultMode: string;
  providers: string[];
  defaultProvider: string;
  /** Known model ids per provider (any id the provider takes works). */
  models: Record<string, string[]>;
  defaultModel: string;
  tools: ToolInfo[];
  /** The event types this daemon may send. */
  events: string[];
  /**
   * What shell commands run in: bubblewrap (read-only commands run unasked inside it), or none (every shell command
   * asks).
   */
  sandbox: "bwrap" | "none" | (string & {});
  /** Why, for people (e.g. why there is no sandbox). */
  sandboxReason: string;
  /** The answer to agent/permission may carry newText (approve an edit or write with changes). */
  permissionNewText: boolean;
  features: ServerFeatures;
  /** What extensions and MCP servers are configured and loaded. */
  extensions: ExtensionsInfo;
}

export interface ServerFeatures {
  steer: boolean;
  followUp: boolean;
  concurrentRuns: boolean;
  sessions: SessionFeatures;
  /** The content block types a prompt may hold. */
  promptContent: string[];
  permissionOptionKinds: (PermissionOptionKind | (string & {}))[];
  /** Seconds an approval may take; null: no limit. */
  approvalTimeout: number | null;
  /** It asks a client that offers capabilities.fs for its open buffers. */
  hostFiles: boolean;
  /** It serves agent/review and agent/applyReview. */
  review: boolean;
}

export interface ServerInfo {
  name: string;
  version: string;
}

/**
 * One entry of a session's tree; its other fields depend on `type` (config, message, permission, compaction, label, …:
 * ignore the types you do not know).
 */
export interface SessionEntry {
  id: string;
  parentId: string | null;
  type: string;
  timestamp: string;
  message?: SessionMessage | null;
  [key: string]: unknown;
}

export interface SessionFeatures {
  /** False: sessions live only as long as the process. */
  persistent: boolean;
  fork: boolean;
  compact: boolean;
}

/** An image of a user message: its blob's sha256 (the bytes stay beside the session file), type and size. */
export interface SessionImage {
  mimeType: string;
  sha256: string;
  size: number;
  name?: string | null;
  [key: string]: unknown;
}

export interface SessionInfo {
  sessionId: string;
  workspace: string;
  /** ISO 8601, UTC. */
  created: string;
  /** ISO 8601, UTC. */
  updated: string;
  /** The first line of the first prompt. */
  title: string;
  entryCount: number;
  leafId: string | null;
  liveRunId: string | null;
}

export type SessionMessage = UserMessage | AssistantMessage | ToolResultMessage | SummaryMessage;

export interface SessionParams {
  sessionId: string;
  /** Only the entries on the active branch. */
  branchOnly?: boolean | null;
}

export interface SessionResult {
  sessionId: string;
  workspace: string;
  title: string;
  created: string;
  /** The active leaf; null for an empty session. */
  leafId: string | null;
  /** Entry ids from the root to leafId. */
  branch: string[];
  /** In append order; the tree is given by parentId. */
  entries: SessionEntry[];
  labels: Record<string, string>;
  /** What loading had to repair (e.g. a torn last line). */
  warnings: string[];
  liveRunId: string | null;
  /** Totals over every model turn stored in the session, on every branch. */
  usage: Usage;
  /** The instruction files the active branch's context holds (general → specific). */
  instructions?: LoadedFile[];
  /** The skills last listed to the model. */
  skills?: SkillInfo[];
}

export interface SessionsParams {
  /** An absolute path (of the daemon's machine). */
  workspace: string;
  /**
   * Only the sessions whose title, id or conversation (the text of its prompts and answers) holds every word of it,
   * case-insensitively; absent or blank: all of them.
   */
  query?: string | null;
}

export interface SessionsResult {
  /** Most recently updated first. */
  sessions: SessionInfo[];
}

export interface SkillInfo {
  name: string;
  description: string;
  /** The skill's SKILL.md, absolute. */
  path: string;
}

/** An instruction file or skill the files gate refused: never read, never sent to the model. */
export interface SkippedFile {
  path: string;
  reason: string;
}

export type StopReason = "end" | "tool_use" | "max_tokens" | "error" | "aborted";

export interface SummaryMessage {
  role: "summary";
  text: string;
  [key: string]: unknown;
}

export interface TextBlock {
  type: "text";
  text: string;
}

export interface TextResource {
  uri: string;
  text: string;
  mimeType?: string | null;
}

/** A model turn's tokens as its session message stores them. */
export interface Tokens {
  /** Input billed at the plain input rate (not read from or written to the cache). */
  inputTokens: number;
  /** Output, thinking included. */
  outputTokens: number;
  /** Input read from the provider's prompt cache. */
  cacheReadTokens: number;
  /** Input written to the prompt cache. */
  cacheWriteTokens: number;
  /** Absent when the model has no known price. */
  cost?: Cost | null;
}

export interface ToolCallEvent {
  type: "tool_call";
  toolCallId: string;
  name: string;
  kind: ToolKind | (string & {});
  title: string;
  args: Record<string, unknown>;
  path?: string | null;
  command?: string | null;
}

export interface ToolCallRef {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  argumentsError?: string | null;
  [key: string]: unknown;
}

export interface ToolInfo {
  name: string;
  kind: ToolKind | (string & {});
  readOnly: boolean;
}

export type ToolKind = "read" | "edit" | "delete" | "move" | "search" | "execute" | "think" | "fetch" | "other";

export interface ToolOutputParams {
  sessionId: string;
  /** The call's id (`toolCallId` of its events and result). */
  toolCallId: string;
}

export interface ToolOutputResult {
  /**
   * All a tool call printed, as saved with the session (redacted as the session is): a command's whole output, not the
   * tail the model was shown.
   */
  text: string;
  /**
   * Not all of it: past 4 MiB only the first and last 2 MiB were kept (a line in the text says how much was dropped),
   * or the saved output is gone and `text` is what the model was shown.
   */
  truncated: boolean;
}

export interface ToolResultMessage {
  role: "tool";
  toolCallId: string;
  name: string;
  content: string;
  isError: boolean;
  details?: Record<string, unknown> | null;
  [key: string]: unknown;
}

export type ToolStatus = "pending" | "in_progress" | "completed" | "failed";

export interface ToolUpdateEvent {
  type: "tool_update";
  toolCallId: string;
  status: ToolStatus | (string & {});
  /** in_progress: a snapshot of the output so far; completed/failed: the result text. */
  output?: string | null;
  diff?: string | null;
  isError: boolean;
  /** Structured extras the tool reports (informative). */
  details: Record<string, unknown>;
  /**
   * After an edit or write (or a command that changed a file the run has diagnostics of): the diagnostics it added
   * (errors first, at most what the result lists); [] when it added none; absent when no source of diagnostics was
   * asked.
   */
  diagnostics?: Diagnostic[] | null;
}

/** Tokens, their estimated cost when the model has a known price, and the text to show (protocol.md § usage). */
export interface Usage {
  /** Input billed at the plain input rate (not read from or written to the cache). */
  inputTokens: number;
  /** Output, thinking included. */
  outputTokens: number;
  /** Input read from the provider's prompt cache. */
  cacheReadTokens: number;
  /** Input written to the prompt cache. */
  cacheWriteTokens: number;
  /** Absent when the model has no known price. */
  cost?: Cost | null;
  /**
   * What a front shows of it: "1200 in (900 cached) / 40 out tokens · ≈ $0.0012" (all input, its cached share, the
   * output; the cost only with a price).
   */
  text: string;
}

export interface UsageEvent {
  type: "usage";
  turn: Usage;
  total: Usage;
  /** After a model call; absent for a sub-agent's run counted as one turn. */
  context?: ContextUse | null;
}

export interface UserMessage {
  role: "user";
  text: string;
  images?: SessionImage[] | null;
  [key: string]: unknown;
}

export interface UserMessageEvent {
  type: "user_message";
  text: string;
  source: "prompt" | "steer" | "follow_up" | (string & {});
  /** Its session entry: fork there (`agent/fork` to its parent) to edit and resend it. */
  entryId?: string | null;
  /** The images attached to it (absent: none); their bytes stay in the session. */
  images?: ImageRef[] | null;
}

/** `agent/writeTextFile`: put this full text into the file's open buffer, without saving it. */
export interface WriteTextFileParams {
  /** The run that needs the file; absent for agent/applyReview's reads and writes. */
  runId?: string | null;
  sessionId: string;
  /** Absolute path (of the daemon's machine). */
  path: string;
  content: string;
}

export interface WriteTextFileResult {
  /**
   * True: the buffer holds the content now. False: the client does not have the file open (the daemon then writes the
   * disk).
   */
  applied: boolean;
}

/** Every method of the protocol, from the method table (kgent.service.wire.methods): who sends it, whether it
 * is answered, its params and its result (`null`: none; `undefined`: a notification has no answer). */
export interface Methods {
  "initialize": {
    direction: "client → daemon"; kind: "request";
    params: InitializeParams; result: InitializeResult;
  };
  "shutdown": {
    direction: "client → daemon"; kind: "request";
    params: null; result: null;
  };
  "exit": {
    direction: "client → daemon"; kind: "notification";
    params: null; result: undefined;
  };
  "agent/run": {
    direction: "client → daemon"; kind: "request";
    params: RunParams; result: RunResult;
  };
  "agent/cancel": {
    direction: "client → daemon"; kind: "request";
    params: CancelParams; result: CancelResult;
  };
  "agent/steer": {
    direction: "client → daemon"; kind: "request";
    params: RunTextParams; result: EmptyResult;
  };
  "agent/followUp": {
    direction: "client → daemon"; kind: "request";
    params: RunTextParams; result: EmptyResult;
  };
  "agent/background": {
    direction: "client → daemon"; kind: "request";
    params: BackgroundParams; result: BackgroundResult;
  };
  "agent/clearQueue": {
    direction: "client → daemon"; kind: "request";
    params: RunIdParams; result: EmptyResult;
  };
  "agent/sessions": {
    direction: "client → daemon"; kind: "request";
    params: SessionsParams; result: SessionsResult;
  };
  "agent/session": {
    direction: "client → daemon"; kind: "request";
    params: SessionParams; result: SessionResult;
  };
  "agent/toolOutput": {
    direction: "client → daemon"; kind: "request";
    params: ToolOutputParams; result: ToolOutputResult;
  };
  "agent/fork": {
    direction: "client → daemon"; kind: "request";
    params: ForkParams; result: ForkResult;
  };
  "agent/renameSession": {
    direction: "client → daemon"; kind: "request";
    params: RenameSessionParams; result: EmptyResult;
  };
  "agent/deleteSession": {
    direction: "client → daemon"; kind: "request";
    params: DeleteSessionParams; result: EmptyResult;
  };
  "agent/compact": {
    direction: "client → daemon"; kind: "request";
    params: CompactParams; result: CompactResult;
  };
  "agent/review": {
    direction: "client → daemon"; kind: "request";
    params: ReviewParams; result: ReviewResult;
  };
  "agent/applyReview": {
    direction: "client → daemon"; kind: "request";
    params: ApplyReviewParams; result: ApplyReviewResult;
  };
  "agent/rules": {
    direction: "client → daemon"; kind: "request";
    params: RulesParams; result: RulesResult;
  };
  "agent/addRule": {
    direction: "client → daemon"; kind: "request";
    params: RuleParams; result: AddRuleResult;
  };
  "agent/removeRule": {
    direction: "client → daemon"; kind: "request";
    params: RuleParams; result: RemoveRuleResult;
  };
  "agent/commands": {
    direction: "client → daemon"; kind: "request";
    params: CommandsParams; result: CommandsResult;
  };
  "agent/command": {
    direction: "client → daemon"; kind: "request";
    params: CommandParams; result: CommandResult;
  };
  "agent/exportSession": {
    direction: "client → daemon"; kind: "request";
    params: ExportParams; result: ExportResult;
  };
  "agent/rewind": {
    direction: "client → daemon"; kind: "request";
    params: RewindParams; result: RewindResult;
  };
  "$/cancelRequest": {
    direction: "both"; kind: "notification";
    params: CancelRequestParams; result: undefined;
  };
  "agent/event": {
    direction: "daemon → client"; kind: "notification";
    params: AgentEventParams; result: undefined;
  };
  "agent/permission": {
    direction: "daemon → client"; kind: "request";
    params: PermissionParams; result: PermissionResult;
  };
  "agent/readTextFile": {
    direction: "daemon → client"; kind: "request";
    params: ReadTextFileParams; result: ReadTextFileResult;
  };
  "agent/writeTextFile": {
    direction: "daemon → client"; kind: "request";
    params: WriteTextFileParams; result: WriteTextFileResult;
  };
  "agent/saveFiles": {
    direction: "daemon → client"; kind: "request";
    params: SaveFilesParams; result: SaveFilesResult;
  };
  "agent/diagnostics": {
    direction: "daemon → client"; kind: "request";
    params: DiagnosticsParams; result: DiagnosticsResult;
  };
}

export type MethodName = keyof Methods;

export const METHOD_NAMES: readonly MethodName[] = [
  "initialize",
  "shutdown",
  "exit",
  "agent/run",
  "agent/cancel",
  "agent/steer",
  "agent/followUp",
  "agent/background",
  "agent/clearQueue",
  "agent/sessions",
  "agent/session",
  "agent/toolOutput",
  "agent/fork",
  "agent/renameSession",
  "agent/deleteSession",
  "agent/compact",
  "agent/review",
  "agent/applyReview",
  "agent/rules",
  "agent/addRule",
  "agent/removeRule",
  "agent/commands",
  "agent/command",
  "agent/exportSession",
  "agent/rewind",
  "$/cancelRequest",
  "agent/event",
  "agent/permission",
  "agent/readTextFile",
  "agent/writeTextFile",
  "agent/saveFiles",
  "agent/diagnostics",
];
