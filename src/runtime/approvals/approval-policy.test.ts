import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../core/config.js";
import { isClawdisError } from "../../core/errors.js";
import {
  type ApprovalsSetting,
  approvalAction,
  type CallFacts,
  unsetApprovalsWarning,
} from "./approval-policy.js";

const bash: CallFacts = { tool: "bash" };
const inside = (tool: string): CallFacts => ({ tool, outsideWorkspace: false });
const outside = (tool: string): CallFacts => ({ tool, outsideWorkspace: true });
const noPath = (tool: string): CallFacts => ({ tool });

describe("approvalAction", () => {
  it.each<[string, ApprovalsSetting | undefined, CallFacts, string]>([
    ["unset: bash runs (today's behaviour)", undefined, bash, "run"],
    ["unset: a write outside runs", undefined, outside("write_file"), "run"],
    ["never: bash runs", "never", bash, "run"],
    ["never: send_file outside runs", "never", outside("send_file"), "run"],
    ["risky: bash asks", "risky", bash, "ask"],
    ["risky: write_file inside runs", "risky", inside("write_file"), "run"],
    ["risky: write_file outside asks", "risky", outside("write_file"), "ask"],
    ["risky: edit_file inside runs", "risky", inside("edit_file"), "run"],
    ["risky: edit_file outside asks", "risky", outside("edit_file"), "ask"],
    ["risky: send_file inside runs", "risky", inside("send_file"), "run"],
    ["risky: send_file outside asks", "risky", outside("send_file"), "ask"],
    ["risky: a path tool without a usable path asks", "risky", noPath("write_file"), "ask"],
    ["risky: read_file outside runs", "risky", outside("read_file"), "run"],
    ["risky: a plugin's tool runs", "risky", { tool: "web_search" }, "run"],
    ["always: read_file asks", "always", inside("read_file"), "ask"],
    ["always: bash asks", "always", bash, "ask"],
    ["map: the tool's entry", { bash: "deny", "*": "ask" }, bash, "deny"],
    ["map: '*' for a tool not named", { bash: "deny", "*": "ask" }, inside("read_file"), "ask"],
    ["map: run when neither is there", { bash: "ask" }, inside("read_file"), "run"],
    ["map: run is run even outside", { write_file: "run" }, outside("write_file"), "run"],
    ["map: ask", { send_file: "ask" }, inside("send_file"), "ask"],
  ])("%s", (_what, setting, call, expected) => {
    expect(approvalAction(setting, call)).toBe(expected);
  });
});

describe("unsetApprovalsWarning", () => {
  it("warns only when nothing is set", () => {
    expect(unsetApprovalsWarning(undefined)).toMatch(/tools run without asking/);
    expect(unsetApprovalsWarning("never")).toBeUndefined();
    expect(unsetApprovalsWarning("risky")).toBeUndefined();
  });
});

describe("inbound.reply.agent.approvals in the config", () => {
  const parse = (value: string) =>
    parseConfigText(`{ inbound: { reply: { agent: { approvals: ${value} } } } }`, "clawdis.json");

  it.each([
    ['"never"', "never"],
    ['"risky"', "risky"],
    ['"always"', "always"],
    ['{ bash: "ask", "*": "run", send_file: "deny" }', { bash: "ask", "*": "run", send_file: "deny" }],
  ])("accepts %s", (text, expected) => {
    expect(parse(text).inbound.reply.agent.approvals).toEqual(expected);
  });

  it("absent is undefined (nothing asks)", () => {
    expect(parseConfigText("{}", "clawdis.json").inbound.reply.agent.approvals).toBeUndefined();
  });

  it.each([
    ['"sometimes"', "inbound.reply.agent.approvals"],
    ['{ bash: "maybe" }', "inbound.reply.agent.approvals"],
    ["true", "inbound.reply.agent.approvals"],
  ])("refuses %s with exit code 2 and the key path", (text, path) => {
    let error: unknown;
    try {
      parse(text);
    } catch (e) {
      error = e;
    }
    expect(isClawdisError(error) && error.code).toBe("CONFIG_INVALID");
    expect(isClawdisError(error) && error.exitCode).toBe(2);
    expect(String((error as Error).message)).toContain(path);
  });
});
