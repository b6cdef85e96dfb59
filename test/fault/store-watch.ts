import { type FSWatcher, watch } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { deadline } from "./traffic.js";

/**
 * Watches the directory of `sessions.json` (inotify through fs.watch) so that a scenario can wait for the
 * gateway's next write of the store, which is always a rename of a temp file over the path: a new inode.
 */
export class StoreWatch {
  private readonly watcher: FSWatcher;
  private readonly wakers = new Set<() => void>();

  constructor(readonly storePath: string) {
    this.watcher = watch(dirname(storePath), () => {
      for (const wake of [...this.wakers]) wake();
    });
  }

  /** The inode of the store file now (undefined when it is missing). */
  async inode(): Promise<number | undefined> {
    return (await stat(this.storePath).catch(() => undefined))?.ino;
  }

  /**
   * Resolves once the path names an inode other than `ino` (someone renamed a new file over it), checking on
   * every change in the directory; "late" at the deadline.
   */
  async nextWrite(ino: number | undefined, deadlineMs = 5_000): Promise<"written" | "late"> {
    const timer = deadline(deadlineMs);
    try {
      for (;;) {
        let wake: () => void = () => {};
        const changed = new Promise<void>((resolve) => {
          wake = resolve;
        });
        this.wakers.add(wake);
        try {
          const now = await this.inode();
          if (now !== undefined && now !== ino) return "written";
          if ((await Promise.race([changed, timer.late])) === "late") return "late";
        } finally {
          this.wakers.delete(wake);
        }
      }
    } finally {
      timer.clear();
    }
  }

  /** The files set aside next to the store (`sessions.json.bad-*`). */
  async setAside(): Promise<string[]> {
    const prefix = `${basename(this.storePath)}.bad-`;
    return (await readdir(dirname(this.storePath)).catch(() => [] as string[])).filter((f) =>
      f.startsWith(prefix),
    );
  }

  close(): void {
    this.watcher.close();
  }
}
