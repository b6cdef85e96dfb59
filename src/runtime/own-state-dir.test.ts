import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.js";
import { ownForAgent, ownForGateway, whenHeld } from "./own-state-dir.js";
import { StateLock } from "./state-lock.js";

describe("whenHeld", () => {
  it.each([
    ["gateway", "gateway", "refuse"],
    ["gateway", "agent", "wait"],
    ["agent", "gateway", "use-gateway"],
    ["agent", "agent", "wait"],
  ] as const)("%s finding %s → %s", (me, holder, verdict) => {
    expect(whenHeld(me, holder)).toBe(verdict);
  });
});

describe("owning the state directory", () => {
  let dir: string;
  let now = 0;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-own-"));
    now = 0;
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a second gateway is refused, naming the first one's pid and port", async () => {
    const first = await ownForGateway(dir, 18789, {
      now: () => now,
      sleep: async () => {},
      logger: silentLogger,
    });
    await expect(
      ownForGateway(dir, 18790, { now: () => now, sleep: async () => {}, logger: silentLogger }),
    ).rejects.toThrow(
      new RegExp(`a gateway \\(pid ${process.pid}, port 18789\\) already runs on the state directory`),
    );
    await first.release();
  });

  it("a gateway waits for a one-shot agent to finish, then takes over", async () => {
    const agent = await StateLock.tryAcquire(dir, { kind: "agent", now: 0 });
    if (!agent.ok) throw new Error("not taken");
    let slept = 0;
    const lock = await ownForGateway(dir, 1, {
      now: () => now,
      sleep: async () => {
        slept++;
        if (slept === 3) await agent.lock.release();
      },
      logger: silentLogger,
    });
    expect(slept).toBe(3);
    expect(lock.info.kind).toBe("gateway");
    await lock.release();
  });

  it("an agent finding a gateway is told to use it; finding an agent it waits, then gives up", async () => {
    const gateway = await ownForGateway(dir, 1, {
      now: () => now,
      sleep: async () => {},
      logger: silentLogger,
    });
    expect(
      await ownForAgent(dir, { now: () => now, sleep: async () => {}, logger: silentLogger }, 1000),
    ).toMatchObject({
      gateway: { kind: "gateway", pid: process.pid },
    });
    await gateway.release();
    const other = await StateLock.tryAcquire(dir, { kind: "agent", now: 0 });
    if (!other.ok) throw new Error("not taken");
    await expect(
      ownForAgent(
        dir,
        {
          now: () => now,
          sleep: async (ms) => {
            now += ms;
          },
          logger: silentLogger,
        },
        1000,
      ),
    ).rejects.toThrow(/still uses .* after 1 s/);
    await other.lock.release();
  });
});
