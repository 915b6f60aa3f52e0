// One daemon per editor window, started lazily and restarted on the next use after a crash. Editor-agnostic.

import { createHash } from "node:crypto";
import { KgentClient, type ClientHooks, type DaemonCommand, type ExitInfo } from "./client";
import type { InitializeSettings } from "./protocol";

export interface DaemonConfig {
  command: DaemonCommand;
  /** Sent with `initialize`; re-sent when they change (they apply to later runs). */
  settings: InitializeSettings;
}

export interface DaemonHooks extends Omit<ClientHooks, "onExit"> {
  /** A daemon this manager started ended without being asked to (crash, kill, OOM). */
  onCrash?(info: ExitInfo): void;
}

export interface Ensured {
  client: KgentClient;
  /** Set when this call started a new daemon because the previous one had crashed. */
  restartedAfter?: ExitInfo;
  /** True when this call started a daemon (first use, after a crash, or after a configuration change). */
  started: boolean;
}

/** Fingerprint of what needs a new process to change (command, environment, approvalTimeout). */
function spawnKey(cfg: DaemonConfig): string {
  const h = createHash("sha256");
  h.update(JSON.stringify([cfg.command.command, cfg.command.args, cfg.command.cwd ?? null]));
  const env = cfg.command.env ?? {};
  for (const k of Object.keys(env)
    .filter((k) => k.startsWith("KGENT_") || k.endsWith("_API_KEY"))
    .sort()) {
    h.update(`\0${k}=${env[k] ?? ""}`);
  }
  h.update(`\0approvalTimeout=${JSON.stringify(cfg.settings.approvalTimeout ?? null)}`);
  return h.digest("hex");
}

function settingsKey(settings: InitializeSettings): string {
  const { approvalTimeout: _ignored, ...rest } = settings;
  return JSON.stringify(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b)));
}

export class DaemonManager {
  private client: KgentClient | undefined;
  private starting: Promise<Ensured> | undefined;
  private currentSpawnKey = "";
  private currentSettingsKey = "";
  private crash: ExitInfo | undefined;
  private disposed = false;

  constructor(
    private readonly config: () => Promise<DaemonConfig>,
    private readonly hooks: DaemonHooks,
  ) {}

  /** The running client, if any (never starts one). */
  get current(): KgentClient | undefined {
    return this.client?.alive === true ? this.client : undefined;
  }

  /** The last unexpected exit not yet followed by a restart. */
  get lastCrash(): ExitInfo | undefined {
    return this.crash;
  }

  /**
   * The running daemon, started if needed. A daemon whose command or environment is out of date is replaced when it
   * has no live run; changed settings are re-sent with `initialize`.
   */
  ensure(): Promise<Ensured> {
    if (this.disposed) return Promise.reject(new Error("the Kgent extension is shutting down"));
    if (this.starting !== undefined) return this.starting;
    const p = this.doEnsure().finally(() => {
      if (this.starting === p) this.starting = undefined;
    });
    this.starting = p;
    return p;
  }

  private async doEnsure(): Promise<Ensured> {
    const cfg = await this.config();
    const key = spawnKey(cfg);
    const live = this.current;
    if (live !== undefined) {
      if (key === this.currentSpawnKey || live.liveRuns().length > 0) {
        const sk = settingsKey(cfg.settings);
        if (sk !== this.currentSettingsKey) {
          await live.reinitialize(cfg.settings);
          this.currentSettingsKey = sk;
        }
        return { client: live, started: false };
      }
      this.hooks.log?.("[kgent] configuration changed: restarting the daemon\n");
      await this.stopClient();
    }
    const restartedAfter = this.crash;
    const ref: { client?: KgentClient } = {};
    const client = await KgentClient.start(
      cfg.command,
      {
        log: this.hooks.log,
        onEvent: this.hooks.onEvent,
        decide: this.hooks.decide,
        files: this.hooks.files,
        diagnostics: this.hooks.diagnostics,
        onExit: (info) => this.onExit(ref.client, info),
      },
      { settings: cfg.settings },
    );
    ref.client = client;
    if (this.disposed) {
      await client.stop();
      throw new Error("the Kgent extension is shutting down");
    }
    this.client = client;
    this.crash = undefined;
    this.currentSpawnKey = key;
    this.currentSettingsKey = settingsKey(cfg.settings);
    return { client, restartedAfter, started: true };
  }

  private onExit(client: KgentClient | undefined, info: ExitInfo): void {
    if (client === undefined || this.client !== client) return; // an old process, or one that never finished starting
    this.client = undefined;
    if (info.expected || this.disposed) return;
    this.crash = info;
    this.hooks.onCrash?.(info);
  }

  private async stopClient(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c !== undefined) await c.stop();
  }

  /** Stop the daemon (if any) and start a new one now. */
  async restart(): Promise<Ensured> {
    if (this.starting !== undefined) await this.starting.catch(() => undefined);
    await this.stopClient();
    this.crash = undefined;
    return this.ensure();
  }

  /** Stop the daemon if it has no live run (it starts again on next use, with the current configuration). */
  async stopIfIdle(): Promise<boolean> {
    const c = this.current;
    if (c === undefined) return true;
    if (c.liveRuns().length > 0) return false;
    await this.stopClient();
    return true;
  }

  /** Send `exit` and wait for the process (killed after a grace period). */
  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.starting !== undefined) await this.starting.catch(() => undefined);
    await this.stopClient();
  }
}
