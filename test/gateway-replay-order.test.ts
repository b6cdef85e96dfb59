import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ReceiveResult } from "../src/plugin-api/types.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway } from "./helpers/gateway-harness.js";

/**
 * What the last run left open is answered before anything newer of its session (docs/runtime.md, Stopping and
 * restarting): a message a transport hands in while the gateway starts, before the replay is queued (plugins
 * start before the HTTP server listens, the replay is queued after), waits for the replay.
 */
describe("gateway: replay order at start", () => {
  let stateDir: string;
  let fake: FakeOpenAI;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-replay-order-"));
    fake = await startFakeOpenAI();
  });
  afterEach(async () => {
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it("a message handed in during start is answered after the replayed one of its session", async () => {
    const first = await startTestGateway({ stateDir, fake });
    fake.enqueue({ hang: "before-headers" });
    const left = await first.chat.inject({ text: "the old question" });
    await fake.waitForRequest(1);
    await first.close();
    expect((await done(left)).stopReason).toBe("aborted");

    fake.setDefault((body) => ({
      text: `answering: ${body.messages.filter((m) => m.role === "user").at(-1)?.content}`,
    }));
    let handedIn: Promise<ReceiveResult> | undefined;
    const second = await startTestGateway({
      stateDir,
      fake,
      listen: true,
      // A name, not an address: the listen waits for its lookup, and the new message is journaled meanwhile.
      config: { gateway: { bind: "localhost" } },
      chat: (chat) => {
        chat.onStart = () => {
          handedIn = chat.inject({ text: "the new question", messageId: "new-1" });
        };
      },
    });
    try {
      if (!handedIn) throw new Error("the transport was started without handing its message in");
      await done(await handedIn);
      await second.chat.waitForSent(2);
      expect(second.chat.textsTo("c-alice")).toEqual([
        "answering: the old question",
        "answering: the new question",
      ]);
    } finally {
      await second.close();
    }
  });
});
