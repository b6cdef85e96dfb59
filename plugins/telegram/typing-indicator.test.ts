import { describe, expect, it } from "vitest";
import { type Timers, TYPING_RENEW_MS, TypingIndicator } from "./typing-indicator.js";

/** Timers the test fires by hand. */
function manualTimers(): Timers & { fire(): void; intervals: Map<number, { cb: () => void; ms: number }> } {
  const intervals = new Map<number, { cb: () => void; ms: number }>();
  let next = 1;
  return {
    intervals,
    setInterval: (cb, ms) => {
      intervals.set(next, { cb, ms });
      return next++;
    },
    clearInterval: (handle) => intervals.delete(handle as number),
    fire: () => {
      for (const { cb } of intervals.values()) cb();
    },
  };
}

describe("TypingIndicator", () => {
  it("sends typing at the start, every 4 s while the turn runs, and nothing after its end", () => {
    const sent: string[] = [];
    const timers = manualTimers();
    const typing = new TypingIndicator(
      async (chatId) => sent.push(chatId),
      () => {},
      timers,
    );
    typing.start("t1", "chat");
    expect(sent).toEqual(["chat"]);
    expect([...timers.intervals.values()].map((i) => i.ms)).toEqual([TYPING_RENEW_MS]);
    timers.fire();
    timers.fire();
    expect(sent).toEqual(["chat", "chat", "chat"]);
    typing.stop("t1");
    timers.fire();
    expect(sent).toHaveLength(3);
    expect(typing.active).toBe(0);
  });

  it("stopAll ends every indicator; a failed chat action is reported, not thrown", async () => {
    const errors: string[] = [];
    const timers = manualTimers();
    const typing = new TypingIndicator(
      async () => Promise.reject(new Error("403")),
      (chatId) => errors.push(chatId),
      timers,
    );
    typing.start("a", "1");
    typing.start("b", "2");
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual(["1", "2"]);
    typing.stopAll();
    expect(timers.intervals.size).toBe(0);
  });
});
