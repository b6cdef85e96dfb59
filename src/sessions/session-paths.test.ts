import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isClawdisError } from "../core/errors.js";
import { sessionIdOfTranscript, sessionPaths, transcriptPathFor } from "./session-paths.js";

const roots = { storeDir: "/state/sessions", workspaceDir: "/work", primaryKey: "main" };

describe("sessionPaths", () => {
  const folder = join("/state/sessions", "s-1");
  it.each([
    ["the primary session works in the agent's workspace itself", "main", "/work"],
    ["`global` as the primary key (scope: global) works there too", "global", "/work"],
    ["a group works in its session folder's workspace", "group:12@g.us", join(folder, "workspace")],
    ["any other key too", "hook/a b", join(folder, "workspace")],
  ])("%s", (_name, key, workspace) => {
    const primaryKey = key === "global" ? "global" : "main";
    expect(sessionPaths({ ...roots, primaryKey }, key, "s-1")).toEqual({
      transcript: join("/state/sessions", "s-1.jsonl"),
      folder,
      workspace,
      inbox: join(workspace, "inbox"),
      attachmentStaging: join(folder, "attachment-staging"),
      artifacts: join(folder, "artifacts"),
      log: join(folder, "logs", "session.log"),
    });
  });

  it("`global` is not the primary session when the key scheme is per sender", () => {
    expect(sessionPaths(roots, "global", "s-1").workspace).toBe(join(folder, "workspace"));
  });

  it("a new session id of the same key gets a new folder; the transcript stays flat beside it", () => {
    const a = sessionPaths(roots, "group:1", "a");
    const b = sessionPaths(roots, "group:1", "b");
    expect(a.folder).not.toBe(b.folder);
    expect(a.workspace).not.toBe(b.workspace);
    expect(sessionIdOfTranscript(a.transcript)).toBe("a");
    expect(sessionIdOfTranscript(a.folder)).toBeUndefined();
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
