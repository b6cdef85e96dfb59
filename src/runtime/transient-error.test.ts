import { describe, expect, it } from "vitest";
import { ClawdisError } from "../core/errors.js";
import { isTransientError, retryDelayMs } from "./transient-error.js";

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(code), { code });
}

describe("isTransientError", () => {
  it.each([
    ["a full disk", errno("ENOSPC"), true],
    ["a quota", errno("EDQUOT"), true],
    ["an I/O error", errno("EIO"), true],
    ["too many open files", errno("EMFILE"), true],
    ["the store lock held elsewhere", new ClawdisError("STORE_LOCKED", "locked"), true],
    ["a full journal", new ClawdisError("STATE_BUSY", "busy"), true],
    [
      "a full disk behind a wrapper",
      new ClawdisError("IO", "write failed", { cause: errno("ENOSPC") }),
      true,
    ],
    ["a refused session id", new ClawdisError("SESSION_ID_INVALID", "bad"), false],
    ["a bug", new TypeError("x is undefined"), false],
    ["a missing file", errno("ENOENT"), false],
    ["not an error", "ENOSPC", false],
    ["undefined", undefined, false],
  ])("%s → %s", (_label, error, expected) => {
    expect(isTransientError(error)).toBe(expected);
  });
});

describe("retryDelayMs", () => {
  it("doubles from 1 s and stops at 60 s", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map(retryDelayMs)).toEqual([
      1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000,
    ]);
  });
});
