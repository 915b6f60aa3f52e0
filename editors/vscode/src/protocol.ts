// The Kgent daemon protocol, version 1 (protocol.md at the repository root), as typed messages.
//
// The message shapes are generated from the daemon's wire models into wire.generated.ts (`python -m kgent.service.wire`
// from the repository root). This file adds what the schema does not say: the JSON-RPC message types, the error
// codes, and the open event union (event types this client does not know are ignored). Editor-agnostic: no `vscode`
// import.

import { NotificationType, NotificationType0, RequestType, RequestType0 } from "vscode-jsonrpc/node";
import type * as W from "./wire.generated";

export type {
  AcpPermissionResult,
  ApplyReviewParams,
  ApplyReviewResult,
  ClientCapabilities,
  Diagnostic,
  DiagnosticsParams,
  DiagnosticsResult,
  EditorDiagnostic,
  FsCapabilities,
  HunkOutcome,
  HunkResult,
  HunkStatus,
  ReadTextFileParams,
  ReadTextFileResult,
  ReviewFile,
  ReviewHunk,
  ReviewParams,
  ReviewResult,
  ReviewRun,
  RewindFile,
  RewindOutcome,
  RewindParams,
  RewindResult,
  SaveFilesParams,
  SaveFilesResult,
  WriteTextFileParams,
  WriteTextFileResult,
  AssistantMessage,
  CancelRequestParams,
  CancelResult,
  ClientInfo,
  CommandInfo,
  CommandsParams,
  CommandsResult,
  CompactParams,
  CompactResult,
  CompactionEvent,
  ContentBlock,
  ContextUse,
  Cost,
  DeleteSessionParams,
  EmptyResult,
  ExtensionInfo,
  ExtensionsInfo,
  ForkParams,
  ForkResult,
  ImageBlock,
  ImageRef,
  InitializeParams,
  InitializeResult,
  InitializeSettings,
  InstructionsEvent,
  KnownEvent,
  LoadedFile,
  McpServerInfo,
  MenuEntry,
  MessageDeltaEvent,
  MessageEndEvent,
  PermissionCancelled,
  PermissionMode,
  PermissionOption,
  PermissionOptionKind,
  PermissionParams,
  PermissionRequestEvent,
  PermissionResolvedEvent,
  PermissionResult,
  PermissionSelected,
  PermissionToolCall,
  PlanEntry,
  PlanEvent,
  ProjectTrust,
  QueueUpdateEvent,
  RenameSessionParams,
  AddRuleResult,
  RemoveRuleResult,
  RuleFilesInfo,
  RuleInfo,
  RuleItem,
  RuleParams,
  RulesParams,
  RulesResult,
  ResourceBlock,
  ResourceLinkBlock,
  RetryEvent,
  RunEndEvent,
  RunError,
  RunIdParams,
  RunParams,
  RunResult,
  RunStartEvent,
  RunStatus,
  RunTextParams,
  ServerCapabilities,
  ServerFeatures,
  SkippedFile,
  ServerInfo,
  SessionEntry,
  SessionFeatures,
  SessionImage,
  SessionInfo,
  SessionMessage,
  SessionParams,
  SessionResult,
  SessionsParams,
  SessionsResult,
  SkillInfo,
  StopReason,
  SummaryMessage,
  TextBlock,
  TextResource,
  Tokens,
  ToolCallEvent,
  ToolCallRef,
  ToolInfo,
  ToolKind,
  ToolOutputParams,
  ToolOutputResult,
  ToolResultMessage,
  ToolStatus,
  ToolUpdateEvent,
  Usage,
  UsageEvent,
  UserMessage,
  UserMessageEvent,
  BackgroundCommand,
  BackgroundEvent,
  BackgroundParams,
  BackgroundResult,
  CancelParams,
  CommandParams,
  CommandResult,
  ExportParams,
  ExportResult,
} from "./wire.generated";

export const PROTOCOL_VERSION = 1;

/** A JSON-RPC error's `data`: `code` is a stable snake_case name (protocol.md, Errors). */
export interface ErrorData {
  code: string;
  [key: string]: unknown;
}

/** What the `permission_request` event and the `agent/permission` request share. */
export type PermissionFields = Omit<W.PermissionParams, "runId" | "sessionId">;

// ---------------------------------------------------------------------------------------------- events

/** An event type this client does not know: ignored (protocol.md, Versioning). */
export interface UnknownEvent {
  type: string;
  [key: string]: unknown;
}

// Every known event type, once: the compiler holds this to the generated union.
const EVENT_TYPES: Record<W.KnownEvent["type"], true> = {
  run_start: true,
  user_message: true,
  message_delta: true,
  message_end: true,
  tool_call: true,
  tool_update: true,
  permission_request: true,
  permission_resolved: true,
  queue_update: true,
  usage: true,
  retry: true,
  compaction: true,
  plan: true,
  instructions: true,
  background: true,
  run_end: true,
};

export const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set(Object.keys(EVENT_TYPES));

/** Narrow a wire event to a known one (or undefined for an unknown type, which callers ignore). */
export function knownEvent(event: UnknownEvent | W.KnownEvent): W.KnownEvent | undefined {
  return KNOWN_EVENT_TYPES.has(event.type) ? (event as W.KnownEvent) : undefined;
}

/** `agent/event`, with room for event types added after this client was built. */
export interface AgentEventParams extends Omit<W.AgentEventParams, "event"> {
  event: W.KnownEvent | UnknownEvent;
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

export const Initialize = new RequestType<W.InitializeParams, W.InitializeResult, ErrorData>("initialize");
export const Shutdown = new RequestType0<null, ErrorData>("shutdown");
export const Exit = new NotificationType0("exit");
export const AgentRun = new RequestType<W.RunParams, W.RunResult, ErrorData>("agent/run");
export const AgentCancel = new RequestType<W.CancelParams, W.CancelResult, ErrorData>("agent/cancel");
export const AgentSteer = new RequestType<W.RunTextParams, W.EmptyResult, ErrorData>("agent/steer");
export const AgentFollowUp = new RequestType<W.RunTextParams, W.EmptyResult, ErrorData>("agent/followUp");
export const AgentClearQueue = new RequestType<W.RunIdParams, W.EmptyResult, ErrorData>("agent/clearQueue");
export const AgentSessions = new RequestType<W.SessionsParams, W.SessionsResult, ErrorData>("agent/sessions");
export const AgentSession = new RequestType<W.SessionParams, W.SessionResult, ErrorData>("agent/session");
// All a tool call printed, as saved with the session (a long command's whole output, not the tail the model saw).
export const AgentToolOutput = new RequestType<W.ToolOutputParams, W.ToolOutputResult, ErrorData>("agent/toolOutput");
export const AgentFork = new RequestType<W.ForkParams, W.ForkResult, ErrorData>("agent/fork");
export const AgentRenameSession = new RequestType<W.RenameSessionParams, W.EmptyResult, ErrorData>(
  "agent/renameSession",
);
export const AgentDeleteSession = new RequestType<W.DeleteSessionParams, W.EmptyResult, ErrorData>(
  "agent/deleteSession",
);
export const AgentCompact = new RequestType<W.CompactParams, W.CompactResult, ErrorData>("agent/compact");
// Permission rules (protocol.md § Rules).
export const AgentRules = new RequestType<W.RulesParams, W.RulesResult, ErrorData>("agent/rules");
export const AgentAddRule = new RequestType<W.RuleParams, W.AddRuleResult, ErrorData>("agent/addRule");
export const AgentRemoveRule = new RequestType<W.RuleParams, W.RemoveRuleResult, ErrorData>("agent/removeRule");
export const AgentCommands = new RequestType<W.CommandsParams, W.CommandsResult, ErrorData>("agent/commands");
export const AgentCommand = new RequestType<W.CommandParams, W.CommandResult, ErrorData>("agent/command");
// Background commands (protocol.md § agent/background): listed and stopped; the panel does not show them yet.
export const AgentBackground = new RequestType<W.BackgroundParams, W.BackgroundResult, ErrorData>("agent/background");
export const AgentExportSession = new RequestType<W.ExportParams, W.ExportResult, ErrorData>("agent/exportSession");
export const AgentEvent = new NotificationType<AgentEventParams>("agent/event");
export const AgentPermission = new RequestType<W.PermissionParams, W.PermissionResult, ErrorData>("agent/permission");
export const CancelRequest = new NotificationType<W.CancelRequestParams>("$/cancelRequest");
// Host-owned files and review (protocol.md § Host-owned files, § Review).
export const AgentReview = new RequestType<W.ReviewParams, W.ReviewResult, ErrorData>("agent/review");
export const AgentApplyReview = new RequestType<W.ApplyReviewParams, W.ApplyReviewResult, ErrorData>(
  "agent/applyReview",
);
export const AgentRewind = new RequestType<W.RewindParams, W.RewindResult, ErrorData>("agent/rewind");
export const AgentReadTextFile = new RequestType<W.ReadTextFileParams, W.ReadTextFileResult, ErrorData>(
  "agent/readTextFile",
);
export const AgentWriteTextFile = new RequestType<W.WriteTextFileParams, W.WriteTextFileResult, ErrorData>(
  "agent/writeTextFile",
);
export const AgentSaveFiles = new RequestType<W.SaveFilesParams, W.SaveFilesResult, ErrorData>("agent/saveFiles");
// Diagnostics after edits (protocol.md § Diagnostics).
export const AgentDiagnostics = new RequestType<W.DiagnosticsParams, W.DiagnosticsResult, ErrorData>(
  "agent/diagnostics",
);
