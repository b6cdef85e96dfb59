import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isClawdisError } from "../core/errors.js";
import { sessionIdOfTranscript, sessionPaths, transcriptPathFor, workspaceFor } from "./session-paths.js";

const roots = { storeDir: "/state/sessions", workspaceDir: "/work", primaryKey: "main" };

describe("sessionPaths", () => {
  it.each([
    ["the primary session works in the workspace itself", "main", "/work"],
    ["`global` as the primary key (scope: global) works there too", "global", "/work"],
    ["a group works in its own folder, its key made safe", "group:12@g.us", join("/work", "group_12_g.us")],
    ["another key gets its own folder", "hook/a b", join("/work", "hook_a_b")],
  ])("%s", (_name, key, workspace) => {
    const primaryKey = key === "global" ? "global" : "main";
    expect(sessionPaths({ ...roots, primaryKey }, key, "s-1")).toEqual({
      transcript: join("/state/sessions", "s-1.jsonl"),
      workspace,
      inbox: join(workspace, "inbox"),
    });
  });

  it("`global` is not the primary session when the key scheme is per sender", () => {
    expect(workspaceFor(roots, "global")).toBe(join("/work", "global"));
  });

  it("refuses a session id that is not a safe file name", () => {
    let thrown: unknown;
    try {
      sessionPaths(roots, "main", "../x");
    } catch (error) {
      thrown = error;
    }
    expect(isClawdisError(thrown, "SESSION_ID_INVALID")).toBe(true);
  });

  it("reads a transcript's session id back from its name, and nothing from other files", () => {
    expect(sessionIdOfTranscript(transcriptPathFor("/s", "abc"))).toBe("abc");
    expect(sessionIdOfTranscript("sessions.json")).toBeUndefined();
    expect(sessionIdOfTranscript("abc.jsonl.tmp")).toBeUndefined();
  });
});
