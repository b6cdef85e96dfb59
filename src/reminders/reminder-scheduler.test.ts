import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { createLogger, type LogLine } from "../core/logger.js";
import type { Reminder } from "./reminder.js";
import { ReminderScheduler } from "./reminder-scheduler.js";
import { RemindersFile, remindersPath } from "./reminders-file.js";
import type { Firing } from "./schedule.js";

const START = Date.parse("2026-12-06T10:00:00Z");

describe("ReminderScheduler: fires what is due from the file, once, with an injected clock", () => {
  let dir: string;
  let clock: ManualClock;
  let file: RemindersFile;
  let fired: { id: string; firing: Firing }[];
  let lines: LogLine[];
  let scheduler: ReminderScheduler;
  let fail: boolean;

  function make(startedAt = START): ReminderScheduler {
    return new ReminderScheduler({
      file,
      clock,
      startedAt,
      timeZone: () => "UTC",
      logger: createLogger({ sink: (line) => lines.push(line) }),
      lookEveryMs: 30_000,
      fire: async (reminder: Reminder, firing: Firing) => {
        if (fail) throw new Error("journal write failed");
        fired.push({ id: reminder.id, firing });
      },
    });
  }

  /** Moves the clock and waits for the look it starts to end. */
  async function advanceAndSettle(ms: number): Promise<void> {
    clock.advance(ms);
    await scheduler.idle();
  }

  async function entries(): Promise<{ id: string; lastFired?: string }[]> {
    return (JSON.parse(await readFile(file.path, "utf8")) as { reminders: { id: string }[] }).reminders;
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-scheduler-"));
    clock = new ManualClock(START);
    file = new RemindersFile({ path: remindersPath(dir), timeZone: () => "UTC", now: () => clock.now() });
    fired = [];
    lines = [];
    fail = false;
  });
  afterEach(async () => {
    await scheduler?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("a reminder a few seconds ahead fires once at its time, then is gone from the file", async () => {
    await file.add({ text: "tea", when: { at: START + 5000 } });
    scheduler = make();
    await scheduler.start();
    await advanceAndSettle(4999);
    expect(fired).toEqual([]);
    await advanceAndSettle(1);
    expect(fired).toEqual([
      { id: "r1", firing: { id: "r1", slot: START + 5000, late: false, missedEarlier: false } },
    ]);
    expect(await entries()).toEqual([]);
  });

  it("what came due while the gateway was down fires once at start, late; a repeat's missed slots once", async () => {
    await writeFile(
      file.path,
      JSON.stringify({
        version: 1,
        reminders: [
          { id: "gone", text: "x", at: "2026-12-06T03:00:00Z" },
          { id: "hourly", text: "y", cron: "0 * * * *", createdAt: "2026-12-06T01:30:00Z" },
        ],
      }),
    );
    // Started just after the 10:00 slot: it came due while the gateway was down.
    scheduler = make(START + 500);
    clock.set(START + 1000);
    await scheduler.start();
    expect(fired.map((f) => [f.id, f.firing.slot, f.firing.late, f.firing.missedEarlier])).toEqual([
      ["gone", Date.parse("2026-12-06T03:00:00Z"), true, false],
      ["hourly", Date.parse("2026-12-06T10:00:00Z"), true, true],
    ]);
    expect(await entries()).toEqual([
      expect.objectContaining({ id: "hourly", lastFired: "2026-12-06T10:00:00.000Z" }),
    ]);
    // Started again on the same file: nothing is due any more.
    await scheduler.stop();
    scheduler = make(START + 2000);
    await scheduler.start();
    expect(fired).toHaveLength(2);
  });

  it("a firing that could not be handed in stays due and is tried at the next look", async () => {
    await file.add({ text: "tea", when: { at: START + 1000 } });
    fail = true;
    scheduler = make();
    await scheduler.start();
    await advanceAndSettle(1000);
    expect(fired).toEqual([]);
    expect(lines.map((l) => l.message)).toContainEqual(expect.stringMatching(/r1 could not be handed/));
    fail = false;
    await scheduler.stop();
    scheduler = make();
    await scheduler.start();
    expect(fired.map((f) => f.id)).toEqual(["r1"]);
  });

  it("a hand edit is picked up at the next look; a bad entry is logged once and skipped", async () => {
    scheduler = make();
    await scheduler.start();
    await writeFile(
      file.path,
      JSON.stringify({
        version: 1,
        reminders: [
          { id: "hand", text: "by hand", at: "2026-12-06T10:00:10Z" },
          { id: "broken", text: "no time" },
        ],
      }),
    );
    await advanceAndSettle(30_000);
    expect(fired.map((f) => f.id)).toEqual(["hand"]);
    await scheduler.stop();
    scheduler = make();
    await scheduler.start();
    await advanceAndSettle(30_000);
    const warnings = lines.filter((l) => l.level === "warn").map((l) => l.message);
    expect(warnings).toEqual([
      "reminders: entry 2 (broken): give exactly one of at or cron",
      "reminders: entry 1 (broken): give exactly one of at or cron",
    ]);
  });

  it("poke looks at once: a reminder added through the gateway is scheduled for its own time", async () => {
    scheduler = make();
    await scheduler.start();
    await file.add({ text: "soon", when: { at: START + 2000 } });
    scheduler.poke();
    await advanceAndSettle(2000);
    expect(fired.map((f) => f.id)).toEqual(["r1"]);
  });

  it("nothing fires before start (a one-shot in-process gateway adds, it does not fire)", async () => {
    await file.add({ text: "due", when: { at: START - 1000 } });
    scheduler = make();
    scheduler.poke();
    await scheduler.idle();
    expect(fired).toEqual([]);
    await scheduler.start();
    expect(fired.map((f) => f.id)).toEqual(["r1"]);
  });
});
