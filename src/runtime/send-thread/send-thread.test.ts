import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { blockUntil, type OffThreadHttp, offThreadHttp } from "../../../test/fakes/off-thread-http.js";
import { createMemoryLogger } from "../../core/logger.js";
import { SendThread, sendThreadWorkerFile } from "./send-thread.js";

// The worker runs as tsc compiled it (dist/src/runtime/send-thread/): `npm test` builds before it runs this.
describe("SendThread", () => {
  let dir: string;
  let file: string;
  let http: OffThreadHttp;
  let thread: SendThread;
  const post = (body: string) => ({ method: "POST", headers: { "content-type": "application/json" }, body });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-send-thread-"));
    file = join(dir, "inbound.confirmed.jsonl");
    http = await offThreadHttp();
  });
  afterEach(async () => {
    await thread?.close();
    await http.close();
    await rm(dir, { recursive: true, force: true });
  });
  const start = async (logger = createMemoryLogger().logger) => {
    thread = new SendThread({ confirmationsPath: file, logger });
    expect(await thread.ready).toBe(true);
    expect(thread.up).toBe(true);
  };
  const read = () => (existsSync(file) ? readFileSync(file, "utf8") : "");

  it("finds its compiled worker from the sources and from the bundle's folder", () => {
    const worker = sendThreadWorkerFile();
    expect(worker).toMatch(/dist\/src\/runtime\/send-thread\/send-thread-worker\.js$/);
    const root = worker!.slice(0, worker!.indexOf("/dist/"));
    expect(sendThreadWorkerFile(join(root, "dist", "bundle", "clawdis.cjs"))).toBe(worker);
  });

  it("appends the lines the moment the answer is taken, while the main thread cannot run; hands the answer over", async () => {
    await start();
    const answer = thread.fetch(`${http.url}/taken`, post("{}"), 200, "line one\nline two\n");
    // Not one turn of this thread's event loop until the line is in the file.
    blockUntil(() => read() === "line one\nline two\n", "the send thread to write the confirmation");
    const { answer: res, taken, seq } = await answer;
    expect(taken).toBe(true);
    expect(seq).toBeGreaterThan(0);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-fake")).toBe("yes");
    expect(await res.json()).toEqual({ ok: true, result: { message_id: 1 } });
  });

  it("writes nothing for an answer that is not taken", async () => {
    await start();
    const { answer, taken } = await thread.fetch(`${http.url}/refused`, post("{}"), 200, "never\n");
    expect(taken).toBe(false);
    expect(answer.status).toBe(400);
    expect(await answer.json()).toEqual({ ok: false });
    expect(read()).toBe("");
  });

  it("cuts its lines once each is recorded and they grew past 64 KiB, back to what the file held when it started", async () => {
    writeFileSync(file, "from the last run\n");
    await start();
    const big = `${"x".repeat(20 * 1024)}\n`;
    const seqs: number[] = [];
    for (let i = 0; i < 4; i++)
      seqs.push((await thread.fetch(`${http.url}/taken`, post("{}"), 200, big)).seq);
    expect(read().length).toBe("from the last run\n".length + 4 * big.length);
    for (const seq of seqs.slice(0, 3)) thread.recorded(seq);
    // One is not recorded yet: nothing goes. A send after the first three checks that they were handled.
    const probe = await thread.fetch(`${http.url}/refused`, post("{}"), 200, "");
    expect(probe.taken).toBe(false);
    expect(read().length).toBe("from the last run\n".length + 4 * big.length);
    thread.recorded(seqs[3]!);
    await thread.fetch(`${http.url}/refused`, post("{}"), 200, "");
    expect(read()).toBe("from the last run\n");
  });

  it("an answer whose lines cannot be appended (a full disk) is handed over all the same, logged once while it lasts", async () => {
    file = "/dev/full";
    const { logger, lines } = createMemoryLogger();
    await start(logger);
    for (let i = 0; i < 2; i++) {
      const { answer, taken } = await thread.fetch(`${http.url}/taken`, post("{}"), 200, "line\n");
      expect(taken).toBe(true);
      expect(await answer.json()).toEqual({ ok: true, result: { message_id: 1 } });
    }
    const warnings = lines.filter((l) => l.message.startsWith("could not write a delivery's confirmation"));
    expect(warnings.map((l) => l.fields?.error)).toEqual([expect.stringMatching(/ENOSPC/)]);
  });

  it("an aborted signal rejects at once with the AbortError and the request is dropped; a refused connection rejects with its code", async () => {
    await start();
    const controller = new AbortController();
    const hanging = thread.fetch(
      `${http.url}/hang`,
      { ...post("{}"), signal: controller.signal },
      200,
      "x\n",
    );
    // The request reached the server before the abort.
    for (const end = Date.now() + 10_000; (await http.requests()) < 1; ) {
      if (Date.now() > end) throw new Error("the hanging request never reached the server");
    }
    controller.abort();
    await expect(hanging).rejects.toMatchObject({ name: "AbortError" });
    const closed = await offThreadHttp();
    const url = closed.url;
    await closed.close();
    await expect(thread.fetch(`${url}/taken`, post("{}"), 200, "x\n")).rejects.toMatchObject({
      code: "ECONNREFUSED",
    });
    expect(read()).toBe("");
  });

  it("a thread that stops rejects what waits on it and is down for good; one without its compiled file never runs", async () => {
    const closing = createMemoryLogger();
    await start(closing.logger);
    const hanging = thread.fetch(`${http.url}/hang`, post("{}"), 200, "x\n");
    await thread.close();
    await expect(hanging).rejects.toThrow(/the send thread stopped/);
    // A stop the gateway asked for is no warning (every shutdown closes the thread).
    expect(closing.lines.filter((line) => line.level === "warn")).toEqual([]);
    expect(thread.up).toBe(false);
    await expect(thread.fetch(`${http.url}/taken`, post("{}"), 200, "x\n")).rejects.toThrow(/not running/);
    const { logger, lines } = createMemoryLogger();
    const missing = new SendThread({ confirmationsPath: file, logger, workerFile: undefined });
    expect(await missing.ready).toBe(false);
    expect(missing.up).toBe(false);
    expect(lines.map((line) => line.message)).toContain(
      "the send thread's compiled file is missing: replies are sent from the main thread",
    );
  });

  it("a FIFO at the file's path fails the start at once (no reader to wait for)", async () => {
    execFileSync("mkfifo", [file]);
    const { logger, lines } = createMemoryLogger();
    thread = new SendThread({ confirmationsPath: file, logger, startDeadlineMs: 60_000 });
    const settled = await Promise.race([
      thread.ready,
      new Promise<string>((resolve) => setTimeout(() => resolve("ready still unsettled after 5 s"), 5000)),
    ]);
    expect(settled).toBe(false);
    expect(lines.map((line) => [line.message, line.fields?.why])).toContainEqual([
      "the send thread stopped",
      expect.stringMatching(/ENXIO/),
    ]);
  });

  it("a thread that does not start within its deadline is given up (ready false, logged), not waited for", async () => {
    // A worker that never says it is ready.
    const silent = join(dir, "silent.mjs");
    writeFileSync(silent, "setInterval(() => {}, 1000);\n");
    const { logger, lines } = createMemoryLogger();
    thread = new SendThread({ confirmationsPath: file, logger, workerFile: silent, startDeadlineMs: 200 });
    const settled = await Promise.race([
      thread.ready,
      new Promise<string>((resolve) => setTimeout(() => resolve("ready still unsettled after 5 s"), 5000)),
    ]);
    expect(settled).toBe(false);
    expect(thread.up).toBe(false);
    expect(lines.map((line) => [line.message, line.fields?.afterMs])).toContainEqual([
      "the send thread did not start in time: replies are sent from the main thread",
      200,
    ]);
  });
});
