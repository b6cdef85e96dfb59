/**
 * The bench's request-spans preload (bench/request-spans.ts), run as the benches run it: `node --import` of the
 * compiled module in a server process of its own, whose handler makes an outgoing request as the gateway and the
 * relay do. What it must time is the span from a request coming in to the outgoing request going out, for tagged
 * requests only, and nothing for an outgoing request with no tagged request in flight.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { readSpans } from "../bench/bench-processes.js";

const preload = pathToFileURL(join(import.meta.dirname, "..", "dist", "bench", "request-spans.js")).href;

// The server under the preload: `/` answers at once; `/relay` answers after a request of its own to the target
// (TARGET_PORT, a server in the test's process, so that the only requests coming in are the test's);
// `/answer-then-fetch` answers at once and then makes that request, printing "fetched" when it is done. Before it
// listens, it makes one outgoing request with nothing coming in (as the gateway's model check at start).
// `/relay-twice` makes that request, prints "first" when it is answered, and makes it again once a line comes in
// on stdin: a span ends at the first.
const server = `
const http = require("node:http");
const target = Number(process.env.TARGET_PORT);
const get = () => new Promise((resolve) => http.get({ host: "127.0.0.1", port: target, path: "/" }, (res) => { res.resume(); res.on("end", resolve); }));
const s = http.createServer((req, res) => {
  req.resume();
  if (req.url === "/relay") void get().then(() => res.end("relayed"));
  else if (req.url === "/relay-twice") {
    void get().then(() => {
      process.stdout.write("first\\n");
      process.stdin.once("data", () => void get().then(() => res.end("relayed twice")));
    });
  }
  else if (req.url === "/answer-then-fetch") {
    res.on("finish", () => void get().then(() => process.stdout.write("fetched\\n")));
    res.end("ok");
  } else res.end("ok");
});
s.listen(0, "127.0.0.1", async () => {
  await get();
  process.stdout.write(JSON.stringify({ port: s.address().port }) + "\\n");
});
process.on("SIGTERM", () => s.close(() => process.exit(0)));
`;

function post(port: number, path: string, id?: string): Promise<{ sentAt: bigint; doneAt: bigint }> {
  return new Promise((resolve, reject) => {
    const sentAt = process.hrtime.bigint();
    const req = request(
      { host: "127.0.0.1", port, path, method: "POST", headers: id ? { "x-bench-id": id } : {} },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ sentAt, doneAt: process.hrtime.bigint() }));
      },
    );
    req.on("error", reject);
    req.end("{}");
  });
}

let child: ChildProcess | undefined;
let dir: string | undefined;
let target: Server | undefined;

afterEach(async () => {
  child?.kill("SIGKILL");
  child = undefined;
  target?.closeAllConnections();
  await new Promise((resolve) => (target ? target.close(resolve) : resolve(undefined)));
  target = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The server in `cwd`, with CLAWDIS_BENCH_SPANS set to `spans` (unset if undefined). */
async function start(
  cwd: string,
  spans: string | undefined,
): Promise<{
  child: ChildProcess;
  port: number;
  errors: string[];
  line: (text: string) => Promise<void>;
}> {
  const answering = createServer((_req, res) => res.end("target"));
  target = answering;
  await new Promise<void>((resolve) => answering.listen(0, "127.0.0.1", resolve));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TARGET_PORT: String((answering.address() as AddressInfo).port),
  };
  delete env.CLAWDIS_BENCH_SPANS;
  if (spans !== undefined) env.CLAWDIS_BENCH_SPANS = spans;
  const proc = spawn(process.execPath, ["--import", preload, "-e", server], {
    cwd,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  child = proc;
  // Its stdout, line by line; `line(text)` waits for the next line that is `text`.
  const lines: string[] = [];
  const errors: string[] = [];
  const waiting: { text: string; resolve: () => void }[] = [];
  let buffer = "";
  proc.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
      const text = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      lines.push(text);
      const at = waiting.findIndex((w) => w.text === text);
      if (at !== -1) waiting.splice(at, 1)[0]?.resolve();
    }
  });
  const line = (text: string) => new Promise<void>((resolve) => waiting.push({ text, resolve }));
  proc.stderr?.on("data", (chunk: Buffer) => errors.push(chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    proc.stdout?.on("data", () => {
      if (lines.length > 0) resolve((JSON.parse(lines[0] as string) as { port: number }).port);
    });
    proc.once("exit", (code) => reject(new Error(`the server exited ${code}`)));
  });
  return { child: proc, port, errors, line };
}

const exited = (proc: ChildProcess) => new Promise<number | null>((resolve) => proc.once("exit", resolve));

describe("bench/request-spans.ts", () => {
  it("times each tagged request from coming in to its outgoing request, and nothing else", async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-spans-"));
    const { child: proc, port, line, errors } = await start(dir, dir);
    const tagged = await post(port, "/relay", "first");
    await post(port, "/relay"); // not tagged: its outgoing request is nobody's span
    const answeredAtOnce = await post(port, "/", "no-outgoing");
    await post(port, "/relay"); // would end the span above if one were left open
    // Its outgoing request comes after its answer: not its span.
    const fetched = line("fetched");
    await post(port, "/answer-then-fetch", "answered-first");
    await fetched;
    const second = await post(port, "/relay", "second");
    // Between its two outgoing requests, at `between` on the one monotonic clock.
    const firstDone = line("first");
    const twice = post(port, "/relay-twice", "twice");
    await firstDone;
    const between = process.hrtime.bigint();
    proc.stdin?.write("go\n");
    const relayedTwice = await twice;
    const gone = exited(proc);
    proc.kill("SIGTERM");
    await gone;
    const spans = await readSpans(dir, proc.pid ?? -1);
    // A request answered before any outgoing request has no span; the three tagged relays do, each to its first.
    expect([...spans.keys()].sort()).toEqual(["first", "second", "twice"]);
    expect(spans.get("twice")).toBeLessThan(Number(between - relayedTwice.sentAt) / 1e6);
    for (const [id, answer] of [
      ["first", tagged],
      ["second", second],
    ] as const) {
      const span = spans.get(id) ?? Number.NaN;
      // Inside the client's own round trip of that request (one monotonic clock for both processes).
      expect(span).toBeGreaterThan(0);
      expect(span).toBeLessThan(Number(answer.doneAt - answer.sentAt) / 1e6);
    }
    expect(answeredAtOnce.doneAt).toBeGreaterThan(answeredAtOnce.sentAt);
    expect(errors.join("")).toBe("");
  });

  it("does nothing without CLAWDIS_BENCH_SPANS", async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-spans-"));
    const { child: proc, port, errors } = await start(dir, undefined);
    await post(port, "/relay", "first");
    const gone = exited(proc);
    proc.kill("SIGTERM");
    expect(await gone).toBe(0);
    // Not in its working directory either, and no error at exit.
    expect(await readdir(dir)).toEqual([]);
    expect(errors.join("")).toBe("");
  });
});
