import { describe, expect, it } from "vitest";
import type { Authority, ToolContext, ToolDefinition } from "../plugin-api/types.js";
import {
  type ToolGrant,
  type ToolsConfig,
  toolsForTurn,
  toolsPolicy,
  withFileAccess,
} from "./tools-policy.js";

const tools: ToolsConfig = {
  main: ["*"],
  groups: ["read_file", "send_file"],
  people: { "telegram:222": ["read_file"] },
};

const grant = (
  sessionKey: string,
  authority: Authority,
  senderId = "111",
  extra: { primaryKey?: string; allowedTools?: string[] } = {},
): ToolGrant =>
  toolsPolicy({
    sessionKey,
    primaryKey: extra.primaryKey ?? "main",
    authority,
    channel: "telegram",
    senderId,
    ...(extra.allowedTools ? { allowedTools: extra.allowedTools } : {}),
    tools,
  });

describe("toolsPolicy", () => {
  it.each<[string, ToolGrant, ToolGrant]>([
    ["the owner in main", grant("main", "owner"), { names: ["*"], allowBashByStar: true, confined: false }],
    [
      "another allowed person in main: none",
      grant("main", "allowed", "333"),
      { names: [], allowBashByStar: false, confined: true },
    ],
    [
      "an allowed person listed in tools.people: theirs, confined",
      grant("main", "allowed", "222"),
      { names: ["read_file"], allowBashByStar: false, confined: true },
    ],
    [
      "an untrusted sender in main (scope global, a group stranger): none",
      grant("main", "untrusted", "999"),
      { names: [], allowBashByStar: false, confined: true },
    ],
    [
      "a group member: tools.groups, confined",
      grant("group:-100", "untrusted", "999"),
      { names: ["read_file", "send_file"], allowBashByStar: false, confined: true },
    ],
    [
      "the owner in a group: tools.groups, confined too",
      grant("group:-100", "owner"),
      { names: ["read_file", "send_file"], allowBashByStar: false, confined: true },
    ],
    [
      "automated input: what its source grants, confined",
      grant("main", "automated", "hook:ci", { allowedTools: ["*"] }),
      { names: ["*"], allowBashByStar: false, confined: true },
    ],
    [
      "automated input without a grant: none",
      grant("hooks:ci", "automated", "hook:ci"),
      { names: [], allowBashByStar: false, confined: true },
    ],
    [
      "the owner through the OpenAI API, no grant (gateway.openai.tools []): none, even in main",
      grant("main", "owner", "local", { allowedTools: [] }),
      { names: [], allowBashByStar: true, confined: false },
    ],
    [
      "the owner through the OpenAI API in main: what gateway.openai.tools grants, bash by star",
      grant("main", "owner", "local", { allowedTools: ["*"] }),
      { names: ["*"], allowBashByStar: true, confined: false },
    ],
    [
      "the owner through the OpenAI API under another key: the grant, confined",
      grant("notes", "owner", "local", { allowedTools: ["read_file"] }),
      { names: ["read_file"], allowBashByStar: true, confined: true },
    ],
    [
      "the owner under another key (an API session): none",
      grant("telegram:12345", "owner"),
      { names: [], allowBashByStar: false, confined: true },
    ],
    [
      "under scope global the primary key is global",
      grant("global", "owner", "111", { primaryKey: "global" }),
      { names: ["*"], allowBashByStar: true, confined: false },
    ],
    [
      "a key that only starts like a group's is no group: none",
      grant("groupie", "untrusted", "999"),
      { names: [], allowBashByStar: false, confined: true },
    ],
    [
      "under scope per-sender a key named global is not the primary one",
      grant("global", "owner"),
      { names: [], allowBashByStar: false, confined: true },
    ],
  ])("%s", (_what, actual, expected) => {
    expect(actual).toEqual(expected);
  });
});

describe("withFileAccess", () => {
  const seen: ToolContext[] = [];
  const tool: ToolDefinition = {
    name: "read_file",
    description: "reads",
    parameters: { type: "object" },
    execute: async (_args, context) => {
      seen.push(context);
      return { ok: true, output: "" };
    },
  };
  const context: ToolContext = {
    signal: new AbortController().signal,
    cwd: "/ws/g",
    sessionKey: "g",
    timeoutMs: 1,
  };
  const secrets = [{ path: "/state/gateway.token", what: "the gateway token" }];

  it("confines a confined call to its working directory, and always names the secrets", async () => {
    await withFileAccess([tool], { confined: true, secrets })[0]!.execute({}, context);
    await withFileAccess([tool], { confined: false, secrets })[0]!.execute({}, context);
    expect(seen.map((c) => c.files)).toEqual([{ secrets, confinedTo: "/ws/g" }, { secrets }]);
  });
});

describe("toolsForTurn", () => {
  const tool = (name: string): ToolDefinition => ({
    name,
    description: name,
    parameters: { type: "object" },
    execute: async () => ({ ok: true, output: "" }),
  });
  const all = [tool("bash"), tool("read_file"), tool("send_file")];
  const names = (sessionKey: string, message: Parameters<typeof toolsForTurn>[0]["message"]) =>
    toolsForTurn({
      sessionKey,
      primaryKey: "main",
      message,
      all: () => all,
      tools: { main: ["*"], groups: ["*"], people: {} },
      secrets: [],
    }).map((t) => t.name);

  it("builds the list of every tool only when the grant names one", () => {
    let built = 0;
    const input = (groups: string[]) => ({
      sessionKey: "group:-1",
      primaryKey: "main",
      message: { authority: "allowed" as const, channel: "c", senderId: "2" },
      all: () => {
        built++;
        return all;
      },
      tools: { main: ["*"], groups, people: {} },
      secrets: [],
    });
    expect(toolsForTurn(input([]))).toEqual([]);
    expect(built).toBe(0);
    expect(toolsForTurn(input(["read_file"])).map((t) => t.name)).toEqual(["read_file"]);
    expect(built).toBe(1);
  });

  it.each<[string, string, Parameters<typeof toolsForTurn>[0]["message"], string[]]>([
    [
      "the owner in main: every tool, bash too",
      "main",
      { authority: "owner", channel: "c", senderId: "1" },
      ["bash", "read_file", "send_file"],
    ],
    [
      "a group under *: every tool but bash",
      "group:-1",
      { authority: "allowed", channel: "c", senderId: "2" },
      ["read_file", "send_file"],
    ],
    [
      "a message without an authority counts as allowed, not the owner",
      "main",
      { channel: "c", senderId: "1" },
      [],
    ],
    [
      "automated input without an authority gets its grant",
      "main",
      { automated: true, allowedTools: ["read_file"], channel: "c", senderId: "h" },
      ["read_file"],
    ],
  ])("%s", (_what, key, message, expected) => {
    expect(names(key, message)).toEqual(expected);
  });
});
