// The composer's slash commands (protocol.md § agent/commands, § agent/command): the daemon's menu for the page, and
// what a message that starts with a command does, by the command's `action`: `prompt` is sent as the run's prompt
// (the daemon expands it), `answer` shows the daemon's answer as a note (`/mode NAME` and `/model ID` also set the
// pickers), `newSession` is the New button, `rewind` opens the rewind flow.

import * as vscode from "vscode";
import { errorOf, type KgentClient } from "../client";
import type { PastedImage } from "../images";
import type { SlashCommand, ToPage } from "../panelMessages";
import type { PanelModel } from "../panelModel";
import type * as P from "../protocol";
import { slashName } from "../slashCommands";
import type { DaemonControl } from "./daemonControl";
import { pickCheckpoint, rewindAt } from "./panelRewind";

/** What the panel does for a command's answer. */
export interface CommandHooks {
  /** The New button: the conversation forgotten, the next message starts a new session. */
  newConversation(): void;
  /** `/mode NAME`: the mode of the next runs (the picker's setting). */
  useMode(mode: string): Promise<void>;
  /** `/model ID`: the model of the next runs (the picker's setting). */
  useModel(model: string): Promise<void>;
}

export class PanelCommands {
  /** The actions of the commands seen so far, by name: a `prompt` goes to `agent/run` without asking first. */
  private readonly actions = new Map<string, string>();

  constructor(
    private readonly daemon: DaemonControl,
    private readonly model: PanelModel,
    private readonly refresh: () => void,
    private readonly post: (m: ToPage) => void,
    private readonly hooks: CommandHooks,
  ) {}

  /** The page's slash menu (`/` typed at the start): the daemon's list for the workspace's folder. */
  async list(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const client = this.model.trusted && folder !== undefined ? await this.daemon.client() : undefined;
    let commands: SlashCommand[] = [];
    try {
      if (client !== undefined && folder !== undefined) {
        const listed = await client.commands(folder.uri.fsPath);
        for (const c of listed.menu) this.actions.set(c.name, c.action);
        // The server's menu, as it is (its descriptions say where a template comes from).
        commands = listed.menu.map((c) => ({
          name: c.name,
          description: c.description,
          ...(c.argumentHint ? { argumentHint: c.argumentHint } : {}),
        }));
      }
    } catch (e) {
      this.model.note(`Could not list the slash commands: ${errorOf(e).message}`, "error");
      this.refresh();
    }
    this.post({ type: "commands", commands });
  }

  /**
   * Run the message if it starts with a command that is no prompt (`agent/command` says which: asked for every name
   * not known as a prompt). False: send it as a run's prompt. `workspace` is asked only without a session.
   */
  async handle(text: string, images: PastedImage[], workspace: () => Promise<string | undefined>): Promise<boolean> {
    const name = slashName(text);
    if (name === undefined || this.actions.get(name) === "prompt") return false;
    const client = await this.daemon.client();
    if (client === undefined) return false; // the run's own path says why there is no daemon
    const sessionId = this.model.sessionId;
    const ws = sessionId === undefined ? await workspace() : undefined;
    if (sessionId === undefined && ws === undefined) {
      this.putBack(text, images); // no folder to work in (pickFolder said so)
      return true;
    }
    let answer: P.CommandResult;
    try {
      answer = await client.command(sessionId !== undefined ? { text, sessionId } : { text, workspace: ws });
    } catch (e) {
      const err = errorOf(e);
      if (err.dataCode === "not_a_command") return false;
      this.model.note(`Could not run /${name}: ${err.message}`, "error");
      this.putBack(text, images);
      this.refresh();
      return true;
    }
    this.actions.set(answer.command, answer.action);
    if (answer.action === "prompt") return false;
    if (images.length > 0) this.post({ type: "setInput", text: "", images }); // the images wait for a prompt
    await this.perform(client, answer, text, sessionId);
    this.refresh();
    return true;
  }

  private async perform(
    client: KgentClient,
    answer: P.CommandResult,
    text: string,
    sessionId: string | undefined,
  ): Promise<void> {
    const given = text.slice(answer.command.length + 1).trim() !== "";
    switch (answer.action) {
      case "answer":
        this.model.note(answer.text);
        // A value given is the next runs' (and the picker's); a bare `/mode` or `/model` only shows: its answer is
        // the daemon's default, and the panel's runs name the picker's own.
        if (given && typeof answer.mode === "string") await this.hooks.useMode(answer.mode);
        if (given && typeof answer.model === "string") await this.hooks.useModel(answer.model);
        return;
      case "newSession":
        this.hooks.newConversation();
        this.model.note(answer.text || "Your next message starts a new session.");
        return;
      case "rewind": {
        // Restore checkpoint's flow (ui/panelRewind.ts), once the person has picked the message.
        if (sessionId === undefined) {
          this.model.note("Nothing to rewind: no conversation in the panel yet.");
          return;
        }
        const entryId = await pickCheckpoint(client, this.model, sessionId);
        if (entryId !== undefined) await rewindAt(client, this.model, this.post, sessionId, entryId);
        return;
      }
      default:
        this.model.note(answer.text || `/${answer.command} is not something this panel can do yet.`);
    }
  }

  /** A message that was not run goes back into the input, not lost. */
  private putBack(text: string, images: PastedImage[]): void {
    this.post(images.length > 0 ? { type: "setInput", text, images } : { type: "setInput", text });
  }
}
