import { describe, expect, it } from "vitest";
import type { Authority } from "../plugin-api/types.js";
import type { Reminder } from "./reminder.js";
import { firingId, firingInput, firingText, reminderToolNames } from "./reminder-firing.js";

const base: Reminder = { id: "r1", text: "water the plants", when: { at: 0 }, createdAt: 100 };

/** The tools policy as a table: the owner has bash and the file tools; alice (allowed) read_file and a tool the owner lacks. */
const namesFor = (who: { authority: Authority; senderId: string }) => {
  if (who.authority === "owner") return ["bash", "read_file", "write_file", "remind"];
  if (who.senderId === "alice") return ["read_file", "browser"];
  return [];
};

describe("reminderToolNames: those of whoever set it, at most the owner's", () => {
  it.each([
    [
      "no setter (added by hand): the owner's",
      undefined,
      undefined,
      ["bash", "read_file", "write_file", "remind"],
    ],
    [
      "the owner",
      { authority: "owner" as const, channel: "t", senderId: "o" },
      undefined,
      ["bash", "read_file", "write_file", "remind"],
    ],
    [
      "an allowed person: theirs, less what the owner lacks",
      { authority: "allowed" as const, channel: "t", senderId: "alice" },
      undefined,
      ["read_file"],
    ],
    [
      "an untrusted person with none: none",
      { authority: "untrusted" as const, channel: "t", senderId: "x" },
      undefined,
      [],
    ],
    [
      "an automated turn: what it had, at most the owner's",
      { authority: "automated" as const, channel: "t", senderId: "internal:reminder" },
      ["read_file", "browser"],
      ["read_file"],
    ],
    [
      "an automated turn with *: the owner's without bash",
      { authority: "automated" as const, channel: "t", senderId: "hook" },
      ["*"],
      ["read_file", "write_file", "remind"],
    ],
    [
      "an automated turn with none",
      { authority: "automated" as const, channel: "t", senderId: "hook" },
      undefined,
      [],
    ],
  ])("%s", (_name, setBy, tools, want) => {
    const reminder: Reminder = { ...base, ...(setBy ? { setBy } : {}), ...(tools ? { tools } : {}) };
    expect(reminderToolNames(reminder, namesFor)).toEqual(want);
  });
});

describe("firingInput: an automated reminder input, the same id for the same slot", () => {
  it("is keyed by reminder, creation and slot", () => {
    const firing = { id: "r1", slot: 5000, late: false, missedEarlier: false };
    expect(firingId(base, firing)).toBe("reminder:r1:100:5000");
    expect(firingId({ ...base, createdAt: 101 }, firing)).not.toBe(firingId(base, firing));
    expect(firingId(base, { ...firing, slot: 5001 })).not.toBe(firingId(base, firing));
  });

  it("goes to the reminder's session (else the primary) and route, with the tools given", () => {
    const route = { channel: "telegram", chatId: "42", chatType: "direct" as const };
    const input = firingInput(
      { ...base, session: "group:x", route },
      { id: "r1", slot: 5000, late: false, missedEarlier: false },
      { primaryKey: "main", timeZone: "UTC", tools: ["read_file"] },
    );
    expect(input).toEqual({
      sessionKey: "group:x",
      kind: "reminder",
      text: "water the plants",
      authority: "automated",
      allowedTools: ["read_file"],
      id: "reminder:r1:100:5000",
      route,
    });
    expect(
      firingInput(
        base,
        { id: "r1", slot: 1, late: false, missedEarlier: false },
        { primaryKey: "main", timeZone: "UTC", tools: [] },
      ).sessionKey,
    ).toBe("main");
  });

  it("a late firing says when it was due (in the time zone), and that missed repeats were skipped", () => {
    const slot = Date.parse("2026-12-06T08:00:00Z");
    expect(firingText(base, { id: "r1", slot, late: true, missedEarlier: false }, "Europe/Berlin")).toBe(
      "water the plants\n(late: this was due at 2026-12-06 09:00:00 GMT+1, while the gateway was not running)",
    );
    expect(firingText(base, { id: "r1", slot, late: true, missedEarlier: true }, "UTC")).toMatch(
      /earlier repeats missed meanwhile were skipped\)$/,
    );
  });
});
