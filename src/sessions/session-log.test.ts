import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLogger, type LogLine } from "../core/logger.js";
import { formatSessionLogLine } from "./log-line.js";
import { SECRET_MASK } from "./log-redact.js";
import { SESSION_LOG_FILES_PER_SLICE, SESSION_LOG_FLUSH_MS, SessionLogs } from "./session-log.js";

let dir: string;
const warnings: LogLine[] = [];
const logger = createLogger({ sink: (line) => warnings.push(line) });

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-session-log-"));
  warnings.length = 0;
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function logs(maxBytes?: number): SessionLogs {
  return new SessionLogs({
    secrets: () => ["planted-secret-1"],
    now: () => Date.parse("2026-12-06T21:00:00.000Z"),
    logger,
    ...(maxBytes !== undefined ? { maxBytes } : {}),
  });
}

describe("SessionLogs", () => {
  it("writes behind: nothing is on disk when `line` returns; after flush the lines are there in order", async () => {
    const path = join(dir, "s-1", "logs", "session.log");
    const writer = logs();
    const log = writer.at(path);
    log.line("turn", { n: 1 });
    log.line("tool", { n: 2 });
    // Checked synchronously: `line` returned without touching the disk.
    expect(existsSync(join(dir, "s-1"))).toBe(false);
    await writer.flush();
    log.line("model", { n: 3 });
    await writer.flush();
    expect((await readFile(path, "utf8")).split("\n")).toEqual([
      "2026-12-06T21:00:00.000Z turn n=1",
      "2026-12-06T21:00:00.000Z tool n=2",
      "2026-12-06T21:00:00.000Z model n=3",
      "",
    ]);
  });

  it("keeps every byte of lines past the first buffer, characters of several bytes included", async () => {
    const path = join(dir, "s-long", "logs", "session.log");
    const writer = logs();
    const log = writer.at(path);
    const expected: string[] = [];
    const now = new Date(Date.parse("2026-12-06T21:00:00.000Z")).toISOString();
    // The first line alone is several times the first buffer; then they grow a little at a time.
    for (let n = 0; n < 40; n++) {
      const fields = { n, text: "é🙂ß".repeat(n === 0 ? 600 : n * 7) };
      log.line("turn", fields);
      expected.push(formatSessionLogLine(now, "turn", fields, ["planted-secret-1"]));
    }
    await writer.flush();
    expect(await readFile(path, "utf8")).toBe(`${expected.join("\n")}\n`);
  });

  it("makes the session folder and logs/ 0700 and the log 0600", async () => {
    const folder = join(dir, "s-2");
    const writer = logs();
    writer.at(join(folder, "logs", "session.log")).line("turn", {});
    await writer.flush();
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    expect((await stat(join(folder, "logs"))).mode & 0o777).toBe(0o700);
    expect((await stat(join(folder, "logs", "session.log"))).mode & 0o777).toBe(0o600);
  });

  it("masks the secrets and redacts tool arguments with them", async () => {
    const path = join(dir, "s-3", "session.log");
    const writer = logs();
    const log = writer.at(path);
    log.line("tool", { args: log.redactArguments('{"command":"echo planted-secret-1"}') });
    await writer.flush();
    const text = await readFile(path, "utf8");
    expect(text).not.toContain("planted-secret-1");
    expect(text).toContain(SECRET_MASK);
  });

  it("rotates to session.log.1 before a write that would pass the limit, replacing the one before", async () => {
    const path = join(dir, "s-4", "session.log");
    const writer = logs(100);
    const log = writer.at(path);
    const line = (n: number) => {
      log.line("x", { n, pad: "p".repeat(40) });
      return writer.flush();
    };
    await line(1);
    await line(2);
    const first = await readFile(path, "utf8");
    expect(first.split("\n").filter(Boolean)).toHaveLength(1);
    await line(3);
    expect(await readFile(`${path}.1`, "utf8")).toBe(first.replace("n=1", "n=2"));
    expect(await readFile(path, "utf8")).toContain("n=3");
  });

  it("a log that cannot be written is warned about once and never throws", async () => {
    await writeFile(join(dir, "file"), "not a folder");
    const writer = logs();
    const log = writer.at(join(dir, "file", "logs", "session.log"));
    log.line("a", {});
    await writer.flush();
    log.line("b", {});
    await writer.flush();
    expect(warnings.filter((w) => w.message.includes("session log"))).toHaveLength(1);
  });

  describe("the timed pass", () => {
    afterEach(() => vi.useRealTimers());

    /** How many of `paths` have a log on disk. */
    const written = (paths: string[]) => paths.filter((p) => existsSync(p)).length;

    it("writes SESSION_LOG_FILES_PER_SLICE files per turn of the event loop, each file's lines in order across passes", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate"] });
      const writer = logs();
      const slice = SESSION_LOG_FILES_PER_SLICE;
      const count = 4 * slice + 2;
      const paths = Array.from({ length: count }, (_, i) => join(dir, `s-${i}`, "logs", "session.log"));
      for (const path of paths) writer.at(path).line("turn", { n: 1 });
      vi.advanceTimersByTime(SESSION_LOG_FLUSH_MS - 1);
      expect(written(paths)).toBe(0);
      vi.advanceTimersByTime(1);
      expect(written(paths)).toBe(slice);
      // A line given during the pass, for a file the pass has not reached: it waits for the next pass.
      const last = paths[count - 1] as string;
      writer.at(last).line("turn", { n: 2 });
      const steps = [written(paths)];
      while (written(paths) < count) {
        vi.runOnlyPendingTimers();
        steps.push(written(paths));
      }
      // One slice per turn of the event loop, the rest in the last.
      expect(steps).toEqual([slice, 2 * slice, 3 * slice, 4 * slice, count]);
      expect((await readFile(last, "utf8")).match(/n=\d/g)).toEqual(["n=1"]);
      vi.advanceTimersByTime(SESSION_LOG_FLUSH_MS);
      expect((await readFile(last, "utf8")).match(/n=\d/g)).toEqual(["n=1", "n=2"]);
    });

    it("flush during a pass writes what the pass still holds, then what came after, in order", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate"] });
      const writer = logs();
      const count = 3 * SESSION_LOG_FILES_PER_SLICE;
      const paths = Array.from({ length: count }, (_, i) => join(dir, `s-${i}`, "logs", "session.log"));
      for (const path of paths) writer.at(path).line("turn", { n: 1 });
      vi.advanceTimersByTime(SESSION_LOG_FLUSH_MS);
      expect(written(paths)).toBe(SESSION_LOG_FILES_PER_SLICE);
      const last = paths[count - 1] as string;
      writer.at(last).line("turn", { n: 2 });
      await writer.flush();
      expect(written(paths)).toBe(count);
      expect((await readFile(last, "utf8")).match(/n=\d/g)).toEqual(["n=1", "n=2"]);
    });
  });
});
