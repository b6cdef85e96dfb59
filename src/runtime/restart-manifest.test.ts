import { existsSync } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../test/fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "../../test/helpers/gateway-harness.js";
import {
  parseRestartManifest,
  type RestartManifest,
  restartManifestPath,
  takeRestartManifest,
  writeRestartManifest,
} from "./restart-manifest.js";

const quiet = { warn: () => {} };

describe("restart manifest: the file", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-manifest-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("is written private and whole, read once, then gone", async () => {
    const manifest: RestartManifest = {
      version: 1,
      reason: "config change",
      at: 1_700_000_000_000,
      pid: 42,
      sessions: [
        { key: "main", busy: true },
        { key: "group:g1", busy: false },
      ],
    };
    await writeRestartManifest(dir, manifest);
    expect((await stat(restartManifestPath(dir))).mode & 0o777).toBe(0o600);
    expect(await takeRestartManifest(dir, quiet)).toEqual(manifest);
    expect(existsSync(restartManifestPath(dir))).toBe(false);
    expect(await takeRestartManifest(dir, quiet)).toBeUndefined();
  });

  it("one that is not usable is said, removed, and the start goes on without it", async () => {
    await writeFile(restartManifestPath(dir), "{ not json");
    const warnings: string[] = [];
    expect(await takeRestartManifest(dir, { warn: (m) => warnings.push(m) })).toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/restart manifest is not usable/)]);
    expect(existsSync(restartManifestPath(dir))).toBe(false);
  });

  it.each([
    ["[]", "not a JSON object"],
    ['{"version":2}', "version 2 is not 1"],
    ['{"version":1,"reason":"x","at":1,"pid":1,"sessions":[{"key":""}]}', "sessions[0].key is not a key"],
    ['{"version":1,"reason":"x","at":"soon","pid":1,"sessions":[]}', "at is not a time"],
  ])("parse %s: %s", (text, problem) => {
    expect(parseRestartManifest(text)).toBe(problem);
  });
});

/**
 * A start that finds a manifest (left by an in-process restart) loads the sessions it lists back before traffic,
 * shows the restart in /status, and leaves sessions it does not list cold.
 */
describe("gateway start with a restart manifest", () => {
  let stateDir: string;
  let fake: FakeOpenAI;
  const open: TestGateway[] = [];
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-manifest-gw-"));
    fake = await startFakeOpenAI();
  });
  afterEach(async () => {
    for (const t of open.splice(0)) await t.gateway.stop();
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it("warms the listed sessions, not the others, and /status says restarted 2m ago: config change", async () => {
    const first = await startTestGateway({ stateDir, fake });
    open.push(first);
    await done(await first.chat.inject({ text: "hello" }));
    await done(
      await first.chat.inject({ text: "in the group", chatType: "group", chatId: "g1", mentioned: true }),
    );
    await first.idle();
    const active = first.gateway.activeSessions().map((s) => s.key);
    expect(active.sort()).toEqual(["group:g1", "main"]);
    await first.gateway.stop();
    open.pop();

    // As the supervisor writes it before it stops the old gateway: 2 minutes and 5 seconds ago.
    await writeRestartManifest(stateDir, {
      version: 1,
      reason: "config change",
      at: Date.now() - 125_000,
      pid: process.pid,
      sessions: [{ key: "main", busy: false }],
    });
    const second = await startTestGateway({ stateDir, fake });
    open.push(second);
    expect(second.gateway.sessions.peek("main")?.tail?.entries.length).toBeGreaterThan(0);
    expect(second.gateway.sessions.peek("group:g1")).toBeUndefined();
    expect(existsSync(restartManifestPath(stateDir))).toBe(false);
    const status = await second.gateway.statusText("main");
    expect(status.split("\n")[1]).toBe("restarted 2m ago: config change");
    expect(second.logs.some((l) => l.message === "sessions loaded back after the restart")).toBe(true);
    // A start without a manifest says nothing of a restart.
    expect((await first.gateway.statusText("main")).includes("restarted")).toBe(false);
  });
});
