import { mkdir, mkdtemp, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { OutboundAttachment, ToolContext } from "../../plugin-api/types.js";
import { attachmentKindOf, MAX_SEND_FILE_BYTES, sendFileTool } from "./send-file.js";

describe("send_file", () => {
  let cwd: string;
  let attached: OutboundAttachment[];
  let context: ToolContext;
  beforeEach(async () => {
    cwd = await mkdtemp(join(tmpdir(), "clawdis-sendfile-"));
    attached = [];
    context = {
      signal: new AbortController().signal,
      cwd,
      sessionKey: "main",
      timeoutMs: 1000,
      attach: (a) => attached.push(a),
    };
  });
  afterEach(async () => {
    await rm(cwd, { recursive: true, force: true });
  });

  it("attaches a file of the working directory, with its kind and caption", async () => {
    await writeFile(join(cwd, "chart.png"), "png");
    const result = await sendFileTool().execute({ path: "chart.png", caption: "the chart" }, context);
    expect(result.ok).toBe(true);
    expect(attached).toEqual([
      { kind: "image", path: join(cwd, "chart.png"), fileName: "chart.png", caption: "the chart" },
    ]);
  });

  it("refuses what is missing, not a file, too large, or a chat that cannot take files", async () => {
    await mkdir(join(cwd, "dir"));
    await writeFile(join(cwd, "huge.bin"), "");
    await truncate(join(cwd, "huge.bin"), MAX_SEND_FILE_BYTES + 1);
    const tool = sendFileTool();
    expect((await tool.execute({ path: "nope.txt" }, context)).ok).toBe(false);
    expect((await tool.execute({ path: "dir" }, context)).output).toContain("not a regular file");
    expect((await tool.execute({ path: "huge.bin" }, context)).output).toContain("at most");
    const { attach: _none, ...noAttach } = context;
    expect((await tool.execute({ path: "huge.bin" }, noAttach)).output).toContain("cannot receive files");
    expect(attached).toEqual([]);
  });

  it.each([
    ["a.JPG", "image"],
    ["b.ogg", "voice"],
    ["c.mp3", "audio"],
    ["d.mp4", "video"],
    ["e.pdf", "document"],
    ["noext", "document"],
  ])("%s is sent as %s", (name, kind) => {
    expect(attachmentKindOf(name)).toBe(kind);
  });
});
