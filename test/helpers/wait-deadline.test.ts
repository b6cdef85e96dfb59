import { describe, expect, it } from "vitest";
import { startFakeOpenAI } from "../fakes/openai-server.js";
import { FakeTelegram } from "../fakes/telegram-server.js";
import { startFakeWhatsappServer } from "../fakes/whatsapp-server.js";
import { TestTransport } from "./test-transport.js";
import { waitWithDeadline } from "./wait-deadline.js";

describe("waitWithDeadline", () => {
  it("resolves with the value and unsubscribes, also when start settles at once", async () => {
    const unsubscribed: string[] = [];
    await expect(
      waitWithDeadline<number>("at once", 1_000, (resolve) => {
        resolve(1);
        return () => unsubscribed.push("at once");
      }),
    ).resolves.toBe(1);
    let wake: (value: number) => void = () => {};
    const later = waitWithDeadline<number>("later", 1_000, (resolve) => {
      wake = resolve;
      return () => unsubscribed.push("later");
    });
    wake(2);
    await expect(later).resolves.toBe(2);
    expect(unsubscribed).toEqual(["at once", "later"]);
  });

  it("rejects at the deadline naming what it waited for, as it stands then, and unsubscribes", async () => {
    let seen = 0;
    const unsubscribed: boolean[] = [];
    const wait = waitWithDeadline<void>(
      () => `3 things (${seen} so far)`,
      20,
      () => () => unsubscribed.push(true),
    );
    seen = 2;
    await expect(wait).rejects.toThrow("timed out after 20 ms waiting for 3 things (2 so far)");
    expect(unsubscribed).toEqual([true]);
  });

  it("passes on a rejection from start", async () => {
    await expect(
      waitWithDeadline<void>("x", 1_000, (_resolve, reject) => {
        reject(new Error("broken"));
        return () => {};
      }),
    ).rejects.toThrow("broken");
  });
});

describe("the fakes' waits fail by saying what did not happen", () => {
  it("the OpenAI fake: the request number and how many came", async () => {
    const fake = await startFakeOpenAI();
    try {
      await expect(fake.waitForRequest(2, { timeoutMs: 20 })).rejects.toThrow(
        "waiting for chat request #2 at the fake OpenAI server (0 arrived)",
      );
      await expect(fake.waitForModelsRequest(1, { timeoutMs: 20 })).rejects.toThrow(
        "waiting for GET /v1/models #1 at the fake OpenAI server (0 arrived)",
      );
    } finally {
      await fake.close();
    }
  });

  it("the Telegram fake: the label and the calls it saw", async () => {
    const tg = await FakeTelegram.start();
    try {
      await expect(tg.waitFor(() => false, "the reply to alice", { timeoutMs: 20 })).rejects.toThrow(
        /waiting for the reply to alice at the fake Telegram server; calls: none; 0 sent/,
      );
    } finally {
      await tg.close();
    }
  });

  it("the WhatsApp server and the test transport: the count wanted and the count so far", async () => {
    const server = await startFakeWhatsappServer();
    try {
      await expect(server.waitForConnections(1, { timeoutMs: 20 })).rejects.toThrow(
        "waiting for 1 connections (0 so far) at the fake WhatsApp server",
      );
    } finally {
      await server.close();
    }
    await expect(new TestTransport().waitForSent(1, { timeoutMs: 20 })).rejects.toThrow(
      "waiting for 1 sends through the test transport (0 so far)",
    );
  });
});
