import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { MessageEntry } from "../../src/sessions/types.js";
import { EventStream } from "../e2e/event-stream.js";
import { cleanupAll, contentOf, E2eState } from "../e2e/harness.js";
import { settle } from "./settle.js";
import { fillDisk, mountTmpfs, unmount } from "./tmpfs.js";

/** The tmpfs the state dir lives on: room for the gateway's files, then a filler takes the rest. */
const TMPFS_BYTES = 8 * 1024 * 1024;
/** An answer longer than the free end of any page of the transcript or the journal: its write needs a new page. */
const ANSWER = `the answer ${"y".repeat(12_000)}`;

/**
 * A full disk in the middle of a turn of `POST /api/agent` as a stream (web chat, API clients; reliability review
 * m4), through the real binary on a small tmpfs: the model's answer comes while the disk is full, so writing it
 * fails. The stream ends at once with the "kept" notice (as the non-streamed answer and `clawdis agent` do), never
 * stays open on keep-alives; once space is back the message is answered into the transcript, once.
 */
describe("fault: a full disk mid-turn of a streamed API message", () => {
  let base = "";
  let mount = "";
  afterAll(async () => {
    await cleanupAll();
    if (mount) await unmount(mount);
    if (base) await rm(base, { recursive: true, force: true });
  });

  it("the stream ends with the kept notice; the answer reaches the transcript once space is back", async () => {
    base = await mkdtemp(join(tmpdir(), "clawdis-fault-stream-"));
    const dir = join(base, "mnt");
    await mkdir(dir);
    await mountTmpfs(dir, TMPFS_BYTES);
    mount = dir;
    const state = await E2eState.create({ dir: join(dir, "state") });
    const gw = await state.startGateway();
    state.fake.enqueue({ hang: "before-headers", text: ANSWER });
    const stream = await EventStream.postAgent(gw.url, gw.token, { message: "fill me in", channel: "api" });
    try {
      await stream.waitFor((e) => e.type === "accepted", "the acknowledgement");
      // The message is journaled and in the transcript, the model asked: now the disk fills, then the answer comes.
      await state.fake.waitForRequest(1);
      const filler = join(dir, "filler");
      await fillDisk(filler);
      state.fake.release();
      const done = await stream.waitFor((e) => e.type === "done", "the stream's done after the failed write");
      const payloads = (done.data.payloads ?? []) as { text?: string }[];
      expect(payloads.map((p) => p.text)).toEqual([
        expect.stringMatching(/^Your message is kept and will be answered once this clears: .*ENOSPC/),
      ]);
      await stream.ended;
      await rm(filler);
    } finally {
      stream.close();
    }
    // Space is back: the retry answers it (from the transcript, the model asked again), without a restart.
    expect(await settle(gw, state), "records open once space was back").toBe(0);
    const transcript = state.transcriptPath((await state.readStore()).main?.sessionId ?? "");
    // The write that failed may have left a torn line: skipped here, as the gateway skips it when it reads.
    const lines = (await readFile(transcript, "utf8")).split("\n").filter((l) => l.trim().length > 0);
    const messages = lines
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as MessageEntry];
        } catch {
          return [];
        }
      })
      .filter((e) => e.type === "message");
    const finals = messages.filter((m) => m.meta?.final === true).map(contentOf);
    // The fake's next answer (its default): the write that failed never counted as the reply.
    expect(finals).toEqual(["echo: fill me in"]);
    expect(await gw.stop()).toEqual({ code: 0, signal: null });
  }, 60_000);
});
