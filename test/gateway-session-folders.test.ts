import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { builtinTools } from "../src/agent/tools/index.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/**
 * Session folders (issue 32): a group session works in `<store dir>/<sessionId>/workspace/`, made (0700, in a
 * 0700 folder) by its first tool call and not before; `/new` gives the key a new folder and leaves the old one
 * as it is; the session log lands in the folder's `logs/`.
 */
describe("gateway: session folders", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const group = { chatType: "group" as const, chatId: "g" };
  const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

  it("a group works in its own session folder's workspace, made when first needed; /new leaves the old one", async () => {
    t = await startTestGateway({
      tools: builtinTools(),
      config: {
        inbound: {
          groupChat: { requireMention: false },
          reply: { agent: { tools: { groups: ["write_file"] } } },
        },
      },
    });
    const storeDir = join(t.stateDir, "sessions");
    const folderOf = async () => join(storeDir, (await t!.gateway.store.get("group:g"))!.sessionId);

    await done(await t.chat.inject({ text: "no tools here", ...group }));
    const first = await folderOf();
    await expect(stat(join(first, "workspace"))).rejects.toMatchObject({ code: "ENOENT" });

    t.fake.enqueue(
      { toolCalls: [{ name: "write_file", arguments: { path: "menu.txt", content: "soup" } }] },
      { text: "written" },
    );
    expect((await done(await t.chat.inject({ text: "write the menu", ...group }))).stopReason).toBe("end");
    expect(await readFile(join(first, "workspace", "menu.txt"), "utf8")).toBe("soup");
    expect(await modeOf(first)).toBe(0o700);
    expect(await modeOf(join(first, "workspace"))).toBe(0o700);
    // Not in the agent's workspace, which the primary session works in.
    await expect(stat(join(t.stateDir, "workspace"))).rejects.toMatchObject({ code: "ENOENT" });

    await done(await t.chat.inject({ text: "/new", ...group }));
    await done(await t.chat.inject({ text: "fresh start", ...group }));
    const second = await folderOf();
    expect(second).not.toBe(first);
    expect(await readFile(join(first, "workspace", "menu.txt"), "utf8")).toBe("soup");

    // The log of each session id is in its own folder (written behind: flushed here).
    await t.gateway.sessionLogs.flush();
    expect(await readdir(join(first, "logs"))).toEqual(["session.log"]);
    expect(await readFile(join(first, "logs", "session.log"), "utf8")).toMatch(
      / tool .*name=write_file ok=true/,
    );
    expect(await readFile(join(second, "logs", "session.log"), "utf8")).not.toContain("write_file");
  });
});
