import { allowFromWarning } from "../core/allow-from-warning.js";
import type { Clock } from "../core/clock.js";
import type { LoadedConfig, LoadPluginSections, ReloadedConfig } from "../core/config.js";
import { type ConfigDiff, describeDiff } from "../core/config-diff.js";
import { configDigest } from "../core/config-digest.js";
import type { ClawdisConfig } from "../core/config-schema.js";
import type { ConfigSectionEntry } from "../core/config-sections.js";
import { ClawdisError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { Env } from "../core/paths.js";
import type { PluginReloadPlan } from "../host/plugin-reload.js";
import type { ConfigState } from "./config-state.js";
import { type ConfigFileEvent, ConfigWatcher } from "./config-watcher.js";

/** What a config change would do: the diff, and the plugins' settings under the new config. */
export interface ConfigReloadPlan {
  diff: ConfigDiff;
  plugins: PluginReloadPlan;
}

/** What a gateway offers its config reloader (src/gateway.ts implements it). */
export interface ReloadTarget {
  /** The config it runs on now. */
  readonly config: ClawdisConfig;
  readonly configState: ConfigState;
  /** What `next` would change. @throws ClawdisError CONFIG_INVALID for a plugin's settings under `next`. */
  planConfig(next: ClawdisConfig): ConfigReloadPlan;
  /** Applies a planned change that needs no gateway restart; resolves once applied (transports restarted). */
  applyConfig(next: ClawdisConfig, plan: ConfigReloadPlan): Promise<void>;
}

export interface ConfigReloaderOptions {
  /** The config the gateway was started on (its `path` is the file watched). */
  loaded: LoadedConfig;
  env: Env;
  /**
   * The config sections known without loading a plugin (loaded at the first look that validates: a gateway that
   * is never reconfigured loads no schema), and how `plugins.load` adds its own (as at start).
   */
  sections: () => Promise<readonly ConfigSectionEntry[]>;
  /**
   * The file's text and its config when the config cache holds exactly that text (core/config-cache.ts,
   * `cachedGatewayConfigAt`), else undefined: a look at a file that did not change since the start (the first
   * look of every start) then loads neither zod nor the schema.
   */
  cached?: () => { loaded: LoadedConfig; text: string } | undefined;
  loadSections: LoadPluginSections;
  /** The gateway that runs now (another one after an in-process restart). */
  target(): ReloadTarget;
  /**
   * A change that needs the whole gateway (`gateway.port`, `gateway.bind`, `plugins.load`, where sessions live):
   * an in-process restart on `next` (the gateway supervisor's). `reason` names the keys.
   */
  restartGateway(reason: string, next: LoadedConfig): Promise<{ ok: true } | { ok: false; error: string }>;
  logger: Logger;
  clock: Clock;
  /**
   * Applied to every config read from the file before it is compared or applied: what the command line overrides
   * for this run (`clawdis gateway --port`), so that an edit neither undoes the override nor restarts for it.
   */
  adjust?: (loaded: LoadedConfig) => LoadedConfig;
  /** Watching the file (default: a ConfigWatcher on `loaded.path`); tests may drive `reload()` instead. */
  watch?: (path: string, onEvent: (event: ConfigFileEvent) => void) => ConfigFileWatch;
}

/** What the reloader needs of its watcher (ConfigWatcher). */
export interface ConfigFileWatch {
  start(): Promise<void>;
  close(): Promise<void>;
  /** The file could not be read: the watcher makes sure it sees the next save (ConfigWatcher.recover). */
  recover?(): void;
}

/** How one look at the file ended. */
export type ReloadOutcome =
  | "unchanged"
  | "applied"
  | "restarted"
  | "rejected"
  | "deleted"
  | "restart-failed"
  | "stopped";

/** Why an empty config file is not applied while the gateway runs. */
const EMPTY_CONFIG =
  "the file is empty (a save under way, or emptied by hand); save `{}` to run on the defaults";

/**
 * Applies edits of `clawdis.json` while the gateway runs (docs/configuration.md, "Changing the config while it
 * runs"). Contract:
 * - every settled change of the file (ConfigWatcher) is read and validated exactly as at start
 *   (`reloadConfigWithPlugins`: same messages, with key path and line);
 * - a valid change is diffed against the running config (`diffConfig`): applied live, or with one transport
 *   restarted alone, or, for a key that needs the whole gateway, by an in-process restart (`restartGateway`);
 *   one log line per change names the changed keys (never a value);
 * - an invalid edit (syntax, schema, a plugin's settings, a plugin in plugins.load that does not load), or an
 *   empty file where the gateway runs on more than the defaults (a save caught between its truncation and its
 *   write), changes nothing: the gateway keeps the last good config, the error is logged as at start, and
 *   `/status` says so until a good save; a deleted file keeps the last good config with a warning; a file that cannot be read
 *   (a folder at its path, no permission) is rejected the same way, and the watcher is told to recover, so the
 *   next valid save is applied (no restart needed);
 * - looks at the file run one at a time; changes that arrive meanwhile are read once more afterwards (the last
 *   save wins);
 * - saving the same text again does nothing.
 */
export class ConfigReloader {
  private readonly path: string;
  private watcher: ConfigFileWatch | undefined;
  private running: Promise<ReloadOutcome> | undefined;
  private again = false;
  private againInitial = false;
  private stopped = false;
  /** The digest of the last text looked at (applied, refused or restarted on): the same text again is no news. */
  private lastSeen: string | undefined;
  /** What the gateway runs on: its warnings are not repeated by a later change. */
  private current: LoadedConfig;

  constructor(private readonly options: ConfigReloaderOptions) {
    this.path = options.loaded.path;
    this.current = options.loaded;
  }

  /**
   * Starts watching, then looks at the file once: an edit made while the gateway was starting counts too (it
   * changes nothing when the file is what the gateway started on).
   */
  async start(): Promise<void> {
    const watch =
      this.options.watch ??
      ((path, onEvent) => new ConfigWatcher({ path, onEvent, logger: this.options.logger }));
    this.watcher = watch(this.path, () => void this.reload());
    await this.watcher.start();
    await this.reload({ initial: true });
  }

  /** Stops watching; a look under way is left to finish (it cannot block the gateway's stop). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.watcher?.close();
  }

  /** Resolves when no look at the file is under way (for tests). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * Looks at the file now; resolves with how that look ended (coalesced with one under way). `initial`: the
   * gateway is new (the start, an in-process restart): the file is compared with what it runs on even when its
   * text is the one looked at last, and it says nothing when they agree.
   */
  reload(options: { initial?: boolean } = {}): Promise<ReloadOutcome> {
    if (this.running) {
      this.again = true;
      this.againInitial ||= options.initial === true;
      return this.running;
    }
    const run = (async () => {
      let outcome: ReloadOutcome = "stopped";
      let initial = options.initial === true;
      do {
        this.again = false;
        if (this.stopped) return "stopped";
        outcome = await this.look(initial).catch((error: unknown) => {
          this.options.logger.error("reading the config again failed", { error: describeError(error) });
          return "rejected" as const;
        });
        initial = this.againInitial;
        this.againInitial = false;
      } while (this.again);
      return outcome;
    })().finally(() => {
      this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async look(initial: boolean): Promise<ReloadOutcome> {
    const { logger, clock } = this.options;
    const target = this.options.target();
    const state = target.configState;
    let read: ReloadedConfig;
    try {
      const cached = this.options.cached?.();
      if (cached) read = { exists: true, ...cached };
      else {
        // Imported at the first look that validates, not with this module: the gateway listens before zod and
        // the schema load.
        const { reloadConfigWithPlugins } = await import("../core/config.js");
        read = await reloadConfigWithPlugins(
          this.path,
          this.options.env,
          await this.options.sections(),
          this.options.loadSections,
        );
      }
    } catch (error) {
      // The file could not be read (not: it did not parse): the watcher may have lost track of it.
      if (error instanceof ClawdisError && error.code === "IO") this.watcher?.recover?.();
      return this.reject(error, undefined);
    }
    if (read.exists && this.options.adjust) read = { ...read, loaded: this.options.adjust(read.loaded) };
    if (!read.exists) {
      if (initial && !this.current.exists) return "unchanged";
      if (!state.isDeleted) {
        logger.warn(
          `config file ${this.path} was deleted: the gateway keeps running on the last good config; a file saved there again is read at once`,
        );
      }
      state.deleted(clock.now());
      this.lastSeen = undefined;
      return "deleted";
    }
    const sha = configDigest(read.text);
    // A first look (at start, or at a gateway started anew) compares the file with what that gateway runs on.
    if (!initial && sha === this.lastSeen) return "unchanged";
    this.lastSeen = sha;
    let plan: ConfigReloadPlan;
    try {
      plan = target.planConfig(read.loaded.config);
    } catch (error) {
      return this.reject(error, sha);
    }
    const { diff } = plan;
    // An empty file is a save under way (truncated, not written yet) far more often than a wish for the defaults:
    // it changes nothing the gateway runs on; `{}` says "the defaults" on purpose.
    if (read.text.trim() === "" && diff.changed.length > 0) {
      return this.reject(new Error(EMPTY_CONFIG), sha);
    }
    if (initial && diff.changed.length === 0) {
      // The file is what the gateway started on.
      state.confirmed(sha);
      return "unchanged";
    }
    this.warnNew(read.loaded);
    if (diff.need === "gateway") {
      logger.info(describeDiff(diff));
      const result = await this.options.restartGateway(
        `config change: ${diff.gateway.join(", ")}`,
        read.loaded,
      );
      const now = this.options.target();
      if (!result.ok) {
        // Back on the previous config: the edit did not take.
        now.configState.rejected(`the gateway could not start on it: ${result.error}`, clock.now());
        return "restart-failed";
      }
      this.current = read.loaded;
      now.configState.applied(sha, clock.now());
      return "restarted";
    }
    await target.applyConfig(read.loaded.config, plan);
    this.current = read.loaded;
    state.applied(sha, clock.now());
    logger.info(describeDiff(diff));
    return "applied";
  }

  /** An edit that does not load: logged as at start, shown in `/status`; the gateway keeps what it runs on. */
  private reject(error: unknown, sha: string | undefined): ReloadOutcome {
    const message = describeError(error);
    this.options.logger.error(
      `config edit rejected, the gateway keeps running on the last good config: ${message}`,
    );
    this.options.target().configState.rejected(message, this.options.clock.now());
    // The same broken text saved again is not news; a syntax error has no digest here, so it is read again.
    this.lastSeen = sha;
    return "rejected";
  }

  /** Warnings of the new config that the running one did not have (each given once, as at start). */
  private warnNew(next: LoadedConfig): void {
    const before = new Set(this.current.warnings);
    for (const warning of next.warnings) if (!before.has(warning)) this.options.logger.warn(warning);
    const anyone = allowFromWarning(next.config);
    if (anyone && !allowFromWarning(this.current.config)) this.options.logger.warn(anyone);
  }
}
