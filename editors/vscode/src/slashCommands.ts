// Slash commands as a client reads them (protocol.md § agent/commands): which command a message starts with.
// Editor-agnostic: what each command does is the daemon's answer (`action`), not decided here.

// The daemon's own reading (kgent.service.commands.invocation): `/name` at the very start, then whitespace or the end.
// `//…` and a leading space are escapes; `/usr/bin/x …` is no command (no space after the name).
const INVOCATION = /^\/([A-Za-z0-9][A-Za-z0-9_.-]*)(?:\s|$)/;

/** The name of the slash command `text` starts with, or undefined for any other text. */
export function slashName(text: string): string | undefined {
  return INVOCATION.exec(text)?.[1];
}
