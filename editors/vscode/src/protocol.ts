// The Kgent daemon protocol, version 1, as typed messages (mirrors protocol.md at the repository root).
//
// Editor-agnostic: no `vscode` import. Optional fields may be absent or null (the daemon omits most nulls), so every
// optional field is typed `?: T | null`. Unknown fields and event types must be ignored: every event union has an
// open member (`UnknownEvent`).

import {
  NotificationType,
  NotificationType0,
  RequestType,
  RequestType0,
} from "vscode-jsonrpc/node";

export const PROTOCOL_VERSION = 1;

// ---------------------------------------------------------------------------------------------- shared values

export type PermissionMode = "plan" | "ask" | "auto" | "full";
export type ToolKind = "read" | "edit" | "delete" | "move" | "search" | "execute" | "think" | "fetch" | "other";
export type ToolStatus = "pending" | "in_progress" | "completed" | "failed";
export type PermissionOptionKind = "allow_once" | "allow_always" | "reject_once" | "reject_always";
export type RunStatus = "settled" | "cancelled" | "failed";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface ErrorData {
  code: string;
  [key: string]: unknown;
}

// ---------------------------------------------------------------------------------------------- initialize

export interface InitializeSettings {
  provider?: string;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  mode?: string;
  approvalTimeout?: number | null;
}

export interface InitializeParams {
  protocolVersion: number;
  clientInfo?: { name: string; version?: string };
  capabilities?: Record<string, unknown>;
  settings?: InitializeSettings;
}

export interface ToolInfo {
  name: string;
  kind: ToolKind | string;
  readOnly: boolean;
}

export interface ServerCapabilities {
  modes?: string[];
  defaultMode?: string;
  providers?: string[];
  defaultProvider?: string;
  models?: Record<string, string[]>;
  defaultModel?: string;
  tools?: ToolInfo[];
  events?: string[];
  features?: {
    steer?: boolean;
    followUp?: boolean;
    concurrentRuns?: boolean;
    sessions?: { persistent?: boolean; fork?: boolean; compact?: boolean };
    promptContent?: string[];
    permissionOptionKinds?: string[];
    approvalTimeout?: number | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface InitializeResult {
  serverInfo: { name: string; version?: string };
  protocolVersion: number;
  capabilities: ServerCapabilities;
}

// ---------------------------------------------------------------------------------------------- runs

export interface TextBlock {
  type: "text";
  text: string;
}
export interface ResourceLinkBlock {
  type: "resource_link";
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}
export interface ResourceBlock {
  type: "resource";
  resource: { uri: string; text: string; mimeType?: string };
}
export type ContentBlock = TextBlock | ResourceLinkBlock | ResourceBlock;

export interface RunParams {
  prompt: string | ContentBlock[];
  workspace?: string;
  sessionId?: string;
  parentEntryId?: string;
  mode?: string;
  provider?: string;
  model?: string;
}
export interface RunResult {
  runId: string;
  sessionId: string;
}

export interface RunIdParams {
  runId: string;
}
export interface CancelResult {
  cancelled: boolean;
}
export interface RunTextParams {
  runId: string;
  text: string;
}

// ---------------------------------------------------------------------------------------------- sessions

export interface SessionInfo {
  sessionId: string;
  workspace: string;
  created: string;
  updated: string;
  title: string;
  entryCount: number;
  leafId?: string | null;
  liveRunId?: string | null;
}
export interface SessionsParams {
  workspace: string;
}
export interface SessionsResult {
  sessions: SessionInfo[];
}

export interface SessionParams {
  sessionId: string;
  branchOnly?: boolean;
}

export interface UserMessage {
  role: "user";
  text: string;
}
export interface ToolCallRef {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}
export interface AssistantMessage {
  role: "assistant";
  text: string;
  stopReason?: string;
  thinking?: string | null;
  toolCalls?: ToolCallRef[] | null;
  usage?: Usage | null;
  error?: string | null;
  errorCode?: string | null;
  provider?: string | null;
  model?: string | null;
}
export interface ToolResultMessage {
  role: "tool";
  toolCallId: string;
  name: string;
  content: string;
  isError: boolean;
  details?: Record<string, unknown> | null;
}
export interface SummaryMessage {
  role: "summary";
  text: string;
}
export type SessionMessage = UserMessage | AssistantMessage | ToolResultMessage | SummaryMessage;

export interface SessionEntry {
  id: string;
  parentId: string | null;
  type: string; // config | message | permission | compaction | label | (unknown: ignore)
  timestamp: string;
  message?: SessionMessage;
  [key: string]: unknown;
}

export interface SessionResult {
  sessionId: string;
  workspace: string;
  title: string;
  created: string;
  leafId: string | null;
  branch: string[];
  entries: SessionEntry[];
  labels: Record<string, string>;
  warnings: string[];
  liveRunId: string | null;
}

export interface ForkParams {
  sessionId: string;
  entryId: string;
}
export interface ForkResult {
  sessionId: string;
  leafId: string;
}

export interface CompactParams {
  sessionId: string;
  instructions?: string;
  provider?: string;
  model?: string;
}
export interface CompactResult {
  compacted: boolean;
  entryId: string | null;
  tokensBefore: number;
  tokensAfter: number;
}

export interface CancelRequestParams {
  id: number | string;
}

// ---------------------------------------------------------------------------------------------- permissions

export interface PermissionOption {
  optionId: string;
  kind: PermissionOptionKind | string;
  name: string;
}

export interface PermissionToolCall {
  toolCallId: string;
  name: string;
  kind: ToolKind | string;
  title: string;
  args: Record<string, unknown>;
  path?: string | null;
  command?: string | null;
  diff?: string | null;
  oldText?: string | null;
  newText?: string | null;
}

export interface PermissionFields {
  requestId: string;
  toolCall: PermissionToolCall;
  risk: "low" | "medium" | "high" | string;
  reason: string;
  operation: "read" | "write" | "shell" | "network" | "unknown" | string;
  scope: "workspace" | "outside" | string;
  options: PermissionOption[];
}

export interface PermissionParams extends PermissionFields {
  runId: string;
  sessionId: string;
}

export type PermissionResult = { outcome: "selected"; optionId: string } | { outcome: "cancelled" };

// ---------------------------------------------------------------------------------------------- events

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
export interface UserMessageEvent {
  type: "user_message";
  text: string;
  source: "prompt" | "steer" | "follow_up" | string;
}
export interface MessageDeltaEvent {
  type: "message_delta";
  kind: "text" | "thinking" | string;
  delta: string;
}
export interface MessageEndEvent {
  type: "message_end";
  message: AssistantMessage;
  entryId?: string | null;
}
export interface ToolCallEvent {
  type: "tool_call";
  toolCallId: string;
  name: string;
  kind: ToolKind | string;
  title: string;
  args: Record<string, unknown>;
  path?: string | null;
  command?: string | null;
}
export interface ToolUpdateEvent {
  type: "tool_update";
  toolCallId: string;
  status: ToolStatus | string;
  output?: string | null;
  diff?: string | null;
  isError?: boolean;
  details?: Record<string, unknown> | null;
}
export interface PermissionRequestEvent extends PermissionFields {
  type: "permission_request";
}
export interface PermissionResolvedEvent {
  type: "permission_resolved";
  requestId: string | null;
  toolCallId: string;
  decision: PermissionOptionKind | string;
  approved: boolean;
  source: "host" | "policy" | "session_rule" | "timeout" | string;
  reason?: string | null;
}
export interface QueueUpdateEvent {
  type: "queue_update";
  steering: string[];
  followUp: string[];
}
export interface UsageEvent {
  type: "usage";
  turn: Usage;
  total: Usage;
}
export interface RetryEvent {
  type: "retry";
  attempt: number;
  maxAttempts: number;
  delaySeconds: number;
  error: string;
}
export interface CompactionEvent {
  type: "compaction";
  status: "started" | "completed" | "failed" | string;
  trigger: "automatic" | "manual" | "overflow" | string;
  entryId?: string | null;
  tokensBefore?: number | null;
  tokensAfter?: number | null;
  error?: string | null;
}
export interface RunEndEvent {
  type: "run_end";
  status: RunStatus | string;
  stopReason: string;
  text: string;
  error?: { code: string; message: string } | null;
  changedPaths: string[];
  patch: string;
  usage: Usage;
  sessionId: string;
  turns: number;
}
/** An event type this client does not know: ignored (protocol.md, Versioning). */
export interface UnknownEvent {
  type: string;
  [key: string]: unknown;
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

export const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set([
  "run_start",
  "user_message",
  "message_delta",
  "message_end",
  "tool_call",
  "tool_update",
  "permission_request",
  "permission_resolved",
  "queue_update",
  "usage",
  "retry",
  "compaction",
  "run_end",
]);

/** Narrow a wire event to a known one (or undefined for an unknown type, which callers ignore). */
export function knownEvent(event: UnknownEvent | KnownEvent): KnownEvent | undefined {
  return KNOWN_EVENT_TYPES.has(event.type) ? (event as KnownEvent) : undefined;
}

export interface AgentEventParams {
  runId: string;
  sessionId: string;
  seq: number;
  event: KnownEvent | UnknownEvent;
}

// ---------------------------------------------------------------------------------------------- error codes

export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RequestCancelled: -32800,
  Config: -32001,
  NotFound: -32002,
  Conflict: -32003,
  SessionStore: -32004,
  ModelCall: -32005,
} as const;

// ---------------------------------------------------------------------------------------------- message types

export const Initialize = new RequestType<InitializeParams, InitializeResult, ErrorData>("initialize");
export const Shutdown = new RequestType0<null, ErrorData>("shutdown");
export const Exit = new NotificationType0("exit");
export const AgentRun = new RequestType<RunParams, RunResult, ErrorData>("agent/run");
export const AgentCancel = new RequestType<RunIdParams, CancelResult, ErrorData>("agent/cancel");
export const AgentSteer = new RequestType<RunTextParams, Record<string, never>, ErrorData>("agent/steer");
export const AgentFollowUp = new RequestType<RunTextParams, Record<string, never>, ErrorData>("agent/followUp");
export const AgentSessions = new RequestType<SessionsParams, SessionsResult, ErrorData>("agent/sessions");
export const AgentSession = new RequestType<SessionParams, SessionResult, ErrorData>("agent/session");
export const AgentFork = new RequestType<ForkParams, ForkResult, ErrorData>("agent/fork");
export const AgentCompact = new RequestType<CompactParams, CompactResult, ErrorData>("agent/compact");
export const AgentEvent = new NotificationType<AgentEventParams>("agent/event");
export const AgentPermission = new RequestType<PermissionParams, PermissionResult, ErrorData>("agent/permission");
