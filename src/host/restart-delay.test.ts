import { describe, expect, it } from "vitest";
import { ClawdisError } from "../core/errors.js";
import { DEFAULT_RESTART_POLICY, isFatalPluginError, restartDelay } from "./restart-delay.js";

const boom = new Error("connection reset");

describe("restartDelay", () => {
  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [4, 8_000],
    [8, 128_000],
    [9, 256_000],
    [10, 300_000],
    [50, 300_000],
    [5_000, 300_000],
    [0, 1_000],
    [-3, 1_000],
    [Number.NaN, 1_000],
    [2.7, 2_000],
  ])("attempt %s waits %s ms", (attempt, expected) => {
    expect(restartDelay(boom, attempt)).toBe(expected);
  });

  it.each<[string, unknown]>([
    ["PLUGIN_INVALID", new ClawdisError("PLUGIN_INVALID", "bad plugin")],
    ["UNAUTHORIZED", new ClawdisError("UNAUTHORIZED", "token revoked")],
    ["CONFIG_INVALID", new ClawdisError("CONFIG_INVALID", "botToken missing")],
    ["fatal: true", Object.assign(new Error("logged out"), { fatal: true })],
    ["a plain object with fatal: true", { fatal: true, message: "x" }],
    ["a fatal cause", new Error("wrapper", { cause: new ClawdisError("UNAUTHORIZED", "401") })],
    [
      "another copy of ClawdisError",
      Object.assign(new Error("x"), { name: "ClawdisError", code: "PLUGIN_INVALID" }),
    ],
  ])("%s is not restarted", (_label, error) => {
    expect(restartDelay(error, 1)).toBeNull();
    expect(isFatalPluginError(error)).toBe(true);
  });

  it.each<[string, unknown]>([
    ["a plain Error", boom],
    ["a string", "oops"],
    ["undefined", undefined],
    ["null", null],
    ["fatal: false", Object.assign(new Error("x"), { fatal: false })],
    ["fatal: 'yes' (not true)", { fatal: "yes" }],
    ["PLUGIN_FAILED", new ClawdisError("PLUGIN_FAILED", "crashed")],
    ["PLUGIN_START_TIMEOUT", new ClawdisError("PLUGIN_START_TIMEOUT", "slow")],
  ])("%s is restarted", (_label, error) => {
    expect(restartDelay(error, 1)).toBe(1_000);
  });

  it("stops following a cyclic cause chain", () => {
    const a: { cause?: unknown } = {};
    const b = { cause: a };
    a.cause = b;
    expect(restartDelay(a, 1)).toBe(1_000);
  });

  it.each([
    [0, 4_000],
    [0.5, 3_000],
    [0.999, 2_002],
  ])("with jitter 0.5 and random() = %s, attempt 3 waits %s ms", (random, expected) => {
    const policy = { ...DEFAULT_RESTART_POLICY, jitter: 0.5, random: () => random };
    expect(restartDelay(boom, 3, policy)).toBe(expected);
  });

  it("never exceeds the cap with jitter, and ignores random() without it", () => {
    const jittered = { ...DEFAULT_RESTART_POLICY, jitter: 1, random: () => 0 };
    expect(restartDelay(boom, 99, jittered)).toBe(300_000);
    const noJitter = { ...DEFAULT_RESTART_POLICY, random: () => 0.9 };
    expect(restartDelay(boom, 2, noJitter)).toBe(2_000);
  });

  it("honours a custom base and cap", () => {
    const policy = { ...DEFAULT_RESTART_POLICY, initialDelayMs: 100, maxDelayMs: 500 };
    expect([1, 2, 3, 4, 5].map((n) => restartDelay(boom, n, policy))).toEqual([100, 200, 400, 500, 500]);
  });
});
