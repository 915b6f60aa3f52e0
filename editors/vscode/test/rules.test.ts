// Issue 25 on its own (no daemon, no vscode): the rule words an approval shows, "approve with changes" answers, and
// the Permissions view's grouping.

import { strict as assert } from "node:assert";
import { describe, test } from "node:test";
import { approvalPrompt } from "../src/approval";
import { sanitizeAnswer } from "../src/client";
import { parseFromPage } from "../src/panelMessages";
import { PanelModel } from "../src/panelModel";
import type { PermissionParams } from "../src/protocol";
import { groupRules, noRuleOf, optionRuleLine, optionWords, removeParams, type RulesResult } from "../src/rules";

type Option = PermissionParams["options"][number];

function permission(
  toolCall: Partial<PermissionParams["toolCall"]>,
  options: Option[],
  extra: Record<string, unknown> = {},
): PermissionParams {
  return {
    runId: "run-1",
    sessionId: "s",
    requestId: "run-1:perm:1",
    toolCall: { toolCallId: "c1", name: "bash", kind: "execute", title: "Run", args: {}, ...toolCall },
    risk: "medium",
    reason: "ask mode: a command needs your approval",
    operation: "shell",
    scope: "workspace",
    options,
    ...extra,
  } as PermissionParams;
}

/** Options as the wire sends them (issue 25): "always" options carry `scope` and `rules`. */
const COMPOUND: Option[] = [
  { optionId: "allow_once", kind: "allow_once", name: "Allow once" },
  {
    optionId: "allow_always",
    kind: "allow_always",
    name: "Always allow `grep -n …` and `python3 sample.py` this session",
    scope: "session",
    rules: [
      { rule: "bash(grep -n *)", text: "allow `grep -n` with any arguments this session" },
      { rule: "bash(python3 sample.py)", text: "allow exactly `python3 sample.py` this session" },
    ],
  },
  {
    optionId: "allow_always_project",
    kind: "allow_always",
    name: "Always allow `grep -n …` and `python3 sample.py` in this project",
    scope: "project",
    rules: [
      { rule: "bash(grep -n *)", text: "allow `grep -n` with any arguments in this project" },
      { rule: "bash(python3 sample.py)", text: "allow exactly `python3 sample.py` in this project" },
    ],
  },
  { optionId: "reject_once", kind: "reject_once", name: "Reject" },
] as Option[];

describe("rule words on approvals", () => {
  test("the QuickPick lists whatever options arrive, each with its scope and the rules it creates", () => {
    const p = approvalPrompt(permission({ command: "grep -n x sample.py && python3 sample.py" }, COMPOUND));
    const options = p.choices.filter((c) => c.kind === "option");
    assert.deepEqual(
      options.map((c) => c.label),
      [
        "$(check) Allow once",
        "$(check-all) Always allow `grep -n …` and `python3 sample.py` this session",
        "$(check-all) Always allow `grep -n …` and `python3 sample.py` in this project",
        "$(close) Reject",
      ],
    );
    const project = options[2];
    assert.equal(project.kind === "option" && project.description, "project");
    assert.equal(
      project.kind === "option" && project.detail,
      "creates: allow `grep -n` with any arguments in this project; allow exactly `python3 sample.py` in this project",
    );
    assert.equal(options[0].kind === "option" && options[0].detail, undefined, "a one-off answer creates nothing");
    assert.match(
      p.details,
      /Always allow .* in this project: bash\(grep -n \*\) \(allow `grep -n` with any arguments in this project\)/,
    );
  });

  test("no rule can be made: the daemon's reason is shown, and no always option is invented", () => {
    const noRule = "a command with `$(…)` cannot be a rule: it is asked each time";
    const params = permission(
      { command: "echo $(date)" },
      COMPOUND.filter((o) => o.kind !== "allow_always"),
      { noRule },
    );
    assert.equal(noRuleOf(params), noRule);
    const p = approvalPrompt(params);
    assert.ok(!p.choices.some((c) => c.label.includes("Always")));
    const info = p.choices.find((c) => c.kind === "details" && c.description === noRule);
    assert.ok(info, JSON.stringify(p.choices));
    assert.match(p.details, /No rule: {3}a command with/);
    const model = new PanelModel();
    const card = model.approvalRequested(params, undefined, false);
    assert.equal(card.noRule, noRule);
    assert.equal(
      model.approvalRequested(permission({}, COMPOUND, { requestId: "r2" }), undefined, false).noRule,
      undefined,
    );
  });

  test("older daemons: options without rule fields read as one-off answers", () => {
    const o: Option = { optionId: "allow_always", kind: "allow_always", name: "Allow for this session" };
    assert.deepEqual(optionWords(o), { rules: [] });
    assert.equal(optionRuleLine(o), undefined);
    assert.deepEqual(
      optionWords({
        ...o,
        rules: [{ rule: 1 }, null, { rule: "edit(a.txt)", text: "allow edits to `a.txt` this session" }],
      } as unknown as Option),
      {
        rules: [{ rule: "edit(a.txt)", text: "allow edits to `a.txt` this session" }],
      },
    );
  });
});

describe("approve with changes", () => {
  const edit = permission(
    { name: "edit", kind: "edit", path: "sample.py", oldText: "value = 1\n", newText: "value = 2\n" },
    COMPOUND,
  );

  test("the person's text goes along with an allow option on a call that proposed a text, and only then", () => {
    const mine = { outcome: "selected", optionId: "allow_once", newText: "value = 3\n" } as Parameters<
      typeof sanitizeAnswer
    >[1];
    assert.deepEqual(sanitizeAnswer(edit, mine), {
      outcome: "selected",
      optionId: "allow_once",
      newText: "value = 3\n",
    });
    const reject = { outcome: "selected", optionId: "reject_once", newText: "value = 3\n" } as Parameters<
      typeof sanitizeAnswer
    >[1];
    assert.deepEqual(sanitizeAnswer(edit, reject), { outcome: "selected", optionId: "reject_once" });
    const command = permission({ command: "ls" }, COMPOUND);
    assert.deepEqual(sanitizeAnswer(command, mine), { outcome: "selected", optionId: "allow_once" });
    const unknown = { outcome: "selected", optionId: "nope", newText: "x" } as Parameters<typeof sanitizeAnswer>[1];
    assert.deepEqual(sanitizeAnswer(edit, unknown), { outcome: "cancelled" });
  });

  test("the page's Accept my version message is validated; an edited card says so", () => {
    assert.deepEqual(parseFromPage({ type: "acceptMine", requestId: "r" }), { type: "acceptMine", requestId: "r" });
    assert.equal(parseFromPage({ type: "acceptMine" }), undefined);
    const model = new PanelModel();
    const card = model.approvalRequested(edit, undefined, true);
    const rev = card.rev;
    model.approvalEdited(edit.requestId);
    const after = model.pendingApprovals()[0];
    assert.equal(after.edited, true);
    assert.ok(after.rev > rev, "the page re-renders it");
  });
});

describe("the Permissions view's groups", () => {
  const listed: RulesResult = {
    rules: [
      {
        rule: "bash(npm test *)",
        decision: "allow",
        scope: "project",
        text: "allow `npm test` with any arguments in this project",
        file: "/w/.kgent/config.toml",
      },
      {
        rule: "bash(rm *)",
        decision: "deny",
        scope: "user",
        text: "deny `rm` with any arguments in all your projects",
        file: "/home/u/.config/kgent/config.toml",
      },
      {
        rule: "edit(src/**)",
        decision: "allow",
        scope: "session",
        sessionId: "s1",
        text: "allow edits to `src/**` this session",
      },
    ],
    files: {
      project: "/w/.kgent/config.toml",
      user: "/home/u/.config/kgent/config.toml",
      personal: "/home/u/.config/kgent/projects/w-0123456789abcdef.toml",
    },
    projectTrusted: false,
  };

  test("user, project, session, each with its rules and file; an untrusted project says its allows are ignored", () => {
    const groups = groupRules(listed);
    assert.deepEqual(
      groups.map((g) => [g.scope, g.rules.map((r) => r.rule), g.file]),
      [
        ["user", ["bash(rm *)"], "/home/u/.config/kgent/config.toml"],
        ["project", ["bash(npm test *)"], "/w/.kgent/config.toml"],
        ["session", ["edit(src/**)"], undefined],
      ],
    );
    assert.match(groups[1].note ?? "", /allow rules in its own file are ignored.*projects\/w-0123456789abcdef.toml/);
    assert.equal(groupRules({ ...listed, projectTrusted: true })[1].note, undefined);
  });

  test("remove names the rule as listed (a session rule with its session)", () => {
    assert.deepEqual(removeParams("/w", listed.rules[2]), {
      workspace: "/w",
      rule: "edit(src/**)",
      decision: "allow",
      scope: "session",
      sessionId: "s1",
    });
    assert.deepEqual(removeParams("/w", listed.rules[0]), {
      workspace: "/w",
      rule: "bash(npm test *)",
      decision: "allow",
      scope: "project",
    });
  });
});
