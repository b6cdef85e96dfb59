import { describe, expect, it } from "vitest";
import { childToolNames } from "./child-tools.js";

describe("childToolNames", () => {
  const parent = ["bash", "read_file", "send_file", "remind", "spawn_agent", "check_agent_run", "web_search"];
  it.each([
    [
      "all of the parent's but spawn_agent, check_agent_run and send_file",
      undefined,
      ["bash", "read_file", "remind", "web_search"],
    ],
    ["only those asked for", ["read_file", "web_search"], ["read_file", "web_search"]],
    [
      "never a forbidden one, even asked for",
      ["spawn_agent", "send_file", "check_agent_run", "bash"],
      ["bash"],
    ],
    ["never one the parent lacks", ["write_file", "read_file"], ["read_file"]],
    ["none when asked for none", [], []],
  ] as const)("%s", (_what, requested, expected) => {
    expect(childToolNames(parent, requested)).toEqual(expected);
  });

  it("an owner without bash gives a child no bash", () => {
    expect(childToolNames(["read_file", "spawn_agent"], ["bash", "read_file"])).toEqual(["read_file"]);
  });
});
