import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runGatewayStop } from "./gateway-stop.js";
import { EXIT, recordingIO } from "./io.js";

/**
 * `clawdis gateway stop` against a loopback server that answers like a gateway (the real binary's case is in
 * test/e2e/gateway-stop.test.ts): what it does when the process does not go away, or the answer is not a stop.
 */
describe("clawdis gateway stop: waiting for the exit", () => {
  let dir: string;
  let server: Server;
  let stopAnswer: { status: number; body: string };
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-stop-"));
    stopAnswer = { status: 202, body: JSON.stringify({ status: "stopping", pid: 4242 }) };
    server = createServer((req, res) => {
      if (req.headers.authorization !== "Bearer tok-0123456789") {
        res.writeHead(401).end("{}");
        return;
      }
      if (req.url === "/api/status") res.writeHead(200).end(JSON.stringify({ pid: 4242 }));
      else if (req.url === "/api/stop" && req.method === "POST")
        res.writeHead(stopAnswer.status).end(stopAnswer.body);
      else res.writeHead(404).end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    await writeFile(join(dir, "clawdis.json"), JSON.stringify({ gateway: { port } }));
    await writeFile(join(dir, "gateway.token"), "tok-0123456789\n");
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  const env = () => ({ CLAWDIS_STATE_DIR: dir, HOME: dir });

  it("exit 0 once the pid it named is gone", async () => {
    const io = recordingIO(env());
    let polls = 0;
    const code = await runGatewayStop(io, undefined, {
      isAlive: (pid) => pid === 4242 && ++polls < 3,
      sleep: async () => {},
    });
    expect(code).toBe(EXIT.ok);
    expect(polls).toBe(3);
    expect(io.err).toContain("the gateway stopped");
  });

  it("exit 1 when the process is still there after the wait, saying so", async () => {
    const io = recordingIO(env());
    const slept: number[] = [];
    const code = await runGatewayStop(io, undefined, {
      isAlive: () => true,
      sleep: async (ms) => {
        slept.push(ms);
      },
      waitMs: 1000,
    });
    expect(code).toBe(EXIT.failed);
    // 1 s in steps of 100 ms, then it gives up.
    expect(slept).toEqual(Array(10).fill(100));
    expect(io.err).toContain("clawdis: the gateway (pid 4242) is still running after 1 s");
  });

  it("exit 1 when the gateway does not take the stop, with its answer", async () => {
    stopAnswer = { status: 503, body: JSON.stringify({ error: "stopping" }) };
    const io = recordingIO(env());
    expect(await runGatewayStop(io, undefined, { isAlive: () => false, sleep: async () => {} })).toBe(
      EXIT.failed,
    );
    expect(io.err).toMatch(/answered 503: \{"error":"stopping"\}/);
  });
});
