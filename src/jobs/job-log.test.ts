import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { droppedLine, JobLog, readLogRange, trimPlan } from "./job-log.js";

describe("trimPlan: the bounded log's dropping rule", () => {
  it.each([
    [0, 100, undefined],
    [100, 100, undefined],
    [101, 100, { drop: 51, keep: 50 }],
    [250, 100, { drop: 200, keep: 50 }],
    [12, 5, { drop: 10, keep: 2 }],
  ] as [number, number, { drop: number; keep: number } | undefined][])(
    "%i bytes kept, limit %i: %j",
    (kept, limit, expected) => {
      expect(trimPlan(kept, limit)).toEqual(expected);
    },
  );
});

describe("JobLog", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-job-log-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps everything within the limit, in order", async () => {
    const log = new JobLog(join(dir, "jobs", "j1.log"), 100);
    log.write("one\n");
    log.write(Buffer.from("two\n"));
    await log.settled();
    expect(await readFile(log.path, "utf8")).toBe("one\ntwo\n");
  });

  it("past the limit drops the oldest bytes, keeps the newest half, and says how many were dropped in all", async () => {
    const log = new JobLog(join(dir, "j1.log"), 20);
    log.write("0123456789");
    log.write("abcdefghij");
    log.write("KLMNO");
    await log.settled();
    // 25 bytes kept > 20: the oldest 15 dropped, the last 10 kept.
    expect(await readFile(log.path, "utf8")).toBe(`${droppedLine(15, 20)}fghijKLMNO`);
    log.write("pqrstuvwxyz");
    await log.settled();
    // 10 + 11 = 21 > 20: 11 more dropped (26 in all), the last 10 kept.
    expect(await readFile(log.path, "utf8")).toBe(`${droppedLine(26, 20)}qrstuvwxyz`);
    expect(droppedLine(26, 20)).toBe(
      "[clawdis: the first 26 bytes of output were dropped; this log keeps at most the last 20 bytes]\n",
    );
  });

  it("readLogRange: a range from an offset, or the end", async () => {
    const log = new JobLog(join(dir, "j2.log"), 1000);
    log.write("hello world");
    await log.settled();
    expect(await readLogRange(log.path, 6, 3)).toBe("wor");
    expect(await readLogRange(log.path, undefined, 5)).toBe("world");
    expect(await readLogRange(log.path, 50, 5)).toBe("");
    expect(await readLogRange(join(dir, "missing.log"), undefined, 5)).toBe("");
  });
});
