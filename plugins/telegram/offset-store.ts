import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writePrivateFile } from "../../src/plugin-api/index.js";

/**
 * The next update id to ask Telegram for, kept in `<pluginStateDir>/update-offset.json`. Written (atomically,
 * 0600) only after the gateway's `receive` resolved for the update before it, so an update the journal does not
 * hold is asked for again after a crash, and one it holds is skipped (or deduped by the gateway).
 */
export class OffsetStore {
  readonly path: string;
  constructor(pluginStateDir: string) {
    this.path = join(pluginStateDir, "update-offset.json");
  }

  /** The saved offset; undefined when there is none or the file is not one this store wrote. */
  async read(): Promise<number | undefined> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch {
      return undefined;
    }
    try {
      const value = (JSON.parse(text) as { offset?: unknown }).offset;
      return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
    } catch {
      return undefined;
    }
  }

  async write(offset: number): Promise<void> {
    await writePrivateFile(this.path, `${JSON.stringify({ version: 1, offset })}\n`);
  }
}
