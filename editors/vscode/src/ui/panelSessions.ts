// The Kgent panel's session history: list the folder's sessions, resume one (its conversation comes back into the
// panel) and fork at any of its messages (`agent/fork` before it; the message goes back into the input).

import { errorOf, type KgentClient } from "../client";
import { splitAttachments } from "../panelHistory";
import type { PanelModel } from "../panelModel";
import type { ToPage } from "../panelMessages";
import { firstLine } from "../transcript";
import type * as P from "../protocol";
import type { DaemonControl } from "./daemonControl";
import { pickSession } from "./sessionPicker";
import { pickFolder } from "./tasks";

export class PanelSessions {
  /** The provider and model of the session last resumed or forked (its latest model call's), for its next runs. */
  lastModel: { sessionId: string; provider?: string; model?: string } | undefined;

  constructor(
    private readonly daemon: DaemonControl,
    private readonly model: PanelModel,
    private readonly refresh: () => void,
    private readonly post: (m: ToPage) => void,
  ) {}

  /**
   * History: the folder's sessions in VS Code's quick input (ui/sessionPicker.ts: search, rename, delete); the one
   * picked is resumed or forked into the panel.
   */
  async history(): Promise<void> {
    const folder = await pickFolder();
    const client = folder === undefined ? undefined : await this.daemon.client();
    if (folder === undefined || client === undefined) return;
    const choice = await pickSession(client, folder.uri.fsPath, (sessionId) => {
      if (this.model.sessionId !== sessionId) return;
      this.model.clear();
      this.model.note("The session shown here was deleted: your next message starts a new one.");
      this.refresh();
    });
    if (choice === undefined) return;
    const title = firstLine(choice.session.title || choice.session.sessionId, 70);
    if (choice.action === "resume") await this.resume(choice.session.sessionId, title);
    else await this.fork(choice.session.sessionId, title);
    this.afterPick?.();
  }

  /** Kgent: Continue Latest Session (the CLI's `-c`): the folder's most recently updated session, resumed here. */
  async continueLatest(): Promise<void> {
    const folder = await pickFolder();
    const client = folder === undefined ? undefined : await this.daemon.client();
    if (folder === undefined || client === undefined) return;
    try {
      const latest = (await client.sessions(folder.uri.fsPath)).sessions[0];
      if (latest === undefined) {
        this.model.note(`No session in ${folder.name} yet: your first message starts one.`);
        this.refresh();
        return;
      }
      await this.resume(latest.sessionId, firstLine(latest.title || latest.sessionId, 70));
      this.afterPick?.();
    } catch (e) {
      this.model.note(`Could not list the sessions: ${errorOf(e).message}`, "error");
      this.refresh();
    }
  }

  /** Called after History resumed or forked a session (the panel then follows its model). */
  afterPick: (() => void) | undefined;

  /** Run `fn` with the daemon (started if needed); a failure becomes a note ("Could not <what>: …"). */
  private async attempt(what: string, fn: (client: KgentClient) => Promise<void>): Promise<void> {
    const client = await this.daemon.client();
    if (client === undefined) return;
    try {
      await fn(client);
    } catch (e) {
      this.model.note(`Could not ${what}: ${errorOf(e).message}`, "error");
    }
    this.refresh();
  }

  /** History → Resume: the session's conversation in the panel; the next message continues it. */
  resume(sessionId: string, title: string): Promise<void> {
    return this.attempt("read the session", async (client) => {
      const session = await client.session(sessionId, true);
      this.remember(session);
      this.model.showSession(session, title);
      this.model.note(`Resumed “${title}”: your next message continues it.`);
    });
  }

  /** Remember the session's own provider and model: its latest model call's, else its config entry's. */
  private remember(session: P.SessionResult): void {
    let provider: string | undefined;
    let model: string | undefined;
    for (const e of session.entries) {
      const m = e.message;
      if (e.type === "config") {
        const c = e as unknown as { provider?: string; model?: string };
        provider = c.provider ?? provider;
        model = c.model ?? model;
      } else if (m?.role === "assistant" && typeof m.model === "string" && m.model !== "") {
        provider = typeof m.provider === "string" ? m.provider : provider;
        model = m.model;
      }
    }
    this.lastModel =
      model === undefined && provider === undefined ? undefined : { sessionId: session.sessionId, provider, model };
  }

  /** History → Fork: branch the session before its last message (see `forkAt`). */
  fork(sessionId: string, title: string): Promise<void> {
    return this.attempt("fork the session", async (client) => {
      const session = await client.session(sessionId, true);
      const lastUser = [...session.entries].reverse().find((e) => e.message?.role === "user");
      if (lastUser !== undefined) return this.forkAt(sessionId, lastUser.id);
      this.model.note(`“${title}” has no message to branch from: use New instead.`, "error");
    });
  }

  /**
   * Branch the session just before one of its messages (`agent/fork` to the message's parent): the conversation up to
   * there is shown, and the message goes back into the input to be edited and sent. Nothing is lost: the old branch
   * stays in the session.
   */
  forkAt(sessionId: string, entryId: string): Promise<void> {
    return this.attempt("fork the session", async (client) => {
      const whole = await client.session(sessionId);
      const entry = whole.entries.find((e) => e.id === entryId);
      // A slash command's message goes back as it was typed (`/review`), so sending it expands it afresh.
      const typed = typeof entry?.typed === "string" && entry.typed !== "" ? entry.typed : undefined;
      const text = entry?.message?.role === "user" ? (typed ?? entry.message.text) : undefined;
      if (entry === undefined || text === undefined || entry.parentId === null) {
        this.model.note("That message cannot be branched from: use New instead.", "error");
        return;
      }
      await client.fork(sessionId, entry.parentId);
      const branch = await client.session(sessionId, true);
      this.remember(whole);
      this.model.showSession(branch, `fork of “${firstLine(whole.title || sessionId, 60)}”`);
      this.model.note(
        `Forked before “${firstLine(text, 60)}”: edit it below and send it to continue on a new branch (the old branch is kept in the session).`,
      );
      this.post({ type: "setInput", text: splitAttachments(text).text });
    });
  }
}
