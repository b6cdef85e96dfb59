import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Where the outbox keeps deliveries past its memory bound while they wait (`<dir>/<run>-<n>.json`, 0600), so a
 * reply past the bound is still sent by the running process once its lane gets to it. Contract:
 * - `put` writes the value and resolves with its name; `take` reads it back and removes the file;
 * - the files are this run's alone: the first `put` removes those an earlier run left (its replies are in the
 *   journal, which sends them again at start); `discard` removes one that will not be taken.
 */
export class SpillStore<T> {
  private readonly run = `${process.pid}-${randomUUID().slice(0, 8)}`;
  private next = 0;
  private ready: Promise<void> | undefined;

  constructor(private readonly dir: string) {}

  async put(value: T): Promise<string> {
    this.ready ??= this.prepare();
    await this.ready;
    const name = `${this.run}-${this.next++}.json`;
    await writeFile(join(this.dir, name), JSON.stringify(value), { mode: 0o600 });
    return name;
  }

  async take(name: string): Promise<T> {
    const path = join(this.dir, name);
    const value = JSON.parse(await readFile(path, "utf8")) as T;
    await rm(path, { force: true });
    return value;
  }

  async discard(name: string): Promise<void> {
    await rm(join(this.dir, name), { force: true }).catch(() => {});
  }

  private async prepare(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    for (const name of await readdir(this.dir)) {
      if (!name.startsWith(`${this.run}-`)) await rm(join(this.dir, name), { force: true, recursive: true });
    }
    this.ready = Promise.resolve();
  }
}
