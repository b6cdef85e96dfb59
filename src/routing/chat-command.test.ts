import { describe, expect, it } from "vitest";
import { directiveState, parseChatCommand } from "./chat-command.js";

describe("parseChatCommand", () => {
  it.each([
    ["/status", { kind: "status" }],
    ["  /STATUS ", { kind: "status" }],
    ["/stop", { kind: "stop", bare: false }],
    ["stop", { kind: "stop", bare: true }],
    ["Stop", { kind: "stop", bare: true }],
    ["/think high", { kind: "think", level: "high", rest: "" }],
    ["/think off", { kind: "think", level: "off", rest: "" }],
    ["/think low What is 2+2?", { kind: "think", level: "low", rest: "What is 2+2?" }],
    ["/verbose on", { kind: "verbose", level: "on", rest: "" }],
    ["/verbose OFF", { kind: "verbose", level: "off", rest: "" }],
    ["/think", { kind: "show-directive", directive: "think" }],
    ["  /Think  ", { kind: "show-directive", directive: "think" }],
    ["/verbose", { kind: "show-directive", directive: "verbose" }],
    ["/think extreme", { kind: "invalid-directive", directive: "think", given: "extreme" }],
    ["/verbose maybe", { kind: "invalid-directive", directive: "verbose", given: "maybe" }],
    ["/statusx", { kind: "none" }],
    ["please stop now", { kind: "none" }],
    ["hello", { kind: "none" }],
    ["/thinking high", { kind: "none" }],
    ["/model", { kind: "model" }],
    ["  /MODEL ", { kind: "model" }],
    ["/model Qwen2.5-7B", { kind: "model", name: "Qwen2.5-7B" }],
    ["/model a b", { kind: "none" }],
    ["/models", { kind: "none" }],
    ["/compact", { kind: "compact" }],
    [" /Compact ", { kind: "compact" }],
    ["/compact now", { kind: "none" }],
  ])("%j", (text, expected) => {
    expect(parseChatCommand(text)).toEqual(expected);
  });

  it("keeps the case and inner spacing of the text after a directive", () => {
    expect(parseChatCommand("/think medium Keep  THIS\nas is")).toEqual({
      kind: "think",
      level: "medium",
      rest: "Keep  THIS\nas is",
    });
  });
});

describe("directiveState", () => {
  it("says the session's current setting and how to change it; unset is off", () => {
    expect(directiveState("think", { thinkingLevel: "high" })).toBe(
      "Thinking level: high. Change it with /think off|minimal|low|medium|high.",
    );
    expect(directiveState("think", undefined)).toBe(
      "Thinking level: off. Change it with /think off|minimal|low|medium|high.",
    );
    expect(directiveState("verbose", { verboseLevel: "on" })).toBe(
      "Verbose: on. Change it with /verbose on|off.",
    );
    expect(directiveState("verbose", {})).toBe("Verbose: off. Change it with /verbose on|off.");
  });
});
