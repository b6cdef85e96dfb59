import { describe, expect, it } from "vitest";
import type { AuthorizeResult } from "../../plugin-api/types.js";
import {
  type Authority,
  automatedSource,
  classifyAuthority,
  interruptsTurn,
  isTrustedPerson,
  type WaitingInput,
} from "./authority.js";

describe("classifyAuthority", () => {
  const rows: [string, { automated?: boolean; local: boolean; verdict?: AuthorizeResult }, Authority][] = [
    ["a webhook's input is automated", { automated: true, local: false }, "automated"],
    ["automated input through the API is still automated", { automated: true, local: true }, "automated"],
    ["the gateway's own API (token holder) is the owner", { local: true }, "owner"],
    ["a transport's owner id", { local: false, verdict: { allowed: true, authority: "owner" } }, "owner"],
    [
      "a sender on the allowlist",
      { local: false, verdict: { allowed: true, authority: "allowed" } },
      "allowed",
    ],
    [
      "a group member let in only by the group (not on the allowlist)",
      { local: false, verdict: { allowed: true, authority: "untrusted" } },
      "untrusted",
    ],
    [
      "a verdict that names no authority counts as allowed",
      { local: false, verdict: { allowed: true } },
      "allowed",
    ],
    ["a transport's record from before authorities: never the owner", { local: false }, "allowed"],
  ];
  it.each(rows)("%s", (_, input, expected) => {
    const { automated, ...rest } = input;
    expect(classifyAuthority({ message: automated ? { automated } : {}, ...rest })).toBe(expected);
  });
});

describe("isTrustedPerson", () => {
  it.each([
    ["owner", true],
    ["allowed", true],
    ["untrusted", false],
    ["automated", false],
  ] as const)("%s: %s", (authority, expected) => {
    expect(isTrustedPerson(authority)).toBe(expected);
  });
});

describe("interruptsTurn", () => {
  const person = (authority: Authority): WaitingInput => ({ authority, internal: false });
  const core = (authority: Authority): WaitingInput => ({ authority, internal: true });
  const rows: [string, Authority, WaitingInput, boolean][] = [
    [
      "the owner writes during an automated turn: it ends after its batch",
      "automated",
      person("owner"),
      true,
    ],
    ["an allowed person writes during an automated turn: it ends", "automated", person("allowed"), true],
    ["an untrusted person never ends a turn: waits", "automated", person("untrusted"), false],
    ["another automated input never ends one: waits", "automated", person("automated"), false],
    ["the core's input (a reminder) waits", "automated", core("automated"), false],
    [
      "an approval's answer on a person's behalf waits (it resumes that person's turn)",
      "automated",
      core("owner"),
      false,
    ],
    ["the owner's turn is never ended by another person", "owner", person("allowed"), false],
    ["nor by the owner writing again (that joins or waits)", "owner", person("owner"), false],
    ["an allowed person's turn is not ended by the owner", "allowed", person("owner"), false],
    ["an untrusted person's turn is not ended by the owner", "untrusted", person("owner"), false],
  ];
  it.each(rows)("%s", (_, running, waiting, expected) => {
    expect(interruptsTurn(running, waiting)).toBe(expected);
  });
});

describe("automatedSource", () => {
  it("names the core's kind, else the channel (a webhook)", () => {
    expect(automatedSource({ channel: "telegram", internal: { kind: "reminder" } })).toBe("reminder");
    expect(automatedSource({ channel: "webhook" })).toBe("webhook");
    expect(automatedSource({ channel: "webhook", internal: { kind: "approval-answer" } })).toBe(
      "resumed after an approval",
    );
  });
});
