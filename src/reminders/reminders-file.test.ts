import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger, type LogLine } from "../core/logger.js";
import { nextReminderId, parseRemindersText } from "./reminder.js";
import { RemindersFile, remindersPath } from "./reminders-file.js";

const NOW = Date.parse("2026-12-06T10:00:00Z");

describe("parseRemindersText: each entry is used or reported, never the file dropped", () => {
  it.each([
    [{ id: "a", text: "x", at: "2026-12-24T09:00" }, undefined],
    [{ id: "a", text: "x", cron: "0 9 * * *", createdAt: "2026-12-01T00:00:00Z" }, undefined],
    [{ text: "x", at: "2026-12-24T09:00" }, /id must be/],
    [{ id: "a b", text: "x", at: "2026-12-24T09:00" }, /id must be/],
    [{ id: "a", at: "2026-12-24T09:00" }, /text must be/],
    [{ id: "a", text: "x" }, /exactly one of at or cron/],
    [{ id: "a", text: "x", at: "2026-12-24T09:00", cron: "0 9 * * *" }, /exactly one of at or cron/],
    [{ id: "a", text: "x", at: "next week" }, /at must be an ISO time/],
    [{ id: "a", text: "x", cron: "0 25 * * *", createdAt: "2026-12-01T00:00:00Z" }, /not a cron expression/],
    [{ id: "a", text: "x", cron: "0 9 * * *" }, /needs createdAt/],
    [{ id: "a", text: "x", at: "2026-12-24T09:00", route: { channel: "t" } }, /route must be/],
    [{ id: "a", text: "x", at: "2026-12-24T09:00", setBy: { authority: "boss" } }, /setBy must be/],
    [{ id: "a", text: "x", at: "2026-12-24T09:00", tools: "bash" }, /tools must be/],
    ["just a string", /must be an object/],
  ])("%j → %s", (entry, why) => {
    const parsed = parseRemindersText(JSON.stringify({ version: 1, reminders: [entry] }), "UTC", NOW);
    if ("unusable" in parsed) throw new Error(parsed.unusable);
    if (why === undefined) {
      expect(parsed.bad).toEqual([]);
      expect(parsed.reminders).toHaveLength(1);
    } else {
      expect(parsed.reminders).toEqual([]);
      expect(parsed.bad).toEqual([expect.objectContaining({ index: 0, why: expect.stringMatching(why) })]);
    }
  });

  it("a second entry with the same id is reported, the first kept", () => {
    const parsed = parseRemindersText(
      JSON.stringify({
        reminders: [
          { id: "a", text: "one", at: "2026-12-24T09:00Z" },
          { id: "a", text: "two", at: "2026-12-25T09:00Z" },
        ],
      }),
      "UTC",
      NOW,
    );
    if ("unusable" in parsed) throw new Error(parsed.unusable);
    expect(parsed.reminders.map((r) => r.text)).toEqual(["one"]);
    expect(parsed.bad).toEqual([{ index: 1, id: "a", why: "an earlier entry has the same id" }]);
  });

  it.each([
    ["{", /not JSON/],
    ["[]", /is not \{"version": 1/],
    [JSON.stringify({ version: 2, reminders: [] }), /version 2/],
  ])("%j is unusable as a whole", (text, why) => {
    expect(parseRemindersText(text, "UTC", NOW)).toEqual({ unusable: expect.stringMatching(why) });
  });

  it("new ids count up from the largest r<n>", () => {
    expect(nextReminderId([])).toBe("r1");
    expect(nextReminderId([{ id: "r2" }, { id: "r10" }, { id: "zz" }, "bad"])).toBe("r11");
  });
});

describe("RemindersFile: <state>/reminders.json", () => {
  let dir: string;
  let lines: LogLine[];
  let file: RemindersFile;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-reminders-"));
    lines = [];
    file = new RemindersFile({
      path: remindersPath(dir),
      timeZone: () => "UTC",
      now: () => NOW,
      logger: createLogger({ sink: (line) => lines.push(line) }),
    });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("adds (0600, atomically written), marks fired, removes", async () => {
    const a = await file.add({ text: "tea", when: { at: NOW + 60_000 } });
    const b = await file.add({ text: "standup", when: { cron: "0 9 * * *" } });
    expect([a.id, b.id]).toEqual(["r1", "r2"]);
    expect((await stat(file.path)).mode & 0o777).toBe(0o600);
    await file.markFired("r2", NOW, Date.parse("2026-12-07T09:00:00Z"));
    await file.markFired("r1", NOW, NOW + 60_000);
    const read = await file.read();
    if (read.state !== "ok") throw new Error(read.state);
    expect(read.reminders.map((r) => [r.id, r.lastFired])).toEqual([
      ["r2", Date.parse("2026-12-07T09:00:00Z")],
    ]);
    expect(await file.remove("r2")).toBe(true);
    expect(await file.remove("r2")).toBe(false);
    expect(JSON.parse(await readFile(file.path, "utf8"))).toEqual({ version: 1, reminders: [] });
  });

  it("a change keeps a bad entry as it is; markFired leaves a newer reminder of the same id alone", async () => {
    const bad = { id: "oops", text: "no time" };
    await writeFile(
      file.path,
      JSON.stringify({ version: 1, reminders: [bad, { id: "r1", text: "x", at: "2026-12-24T09:00Z" }] }),
    );
    await file.add({ text: "y", when: { at: NOW + 1000 } });
    await file.markFired("r1", NOW - 1, Date.parse("2026-12-24T09:00Z"));
    const raw = JSON.parse(await readFile(file.path, "utf8")) as { reminders: { id: string }[] };
    expect(raw.reminders[0]).toEqual(bad);
    expect(raw.reminders.map((r) => r.id)).toEqual(["oops", "r1", "r2"]);
    // The bad entry can be removed by its id.
    expect(await file.remove("oops")).toBe(true);
  });

  it("a file that does not parse is set aside when a reminder is added, never overwritten", async () => {
    await writeFile(file.path, '{"version": 1, "reminders": [');
    await expect(file.remove("r1")).rejects.toThrow(/does not parse/);
    expect(await readFile(file.path, "utf8")).toBe('{"version": 1, "reminders": [');
    await file.add({ text: "fresh", when: { at: NOW + 1000 } });
    const names = await readdir(dir);
    const aside = names.find((n) => n.startsWith("reminders.json.bad-"));
    expect(aside).toBeDefined();
    expect(await readFile(join(dir, aside ?? ""), "utf8")).toBe('{"version": 1, "reminders": [');
    expect(lines.map((l) => l.message)).toEqual([expect.stringMatching(/does not parse.*set aside as/)]);
  });

  it("readSettingAside sets aside a file that does not parse (the gateway's start)", async () => {
    await writeFile(file.path, "not json");
    expect(await file.readSettingAside()).toEqual({ state: "missing" });
    expect((await readdir(dir)).filter((n) => n.startsWith("reminders.json.bad-"))).toHaveLength(1);
  });
});
