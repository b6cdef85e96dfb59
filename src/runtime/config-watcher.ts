import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { ChokidarOptions, FSWatcher } from "chokidar";
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
  /** Runs the recheck and poll timers. */
  clock?: Clock;
  /** Starts chokidar on the folder (default `chokidar.watch`); a test may hand in one that has lost track. */
  watchFolder?: (dir: string, options: ChokidarOptions) => FSWatcher;
}

let chokidar: Promise<typeof import("chokidar")> | undefined;
/** chokidar, loaded on first use (~11 ms): the watcher starts after the gateway listens. */
function loadChokidar(): Promise<typeof import("chokidar")> {
  chokidar ??= import("chokidar");
  return chokidar;
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
 * - a disappearance is `removed` only when the file is still gone `recheckMs` later;
 * - it recovers from anything that can make chokidar lose track of the file (seen: the path turned into a
 *   folder while chokidar scanned, after which it reported nothing, not even later saves): after a read error
 *   (`recover`, called by the reloader), a folder created or removed at the path, or a watcher error, the path is
 *   looked at every `recheckMs`; once it is a file again (or gone) chokidar is started anew and `changed` (or
 *   `removed`) is reported. A save that chokidar reports meanwhile ends the polling.
 */
/** What the path is now, to tell a change from none while polling: a file with its identity and times, etc. */
function pathSignature(path: string): string {
  try {
    const st = statSync(path);
    const kind = st.isFile() ? "file" : st.isDirectory() ? "dir" : "other";
    return `${kind}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.mode}`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR" ? MISSING : `error:${code}`;
  }
}
const MISSING = "missing";

export class ConfigWatcher {
  private readonly path: string;
  private watcher: FSWatcher | undefined;
  private recheck: unknown;
  /** The poll timer while recovering (see the class comment). */
  private poll: unknown;
  private recovering = false;
  private closed = false;
  private readonly clock: Clock;

  constructor(private readonly options: ConfigWatcherOptions) {
    this.path = resolve(options.path);
    this.clock = options.clock ?? systemClock;
  }

  /** Resolves once watching (events from then on are reported). */
  start(): Promise<void> {
    return this.arm();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clearRecheck();
    this.stopPolling();
    await this.watcher?.close();
  }

  /**
   * The file could not be read (a folder at its path, no permission, …): chokidar may have lost track of it.
   * From now on the path is looked at every `recheckMs` until it changes to a file or goes away; then chokidar is
   * started anew and the change reported. Nothing happens while a recovery is under way already.
   */
  recover(): void {
    if (this.closed || this.recovering) return;
    this.recovering = true;
    this.pollAfter(pathSignature(this.path));
  }

  /** Starts a chokidar watcher on the folder (closing the one before); resolves once it is ready. */
  private async arm(): Promise<void> {
    const previous = this.watcher;
    this.watcher = undefined;
    await previous?.close();
    if (this.closed) return;
    const dir = dirname(this.path);
    // The folder, not only the file: a save-by-rename replaces the file a watch on it would follow. Through the
    // folder chokidar watches the file too (in-place saves), and one that does not exist yet.
    const watch = this.options.watchFolder ?? (await loadChokidar()).watch;
    if (this.closed) return;
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
    watcher.on("all", (event, path) => {
      if (this.watcher !== watcher || this.closed) return;
      if (event === "add" || event === "change") {
        this.clearRecheck();
        this.stopPolling();
        this.options.onEvent("changed");
      } else if (event === "unlink") {
        this.scheduleRecheck();
      } else if ((event === "addDir" || event === "unlinkDir") && resolve(path) === this.path) {
        // A folder at the config's path: chokidar may not follow what comes after it.
        this.recover();
        if (event === "addDir") this.options.onEvent("changed");
      }
    });
    watcher.on("error", (error) => {
      this.options.logger.warn("watching the config file failed; watching it anew", {
        path: this.path,
        error: describeError(error),
      });
      this.recover();
    });
    await new Promise<void>((ready) => watcher.once("ready", () => ready()));
  }

  private pollAfter(before: string): void {
    this.poll = this.clock.setTimeout(() => {
      this.poll = undefined;
      void this.pollOnce(before);
    }, this.options.recheckMs ?? CONFIG_RECHECK_MS);
  }

  private async pollOnce(before: string): Promise<void> {
    if (this.closed || !this.recovering) return;
    const now = pathSignature(this.path);
    if (now === before || !(now === MISSING || now.startsWith("file:"))) {
      this.pollAfter(now);
      return;
    }
    try {
      await this.arm();
    } catch (error) {
      this.options.logger.warn("could not watch the config file again; trying on", {
        path: this.path,
        error: describeError(error),
      });
      this.pollAfter(now);
      return;
    }
    if (this.closed || !this.recovering) return;
    this.recovering = false;
    this.clearRecheck();
    this.options.onEvent(now === MISSING ? "removed" : "changed");
  }

  private stopPolling(): void {
    this.recovering = false;
    if (this.poll !== undefined) this.clock.clearTimeout(this.poll);
    this.poll = undefined;
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
