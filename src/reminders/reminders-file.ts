import { readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../core/logger.js";
import { writePrivateFile } from "../plugin-api/write-private-file.js";
import {
  entryOf,
  nextReminderId,
  parseRemindersText,
  type Reminder,
  type RemindersContent,
  remindersText,
} from "./reminder.js";

/** `<state>/reminders.json`. */
export function remindersPath(stateDir: string): string {
  return join(stateDir, "reminders.json");
}

/** The file as read now. */
export type RemindersRead =
  | { state: "missing" }
  | ({ state: "ok" } & RemindersContent)
  | { state: "unusable"; why: string };

export interface RemindersFileOptions {
  path: string;
  /** Read at each use (`gateway.timeZone` may change while the gateway runs). */
  timeZone: () => string;
  now: () => number;
  logger?: Logger;
}

/** A reminder to add: everything but its id and creation time, which the file gives it. */
export type NewReminder = Omit<Reminder, "id" | "createdAt">;

/**
 * `<state>/reminders.json` (docs/files.md): read as it is at each call (hand edits count at once), written
 * atomically (0600), changed one change at a time within this process. A change keeps every entry it does not
 * touch as it is, bad entries included (never a wiped file); a file that does not parse is set aside as
 * `reminders.json.bad-<time>` (and logged) before a change writes a new one, never overwritten.
 */
export class RemindersFile {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: RemindersFileOptions) {}

  get path(): string {
    return this.options.path;
  }

  async read(): Promise<RemindersRead> {
    let text: string;
    try {
      text = await readFile(this.options.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { state: "missing" };
      throw error;
    }
    const parsed = parseRemindersText(text, this.options.timeZone(), this.options.now());
    return "unusable" in parsed ? { state: "unusable", why: parsed.unusable } : { state: "ok", ...parsed };
  }

  /**
   * The file as it is now; one that does not parse is set aside first (the gateway's start: its log says so, and
   * the reminders it held stop firing until it is put back).
   */
  readSettingAside(): Promise<RemindersRead> {
    const run = this.chain.then(async () => {
      const read = await this.read();
      if (read.state !== "unusable") return read;
      await this.setAside(read.why);
      return { state: "missing" } as const;
    });
    this.chain = run.catch(() => {});
    return run;
  }

  /** Adds a reminder with the next free id (`r<n>`); resolves once the file is on disk. */
  add(input: NewReminder): Promise<Reminder> {
    return this.change(true, (raw) => {
      const reminder: Reminder = { ...input, id: nextReminderId(raw), createdAt: this.options.now() };
      return { raw: [...raw, entryOf(reminder)], result: reminder };
    });
  }

  /** Removes the entry with `id` (a bad entry too); false when there is none. */
  remove(id: string): Promise<boolean> {
    return this.change(false, (raw) => {
      const kept = raw.filter((entry) => idOf(entry) !== id);
      return { raw: kept, result: kept.length !== raw.length, unchanged: kept.length === raw.length };
    });
  }

  /**
   * Records that reminder `id` (created at `createdAt`: not a newer one of the same id) fired for `slot`: a
   * one-shot is removed, a repeat gets `lastFired`. Nothing changes when the entry is gone or replaced.
   */
  markFired(id: string, createdAt: number, slot: number): Promise<void> {
    return this.change(false, (raw, content) => {
      const reminder = content.reminders.find((r) => r.id === id && r.createdAt === createdAt);
      if (!reminder) return { raw, result: undefined, unchanged: true };
      const next =
        "at" in reminder.when
          ? raw.filter((entry) => idOf(entry) !== id)
          : raw.map((entry) => (idOf(entry) === id ? { ...(entry as object), lastFired: iso(slot) } : entry));
      return { raw: next, result: undefined };
    });
  }

  /**
   * Runs `edit` on the file as it is now and writes what it returns (unless `unchanged`), one change at a time.
   * A file that does not parse is set aside first when `setAside` (adding), else the change fails saying why.
   */
  private change<T>(
    setAside: boolean,
    edit: (raw: unknown[], content: RemindersContent) => { raw: unknown[]; result: T; unchanged?: boolean },
  ): Promise<T> {
    const run = this.chain.then(async () => {
      const read = await this.read();
      let content: RemindersContent = { reminders: [], bad: [], raw: [] };
      if (read.state === "ok") content = read;
      else if (read.state === "unusable") {
        if (!setAside) throw new Error(`${this.options.path} does not parse: ${read.why}`);
        await this.setAside(read.why);
      }
      const { raw, result, unchanged } = edit(content.raw, content);
      if (!unchanged) await writePrivateFile(this.options.path, remindersText(raw));
      return result;
    });
    this.chain = run.catch(() => {});
    return run;
  }

  private async setAside(why: string): Promise<void> {
    const stamp = new Date(this.options.now()).toISOString().replace(/[:.]/g, "-");
    const target = `${this.options.path}.bad-${stamp}`;
    await rename(this.options.path, target);
    this.options.logger?.error(
      `${this.options.path} does not parse: ${why}; set aside as ${target} (its reminders no longer fire; fix it and move it back to restore them), and a new file started`,
    );
  }
}

function idOf(entry: unknown): unknown {
  return typeof entry === "object" && entry !== null ? (entry as { id?: unknown }).id : undefined;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
