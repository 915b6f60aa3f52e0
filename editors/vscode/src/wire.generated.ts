// Generated from protocol.schema.json by `python -m kgent.daemon.wire` (from the daemon's wire models): do not edit.
// The hand-written part of the protocol (message types, method names, helpers) is protocol.ts.
//
// Optional fields may be absent or null. Enumerations the daemon sends are open: a field typed by one also
// takes strings this version does not know (protocol.md, Versioning), hence `Kind | (string & {})`.

/** ACP's form of the answer, the outcome nested one level deeper. */
export interface AcpPermissionResult {
  outcome: PermissionSelected | PermissionCancelled;
}

/** `agent/event`: one event of one run. */
export interface AgentEventParams {
  runId: string;
  sessionId: string;
  /** 0, 1, 2, … per run, without gaps. */
  seq: number;
  event: KnownEvent;
}

/** One model turn, as stored in the session. */
export interface AssistantMessage {
  role: "assistant";
  text: string;
  stopReason: StopReason | (string & {});
  thinking?: string | null;
  toolCalls?: ToolCallRef[] | null;
  usage?: Usage | null;
  error?: string | null;
  errorCode?: string | null;
  provider?: string | null;
  model?: string | null;
  [key: string]: unknown;
}

/** `$/cancelRequest`, both ways: the id of a request that is no longer wanted. */
export interface CancelRequestParams {
  id: number | string;
}

export interface CancelResult {
  /** False if the run had already ended. */
  cancelled: boolean;
}

/** Who the client is (for logs). */
export interface ClientInfo {
  name?: string;
  /** Not checked. */
  version?: unknown;
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

export type ContentBlock = TextBlock | ResourceLinkBlock | ResourceBlock;

export interface Cost {
  /** An estimate, from the model's price. */
  amount: number;
  /** "USD". */
  currency: string;
}

/** `{}`. */
export type EmptyResult = Record<string, never>;

export interface ForkParams {
  sessionId: string;
  entryId: string;
}

export interface ForkResult {
  sessionId: string;
  leafId: string;
}

export interface InitializeParams {
  /** The latest protocol version the client speaks. */
  protocolVersion: number;
  clientInfo?: ClientInfo | null;
  /** Reserved: send {}. */
  capabilities?: Record<string, unknown> | null;
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
  | RunEndEvent;

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

export type PermissionMode = "plan" | "ask" | "auto" | "full";

export interface PermissionOption {
  optionId: string;
  kind: PermissionOptionKind | (string & {});
  /** A label for the button. */
  name: string;
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
  runId: string;
  sessionId: string;
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
  type: "permission_request";
}

export interface PermissionResolvedEvent {
  type: "permission_resolved";
  /** Absent (null) when no prompt was shown. */
  requestId?: string | null;
  toolCallId: string;
  decision: PermissionOptionKind | (string & {});
  approved: boolean;
  source: "host" | "policy" | "session_rule" | "timeout" | (string & {});
  reason: string;
}

export type PermissionResult = PermissionSelected | PermissionCancelled | AcpPermissionResult;

export interface PermissionSelected {
  outcome: "selected";
  /** The optionId of an offered option. */
  optionId: string;
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

export interface QueueUpdateEvent {
  type: "queue_update";
  steering: string[];
  followUp: string[];
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
}

export type RunStatus = "settled" | "cancelled" | "failed";

export interface RunTextParams {
  runId: string;
  text: string;
}

export interface ServerCapabilities {
  modes: (PermissionMode | (string & {}))[];
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
  features: ServerFeatures;
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
}

export interface SessionsParams {
  /** An absolute path (of the daemon's machine). */
  workspace: string;
}

export interface SessionsResult {
  /** Most recently updated first. */
  sessions: SessionInfo[];
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
}

/** Tokens, and their estimated cost when the model has a known price (protocol.md § usage). */
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
}

export interface UsageEvent {
  type: "usage";
  turn: Usage;
  total: Usage;
}

export interface UserMessage {
  role: "user";
  text: string;
  [key: string]: unknown;
}

export interface UserMessageEvent {
  type: "user_message";
  text: string;
  source: "prompt" | "steer" | "follow_up" | (string & {});
  /** Its session entry: fork there (`agent/fork` to its parent) to edit and resend it. */
  entryId?: string | null;
}
