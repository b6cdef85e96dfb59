import { describe, expect, it } from "vitest";
import { healthLine } from "./health-line.js";

describe("healthLine", () => {
  it.each([
    ["starting", { phase: "starting", mode: "polling" }, "starting", "long polling; no last poll yet"],
    [
      "running",
      { phase: "running", mode: "polling", username: "b", lastOkAt: 7000 },
      "ok",
      "@b; long polling; last poll 3s ago",
    ],
    [
      "webhook",
      { phase: "running", mode: "webhook", username: "b", lastOkAt: 10_000 },
      "ok",
      "@b; webhook; last update 0s ago",
    ],
    [
      "409 is degraded",
      { phase: "conflict", mode: "polling", lastError: { message: "409", at: 0 } },
      "degraded",
      "long polling; no last poll yet; last error 10s ago: 409",
    ],
    [
      "offline is down, so replies wait",
      { phase: "offline", mode: "polling" },
      "down",
      "long polling; no last poll yet",
    ],
  ] as const)("%s", (_name, snapshot, state, detail) => {
    expect(healthLine(snapshot, 10_000)).toEqual({ state, detail });
  });

  it("adds the privacy mode note, short enough for a phone", () => {
    const { detail } = healthLine(
      { phase: "running", mode: "polling", username: "my_clawdis_bot", lastOkAt: 0, privacyMode: true },
      0,
    );
    expect(detail).toBe(
      "@my_clawdis_bot; long polling; last poll 0s ago; privacy mode on: in groups it sees only commands, mentions and replies",
    );
    expect(detail?.length).toBeLessThan(120);
  });
});
