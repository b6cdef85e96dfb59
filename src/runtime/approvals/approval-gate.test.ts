import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StoredToolCall } from "../../sessions/types.js";
import { approvalGate, decideGate, deniedByPolicy, type GateFacts, gateFacts } from "./approval-gate.js";

const call = (name: string, args: Record<string, unknown>): StoredToolCall => ({
  id: "c1",
  type: "function",
  function: { name, arguments: JSON.stringify(args) },
});

describe("decideGate", () => {
  const bash = (command: string): GateFacts => ({ tool: "bash", command, what: `run ${command}` });
  it.each<[string, Parameters<typeof decideGate>[0], GateFacts, string[], ReturnType<typeof decideGate>]>([
    ["never: runs", "never", bash("rm -rf ~"), [], { action: "run" }],
    ["risky bash asks with what it does", "risky", bash("ls"), [], { action: "ask", reason: "run ls" }],
    ["risky bash on the allowlist runs", "risky", bash("git status -s"), ["git status*"], { action: "run" }],
    [
      "risky bash with a metacharacter asks despite a prefix",
      "risky",
      bash("git status; rm -rf ~"),
      ["git status*"],
      { action: "ask", reason: "run git status; rm -rf ~" },
    ],
    ["always: bash on the allowlist runs", "always", bash("ls"), ["ls"], { action: "run" }],
    [
      "deny: refused, the allowlist does not help",
      { bash: "deny" },
      bash("ls"),
      ["ls"],
      {
        action: "refuse",
        output: deniedByPolicy("bash"),
        denied: true,
      },
    ],
    [
      "risky: a write inside runs",
      "risky",
      { tool: "write_file", outsideWorkspace: false, what: "w" },
      [],
      {
        action: "run",
      },
    ],
    [
      "risky: a write outside asks",
      "risky",
      { tool: "write_file", outsideWorkspace: true, what: "w" },
      [],
      {
        action: "ask",
        reason: "w",
      },
    ],
  ])("%s", (_what, setting, facts, allowlist, expected) => {
    expect(decideGate(setting, facts, allowlist)).toEqual(expected);
  });
});

describe("gateFacts", () => {
  let root: string;
  let workspace: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "clawdis-gate-"));
    workspace = join(root, "workspace");
    await mkdir(workspace);
    await writeFile(join(workspace, "notes.txt"), "12345");
    await writeFile(join(root, "secret.txt"), "1234567890");
    // A link inside the workspace that leads out of it.
    await symlink(root, join(workspace, "up"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("bash: the whole command and its folder", () => {
    expect(gateFacts(call("bash", { command: "make && make test" }), workspace)).toEqual({
      tool: "bash",
      command: "make && make test",
      what: `bash wants to run\nmake && make test\nin ${workspace}`,
    });
  });

  it("write_file inside: its path and size, not outside", () => {
    const facts = gateFacts(call("write_file", { path: "notes.txt", content: "abc" }), workspace);
    expect(facts.outsideWorkspace).toBe(false);
    expect(facts.what).toContain(
      `write 3 bytes to ${join(workspace, "notes.txt")}, replacing a file of 5 bytes`,
    );
  });

  it("send_file through a symlink that leads out counts as outside, with the file's size", () => {
    const facts = gateFacts(call("send_file", { path: "up/secret.txt" }), workspace);
    expect(facts.outsideWorkspace).toBe(true);
    expect(facts.what).toContain("(outside the session's workspace) (10 bytes)");
  });

  it("edit_file with ..: outside", () => {
    expect(gateFacts(call("edit_file", { path: "../secret.txt" }), workspace).outsideWorkspace).toBe(true);
  });

  it("the gate asks a risky bash and lets a read run", () => {
    const gate = approvalGate({ setting: () => "risky", allowlist: () => [], cwd: workspace });
    expect(gate.beforeTool?.(call("bash", { command: "ls" }))).toMatchObject({ action: "ask" });
    expect(gate.beforeTool?.(call("read_file", { path: "/etc/hosts" }))).toEqual({ action: "run" });
  });
});
