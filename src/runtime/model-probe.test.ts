import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../test/fakes/openai-server.js";
import { systemClock } from "../core/clock.js";
import { defaultConfig } from "../core/config-schema.js";
import { createMemoryLogger } from "../core/logger.js";
import { ModelProbe } from "./model-probe.js";

/** The endpoint check on its own (the gateway's tests cover it through /status, reloads and the stop). */
describe("ModelProbe", () => {
  let fake: FakeOpenAI;
  beforeEach(async () => {
    fake = await startFakeOpenAI();
  });
  afterEach(async () => {
    fake.releaseModels();
    await fake.close();
  });

  const probe = (checkSeconds: number) => {
    const { logger, lines } = createMemoryLogger();
    const agent = { ...defaultConfig().inbound.reply.agent, baseUrl: fake.url, model: "fake-model" };
    return { probe: new ModelProbe(agent, {}, systemClock, logger, 0, checkSeconds), lines };
  };

  it("a check that gets no answer within its deadline ends, as unreachable, and says so once", async () => {
    fake.hangModels = true;
    const { probe: p, lines } = probe(0.05);
    await p.refresh();
    expect(p.snapshot()).toMatchObject({
      reachable: false,
      error: expect.stringContaining("did not answer in time"),
    });
    expect(lines.filter((line) => line.message === "model endpoint check failed")).toHaveLength(1);
  });

  it("a stopped probe ends its check, records nothing, and starts no other", async () => {
    fake.hangModels = true;
    const { probe: p, lines } = probe(600);
    const check = p.refresh();
    await fake.waitForModelsRequest(1);
    await p.stop();
    await check;
    expect(p.snapshot().reachable).toBeNull();
    expect(lines).toEqual([]);
    await p.refresh();
    expect(fake.modelRequests).toHaveLength(1);
  });
});
