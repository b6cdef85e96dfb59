import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isClawdisError } from "../core/errors.js";
import { isValidSessionId, newSessionId, SESSION_ID_PATTERN } from "./session-id.js";
import { transcriptPathFor } from "./session-paths.js";

describe("session ids", () => {
  it("accepts ids made of letters, digits, '.', '_' and '-'", () => {
    for (const id of ["main-1", "a", "A.b_c-9", "x".repeat(128), "..", newSessionId()]) {
      expect(isValidSessionId(id), id).toBe(true);
      expect(transcriptPathFor("/store", id)).toBe(join("/store", `${id}.jsonl`));
    }
  });

  it.each([
    ["../../x", /path separator/],
    ["a/b", /path separator/],
    ["a\\b", /path separator/],
    ["", /empty/],
    ["x".repeat(129), /129 characters/],
    ["a\0b", /NUL/],
    ["a b", /characters other than/],
  ])("refuses %j with a reason", (id, why) => {
    expect(isValidSessionId(id)).toBe(false);
    let thrown: unknown;
    try {
      transcriptPathFor("/store", id);
    } catch (error) {
      thrown = error;
    }
    expect(isClawdisError(thrown, "SESSION_ID_INVALID")).toBe(true);
    const message = (thrown as Error).message;
    expect(message).toMatch(why);
    expect(message).toContain(JSON.stringify(id.length > 60 ? `${id.slice(0, 60)}…` : id));
  });

  it("refuses values that are not strings", () => {
    expect(isValidSessionId(undefined)).toBe(false);
    expect(isValidSessionId(42)).toBe(false);
  });

  it("mints fresh ids that match the pattern", () => {
    const a = newSessionId();
    expect(a).toMatch(SESSION_ID_PATTERN);
    expect(newSessionId()).not.toBe(a);
  });
});
