import { readFileSync, renameSync, statSync } from "node:fs";
import type { Logger } from "../../core/logger.js";
import { writePrivateFile } from "../../plugin-api/write-private-file.js";

/**
 * `<state>/approvals.json`, the bash allowlist the person keeps (docs/tools.md, The bash allowlist):
 * `{ "bash": ["git status", "npm test*"] }`. Hand-editable: read again whenever the file changed on disk (its
 * size or modification time), at the next call that asks. Written 0600 and atomically (`writePrivateFile`).
 * A file that does not parse, or is not that shape, is set aside (renamed `approvals.json.corrupt-<time>`) with
 * an error in the log, never overwritten: until a new entry is added, nothing is allowed by it.
 */
export class ApprovalsFile {
  private entries: string[] = [];
  /** What the entries were read from: `size:mtimeMs`, or "missing". */
  private seen: string | undefined;
  /** Writes, one at a time. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** The bash entries as the file holds them now. */
  bash(): readonly string[] {
    const stamp = this.stamp();
    if (stamp !== this.seen) this.read(stamp);
    return this.entries;
  }

  /** Adds `entry` (an exact command, or a prefix pattern ending in `*`) unless it is there; resolves once written. */
  add(entry: string): Promise<void> {
    const next = this.writing.then(async () => {
      const entries = this.bash();
      if (entries.includes(entry)) return;
      const bash = [...entries, entry];
      await writePrivateFile(this.path, `${JSON.stringify({ bash }, null, 2)}\n`);
      this.entries = bash;
      this.seen = this.stamp();
      this.logger.info("bash allowlist: entry added", { path: this.path, entry });
    });
    this.writing = next.catch(() => {});
    return next;
  }

  private stamp(): string {
    try {
      const s = statSync(this.path);
      return `${s.size}:${s.mtimeMs}`;
    } catch {
      return "missing";
    }
  }

  private read(stamp: string): void {
    this.seen = stamp;
    this.entries = [];
    if (stamp === "missing") return;
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      this.logger.error("bash allowlist could not be read; nothing is allowed by it for now", {
        path: this.path,
        error: String(error),
      });
      return;
    }
    const parsed = parseApprovals(text);
    if (parsed) {
      this.entries = parsed;
      return;
    }
    const aside = `${this.path}.corrupt-${this.now()}`;
    try {
      renameSync(this.path, aside);
      this.seen = "missing";
      this.logger.error(
        'bash allowlist does not parse (expected { "bash": ["command", "prefix*"] }): set aside; nothing is allowed by it until an entry is added',
        { path: this.path, setAsideAs: aside },
      );
    } catch (error) {
      this.logger.error(
        "bash allowlist does not parse and could not be set aside; nothing is allowed by it",
        {
          path: this.path,
          error: String(error),
        },
      );
    }
  }
}

/** The bash entries of a file's text, or undefined when it is not `{ "bash": string[] }`. Pure. */
export function parseApprovals(text: string): string[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const bash = (value as Record<string, unknown>).bash ?? [];
  if (!Array.isArray(bash) || !bash.every((e): e is string => typeof e === "string")) return undefined;
  return bash;
}
