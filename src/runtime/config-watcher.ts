import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type FSWatcher, watch } from "chokidar";
import { type Clock, systemClock } from "../core/clock.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";

/** `changed`: the file is there with new content (saved, replaced, re-created); `removed`: it is gone. */
export type ConfigFileEvent = "changed" | "removed";

export interface ConfigWatcherOptions {
  /** The config file the gateway loaded (it need not exist). */
  path: string;
  /** Called once per settled change; the listener reads the file itself. */
  onEvent(event: ConfigFileEvent): void;
  logger: Pick<Logger, "warn">;
  /** How long the file's size must stay still before a save counts (chokidar's `awaitWriteFinish`). */
  stabilityMs?: number;
  /** After the file disappears, how long until it is looked for again: an editor's save-by-rename is no delete. */
  recheckMs?: number;
  /** Runs the recheck timer. */
  clock?: Clock;
}

/** A save counts once the file has not grown for this long (docs: ECOSYSTEM.md, chokidar). */
export const CONFIG_STABILITY_MS = 150;
/** A file gone for this long is reported `removed`; one back before then is `changed`. */
export const CONFIG_RECHECK_MS = 300;

/**
 * Watches the config file and its folder (chokidar 4), so every way an editor saves counts: written in place,
 * written next to it and renamed over it (VS Code, vim's `backupcopy=no`), moved aside and written anew (vim's
 * backup), deleted, created again. Contract:
 * - only the file itself is reported; other files in the folder (the lock, the token, the store) are ignored;
 * - an event comes once the file's size has settled (`awaitWriteFinish`), so a half-written file is never
 *   reported as the final content; two quick saves may be reported once, with the final content;
 * - nothing is reported for the file as it is when watching starts (`ignoreInitial`);
 * - a disappearance is `removed` only when the file is still gone `recheckMs` later.
 */
export class ConfigWatcher {
  private readonly path: string;
  private watcher: FSWatcher | undefined;
  private recheck: unknown;
  private readonly clock: Clock;

  constructor(private readonly options: ConfigWatcherOptions) {
    this.path = resolve(options.path);
    this.clock = options.clock ?? systemClock;
  }

  /** Resolves once watching (events from then on are reported). */
  start(): Promise<void> {
    const dir = dirname(this.path);
    // The folder, not only the file: a save-by-rename replaces the file a watch on it would follow. Through the
    // folder chokidar watches the file too (in-place saves), and one that does not exist yet.
    const watcher = watch(dir, {
      ignoreInitial: true,
      depth: 0,
      ignored: (candidate: string) => candidate !== dir && candidate !== this.path,
      awaitWriteFinish: {
        stabilityThreshold: this.options.stabilityMs ?? CONFIG_STABILITY_MS,
        pollInterval: 25,
      },
    });
    this.watcher = watcher;
    // `ignored` lets through only the folder itself and the file: every file event is the config's.
    watcher.on("all", (event) => {
      if (event === "add" || event === "change") {
        this.clearRecheck();
        this.options.onEvent("changed");
      } else if (event === "unlink") {
        this.scheduleRecheck();
      }
    });
    watcher.on("error", (error) =>
      this.options.logger.warn("watching the config file failed", {
        path: this.path,
        error: describeError(error),
      }),
    );
    return new Promise((ready) => watcher.once("ready", () => ready()));
  }

  async close(): Promise<void> {
    this.clearRecheck();
    await this.watcher?.close();
  }

  private scheduleRecheck(): void {
    this.clearRecheck();
    this.recheck = this.clock.setTimeout(() => {
      this.recheck = undefined;
      this.options.onEvent(existsSync(this.path) ? "changed" : "removed");
    }, this.options.recheckMs ?? CONFIG_RECHECK_MS);
  }

  private clearRecheck(): void {
    if (this.recheck !== undefined) this.clock.clearTimeout(this.recheck);
    this.recheck = undefined;
  }
}
