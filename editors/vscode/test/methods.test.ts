// protocol.ts's message types against the method table (wire.generated.ts's Methods, from kgent.service.wire.methods):
// every method has one, with the table's params and result types.

import { strict as assert } from "node:assert";
import { test } from "node:test";
import { NotificationType, NotificationType0, RequestType, RequestType0 } from "vscode-jsonrpc/node";
import * as P from "../src/protocol";
import { METHOD_NAMES, type Methods } from "../src/wire.generated";

type Request<M extends keyof Methods> = RequestType<Methods[M]["params"], Methods[M]["result"], P.ErrorData>;

// Compile-time: the hand-written message types carry the table's types (tsc fails otherwise).
const typed: [
  Request<"agent/run">,
  Request<"agent/cancel">,
  Request<"agent/clearQueue">,
  Request<"agent/review">,
  Request<"agent/applyReview">,
  Request<"agent/rewind">,
  Request<"agent/readTextFile">,
  Request<"agent/writeTextFile">,
  Request<"agent/saveFiles">,
  Request<"agent/diagnostics">,
] = [
  P.AgentRun,
  P.AgentCancel,
  P.AgentClearQueue,
  P.AgentReview,
  P.AgentApplyReview,
  P.AgentRewind,
  P.AgentReadTextFile,
  P.AgentWriteTextFile,
  P.AgentSaveFiles,
  P.AgentDiagnostics,
];

test("protocol.ts declares a message type for every method of the table, and no other", () => {
  const kinds = [RequestType, RequestType0, NotificationType, NotificationType0];
  const values: unknown[] = Object.values(P);
  const declared = values
    .filter((v): v is { method: string } => kinds.some((k) => v instanceof k))
    .map((v) => v.method);
  assert.deepEqual([...new Set(declared)].sort(), [...METHOD_NAMES].sort());
  assert.equal(typed.length, 10);
});
