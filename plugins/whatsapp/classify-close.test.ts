import { describe, expect, it } from "vitest";
import { classifyClose, RECONNECT_MAX_MS, reconnectDelay } from "./classify-close.js";

describe("classifyClose", () => {
  it.each([
    [408, "reconnect", "connection lost or timed out"],
    [428, "reconnect", "connection closed"],
    [500, "reconnect", "bad session"],
    [503, "reconnect", "WhatsApp unavailable"],
    [515, "reconnect", "restart required"],
    [undefined, "reconnect", "network error"],
    [499, "reconnect", "closed with status 499"],
    [401, "stop", "logged out"],
    [403, "stop", "forbidden"],
    [411, "stop", "multi-device mismatch"],
    [440, "stop", "replaced"],
  ] as const)("close %s: %s (%s)", (code, action, reason) => {
    const decision = classifyClose(code, 0, 0.5);
    expect(decision.action).toBe(action);
    expect(decision.reason).toBe(reason);
  });

  it("tells the person what to do when it stops", () => {
    for (const code of [401, 403, 411]) {
      const decision = classifyClose(code, 0, 0);
      expect(decision.action === "stop" && decision.message).toContain("clawdis login");
    }
    const replaced = classifyClose(440, 0, 0);
    expect(replaced.action === "stop" && replaced.message).toContain("another client");
  });

  it("reconnects at once when WhatsApp asks for a restart (515), after a backoff otherwise", () => {
    expect(classifyClose(515, 7, 0.9)).toMatchObject({ action: "reconnect", delayMs: 0 });
    expect(classifyClose(428, 0, 0)).toMatchObject({ action: "reconnect", delayMs: 500 });
    expect(classifyClose(undefined, 3, 1)).toMatchObject({ action: "reconnect", delayMs: 8_000 });
  });
});

describe("reconnectDelay", () => {
  it.each([
    [0, 0, 500],
    [0, 1, 1_000],
    [1, 0, 1_000],
    [2, 0.5, 3_000],
    [5, 1, 32_000],
    [6, 0, 30_000],
    [6, 1, 60_000],
    [1_000, 1, 60_000],
    [1_000, 0, 30_000],
  ])("attempt %d, random %d: %d ms", (attempt, random, expected) => {
    expect(reconnectDelay(attempt, random)).toBe(expected);
  });

  it("never exceeds the cap and never waits less than half the backoff, however many attempts", () => {
    for (let attempt = 0; attempt < 200; attempt++) {
      const low = reconnectDelay(attempt, 0);
      const high = reconnectDelay(attempt, 0.999_999);
      expect(high).toBeLessThanOrEqual(RECONNECT_MAX_MS);
      expect(low).toBeGreaterThanOrEqual(Math.min(RECONNECT_MAX_MS, 1_000 * 2 ** attempt) / 2 - 1);
    }
  });
});
