import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../core/logger.js";
import { defaultStorePath, type Env, legacyStorePath } from "../core/paths.js";
import { migrateLegacyStore } from "./legacy-store.js";

let state: string;
let env: Env;

beforeEach(async () => {
  state = await mkdtemp(join(tmpdir(), "clawdis-legacy-"));
  env = { CLAWDIS_STATE_DIR: state, HOME: state };
});

afterEach(async () => {
  await rm(state, { recursive: true, force: true });
});

const legacyText = `${JSON.stringify({ main: { sessionId: "old", updatedAt: 1 } }, null, 2)}\n`;

describe("migrateLegacyStore", () => {
  it("moves the legacy store to the new path with one info line", async () => {
    await writeFile(legacyStorePath(env), legacyText);
    const { logger, lines } = createMemoryLogger();
    expect(await migrateLegacyStore(env, logger, defaultStorePath(env))).toBe("moved");
    expect(await readFile(defaultStorePath(env), "utf8")).toBe(legacyText);
    expect(await readdir(state)).not.toContain("sessions.json");
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe("info");
    expect(lines[0]?.message).toContain(legacyStorePath(env));
    expect(lines[0]?.message).toContain(defaultStorePath(env));
    // Done once: a second start finds nothing to move.
    expect(await migrateLegacyStore(env, logger, defaultStorePath(env))).toBe("none");
    expect(lines).toHaveLength(1);
  });

  it("touches neither file when both exist, and warns once", async () => {
    const currentText = `${JSON.stringify({ main: { sessionId: "new", updatedAt: 2 } }, null, 2)}\n`;
    await writeFile(legacyStorePath(env), legacyText);
    await mkdir(join(state, "sessions"));
    await writeFile(defaultStorePath(env), currentText);
    const { logger, lines } = createMemoryLogger();
    expect(await migrateLegacyStore(env, logger, defaultStorePath(env))).toBe("kept-both");
    expect(await readFile(legacyStorePath(env), "utf8")).toBe(legacyText);
    expect(await readFile(defaultStorePath(env), "utf8")).toBe(currentText);
    expect(lines.map((l) => l.level)).toEqual(["warn"]);
    expect(lines[0]?.message).toContain(legacyStorePath(env));
  });

  it("does nothing without a legacy store, or when the configured store is the legacy path", async () => {
    const { logger, lines } = createMemoryLogger();
    expect(await migrateLegacyStore(env, logger, defaultStorePath(env))).toBe("none");
    await writeFile(legacyStorePath(env), legacyText);
    expect(await migrateLegacyStore(env, logger, legacyStorePath(env))).toBe("none");
    expect(await readFile(legacyStorePath(env), "utf8")).toBe(legacyText);
    expect(lines).toHaveLength(0);
  });
});
