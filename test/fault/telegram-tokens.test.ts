import { describe, expect, it } from "vitest";
import { audit, splitTwice } from "./telegram-tokens.js";

describe("splitTwice: what the Bot API knew at each kill", () => {
  // Gateway 1 up at 0, killed at 100; gateway 2 up at 400, killed at 900; gateway 3 up at 1300.
  const kills = [100, 900];
  const ready = [0, 400, 1300];
  const twice = { "tok-a-1": 2, "tok-b-1": 2, "tok-c-1": 2, "tok-d-1": 2 };
  const taken: Record<string, number> = {
    "tok-a-1": 99.9, // answered just before the kill that ended gateway 1
    "tok-b-1": 130, // taken after gateway 1 died, before gateway 2 was up: it was in flight
    "tok-c-1": 650, // answered by gateway 2's Bot API long before its kill
    "tok-d-1": 950, // taken after gateway 2 died
  };

  it("in flight at the kill when taken after its sender's kill and before the next gateway was up", () => {
    expect(splitTwice(twice, (t) => taken[t], kills, ready)).toEqual({
      answeredBeforeKill: ["tok-a-1", "tok-c-1"],
      takenAfterKill: ["tok-b-1", "tok-d-1"],
    });
  });

  it("a token with no recorded first copy, or one before any kill, counts against the gateway", () => {
    expect(splitTwice({ "tok-x-1": 2 }, () => undefined, kills, ready).answeredBeforeKill).toEqual([
      "tok-x-1",
    ]);
    expect(splitTwice({ "tok-y-1": 2 }, () => 50, kills, ready).answeredBeforeKill).toEqual(["tok-y-1"]);
  });

  it("audit counts what was delivered twice and what was never delivered", () => {
    expect(audit(["tok-a-1", "tok-b-1"], ["tok-a-1", "tok-a-1"])).toEqual({
      lost: ["tok-b-1"],
      twice: { "tok-a-1": 2 },
    });
  });
});
