import { describe, expect, it } from "vitest";
import { idleNotice } from "./choose-session.js";

describe("idleNotice", () => {
  it.each([
    [1, "(A new session began: nothing was said here for over 1 minute.)"],
    [2, "(A new session began: nothing was said here for over 2 minutes.)"],
    [60, "(A new session began: nothing was said here for over 60 minutes.)"],
    [0.5, "(A new session began: nothing was said here for over 0.5 minutes.)"],
  ])("after %s idle minutes: %s", (minutes, notice) => {
    expect(idleNotice(minutes)).toBe(notice);
  });
});
