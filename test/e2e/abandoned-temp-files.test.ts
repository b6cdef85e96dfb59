import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, DIST_MAIN, E2eState } from "./harness.js";

/** dist/src/sessions/store-write.js: the store's atomic write as the gateway runs it. */
const STORE_WRITE = pathToFileURL(join(dirname(DIST_MAIN), "sessions", "store-write.js")).href;

/**
 * A store write cut short by `kill -9` leaves its temp file (the store itself is intact: the rename never came);
 * the next gateway removes it in the background after it starts, and says so.
 */
describe("e2e: temp files of writes a kill cut short", () => {
  afterEach(cleanupAll);

  it("are removed by the next gateway; the store and its sessions are as they were", async () => {
    const state = await E2eState.create();
    const first = await state.startGateway();
    expect((await first.agent("remember me")).status).toBe(200);
    await first.storeSettled();
    expect((await first.stop()).code).toBe(0);
    const before = await readFile(state.storePath, "utf8");

    // Another process writes the store and is killed after its temp file is written and fsync'd, before the rename.
    const script = `
      const { writeFileAtomic } = await import(${JSON.stringify(STORE_WRITE)});
      await writeFileAtomic(${JSON.stringify(state.storePath)}, "{}\\n", () => {
        process.stdout.write("before the rename\\n");
        return new Promise(() => {});
      });`;
    const writer = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      writer.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("before the rename")) resolve();
      });
      writer.once("exit", (code) => reject(new Error(`the writer exited (${code}) before its rename`)));
    });
    writer.kill("SIGKILL");
    await new Promise((resolve) => writer.once("exit", resolve));
    const sessions = dirname(state.storePath);
    const left = (await readdir(sessions)).filter((name) => name.includes(".tmp-"));
    expect(left).toEqual([expect.stringMatching(new RegExp(`^\\.sessions\\.json\\.tmp-${writer.pid}-`))]);
    expect(await readFile(state.storePath, "utf8")).toBe(before);

    const second = await state.startGateway();
    await second.stderr.waitFor("removed temp files left by writes that were cut short");
    expect((await readdir(sessions)).filter((name) => name.includes(".tmp-"))).toEqual([]);
    expect(second.stderr.text()).toContain(left[0]);
    const answer = await second.agent("still there?");
    expect(answer.status).toBe(200);
    await second.storeSettled();
    const store = JSON.parse(await readFile(state.storePath, "utf8")) as Record<string, unknown>;
    expect(Object.keys(store)).toEqual(Object.keys(JSON.parse(before) as object));
  });
});
