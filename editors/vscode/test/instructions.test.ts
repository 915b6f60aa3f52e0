// Kgent: Open Instructions' items, from an agent/session result (no daemon, no vscode).

import { strict as assert } from "node:assert";
import { test } from "node:test";
import { instructionsNote, loadedItems } from "../src/instructionsModel";

test("the session's instruction files come first, general to specific, then its skills", () => {
  const items = loadedItems({
    instructions: [
      { path: "/home/me/.config/kgent/AGENTS.md", source: "user", change: "new", truncated: false, size: 10 },
      { path: "/ws/AGENTS.md", source: "project", change: "changed", truncated: false, size: 20 },
      { path: "/ws/src/AGENTS.md", source: "directory", change: "new", truncated: true, size: 40000 },
    ],
    skills: [{ name: "release", description: "Cut a release.", path: "/ws/.kgent/skills/release/SKILL.md" }],
  });
  assert.deepEqual(
    items.map((i) => [i.label, i.description, i.path]),
    [
      ["/home/me/.config/kgent/AGENTS.md", "yours", "/home/me/.config/kgent/AGENTS.md"],
      ["/ws/AGENTS.md", "project root, re-read", "/ws/AGENTS.md"],
      ["/ws/src/AGENTS.md", "directory, cut at 32 KiB", "/ws/src/AGENTS.md"],
      ["skill release", "Cut a release.", "/ws/.kgent/skills/release/SKILL.md"],
    ],
  );
  assert.deepEqual(loadedItems({}), []);
});

test("the panel's line for an instructions event names each file from the workspace, and what happened to it", () => {
  assert.equal(
    instructionsNote(
      [
        { path: "/home/me/.config/kgent/AGENTS.md", source: "user", change: "new" },
        { path: "/ws/AGENTS.md", source: "project", change: "changed" },
        { path: "/ws/src/AGENTS.md", source: "directory", change: "new", truncated: true },
        { path: "/ws/old/AGENTS.md", source: "directory", change: "removed" },
      ],
      "/ws",
    ),
    "Instructions: /home/me/.config/kgent/AGENTS.md (yours) read; AGENTS.md (the project's) read again; " +
      "src/AGENTS.md (its directory's) read, its first 32 KiB; old/AGENTS.md (its directory's) is gone: the model was " +
      "told. Kgent: Open Instructions shows them.",
  );
});
