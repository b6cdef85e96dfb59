import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { maintenanceSchema } from "../core/config-schema.js";
import { createMemoryLogger } from "../core/logger.js";
import { runCleanup } from "../sessions/session-cleanup.js";
import { SessionStore } from "../sessions/store.js";
import type { SessionMap } from "../sessions/types.js";
import {
  configuredLimits,
  DEFAULT_LIMITS,
  type MaintenanceConfig,
  SessionUpkeep,
  UPKEEP_EVERY_MS,
} from "./session-upkeep.js";

const DAY = 24 * 60 * 60 * 1000;

describe("configuredLimits", () => {
  it("the defaults are the schema's (without maintenance, `sessions cleanup` takes them)", () => {
    const { mode: _mode, ...limits } = maintenanceSchema.parse({});
    expect(DEFAULT_LIMITS).toEqual(limits);
    expect(configuredLimits(undefined)).toEqual(limits);
    expect(configuredLimits({ mode: "enforce", pruneAfterDays: 3, maxEntries: 9, maxDiskMb: 1 })).toEqual({
      pruneAfterDays: 3,
      maxEntries: 9,
      maxDiskMb: 1,
    });
  });
});

describe("session upkeep on real files", () => {
  let dir: string;
  let store: SessionStore;
  const clock = new ManualClock(Date.parse("2026-06-01T12:00:00Z"));
  const { logger, lines } = createMemoryLogger();

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-upkeep-"));
    store = new SessionStore({ path: join(dir, "sessions.json"), logger, clock });
    lines.length = 0;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function session(key: string, id: string, daysAgo: number) {
    const at = clock.now() - daysAgo * DAY;
    await writeFile(
      join(dir, `${id}.jsonl`),
      `${JSON.stringify({ type: "session", id, sessionKey: key })}\n`,
    );
    await mkdir(join(dir, id, "logs"), { recursive: true });
    await writeFile(join(dir, id, "logs", "session.log"), "a line\n");
    return { sessionId: id, updatedAt: at, lastInteractionAt: at };
  }

  async function writeStore(map: SessionMap) {
    await writeFile(join(dir, "sessions.json"), `${JSON.stringify(map, null, 2)}\n`);
  }

  const deps = (inUse: (key: string) => boolean = () => false) => ({
    store,
    primaryKey: "main",
    limits: { pruneAfterDays: 30 },
    now: clock.now(),
    inUse,
    logger,
  });

  it("archives the entry's transcript and folder, and keeps the removed entry in archive/pruned.jsonl", async () => {
    await writeStore({ main: await session("main", "m", 90), old: await session("old", "o", 40) });
    const report = await runCleanup(deps(), "archive");
    expect(report.pruned.map((p) => [p.key, p.done])).toEqual([["old", "archived"]]);
    expect(Object.keys(await store.load())).toEqual(["main"]);
    expect(existsSync(join(dir, "archive", "o.jsonl"))).toBe(true);
    expect(existsSync(join(dir, "archive", "o", "logs", "session.log"))).toBe(true);
    expect(existsSync(join(dir, "o.jsonl"))).toBe(false);
    const kept = JSON.parse((await readFile(join(dir, "archive", "pruned.jsonl"), "utf8")).trim());
    expect(kept).toMatchObject({ key: "old", reason: "stale", entry: { sessionId: "o" } });
  });

  it("skips a session that came into use between the plan and its update, and files another key still uses", async () => {
    const shared = await session("old", "shared", 40);
    await writeStore({
      main: await session("main", "m", 1),
      busy: await session("busy", "b", 40),
      old: shared,
      alias: { ...shared, lastInteractionAt: clock.now(), updatedAt: clock.now() },
    });
    let planned = false;
    // In use only once the plan is made: the check under the store's lock finds it.
    const report = await runCleanup(
      deps((key) => {
        if (key !== "busy") return false;
        const now = planned;
        planned = true;
        return now;
      }),
      "archive",
    );
    expect(report.pruned.map((p) => [p.key, p.done])).toEqual([
      ["busy", "skipped"],
      ["old", "archived"],
    ]);
    expect(Object.keys(await store.load()).sort()).toEqual(["alias", "busy", "main"]);
    expect(existsSync(join(dir, "b.jsonl"))).toBe(true);
    // `alias` points at the same session id: its files stay.
    expect(existsSync(join(dir, "shared.jsonl"))).toBe(true);
  });

  it("warn logs what would go and changes nothing; enforce prunes at start and again a day later", async () => {
    await writeStore({ main: await session("main", "m", 1), old: await session("old", "o", 40) });
    let maintenance: MaintenanceConfig = { mode: "warn", pruneAfterDays: 30, maxEntries: 500 };
    const upkeep = new SessionUpkeep({
      store,
      clock,
      logger,
      maintenance: () => maintenance,
      primaryKey: () => "main",
      inUse: () => false,
    });
    upkeep.start();
    clock.advance(0);
    await upkeep.cleanup("dry-run", {}); // runs after the start pass: the pass is over
    expect(lines.some((l) => l.level === "warn" && l.message.includes("would prune"))).toBe(true);
    expect(Object.keys(await store.load()).sort()).toEqual(["main", "old"]);

    maintenance = { mode: "enforce", pruneAfterDays: 30, maxEntries: 500 };
    await writeStore({ ...(await store.load()), later: await session("later", "l", 29) });
    clock.advance(UPKEEP_EVERY_MS);
    await upkeep.cleanup("dry-run", {});
    // `later` was 29 days old at the pass a day later: 30 days, not more.
    expect(Object.keys(await store.load()).sort()).toEqual(["later", "main"]);
    expect(existsSync(join(dir, "archive", "o.jsonl"))).toBe(true);
    await upkeep.stop();
  });
});
