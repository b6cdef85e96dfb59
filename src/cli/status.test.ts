import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { recordingIO } from "./io.js";
import { runStatus } from "./status.js";

let state: string;
let servers: Server[] = [];
const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
const now = clock.now();
const MIN = 60_000;

const fakeIO = recordingIO;

const env = () => ({ CLAWDIS_STATE_DIR: state, HOME: state });

/** A stand-in gateway on 127.0.0.1: records the request headers, answers `status` with `body`. */
async function startGateway(
  status: number,
  body: unknown,
): Promise<{ port: number; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(req.url === "/api/status" ? status : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, seen };
}

/** A port on which nothing listens (bound once, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function configure(port: number): Promise<void> {
  await writeFile(join(state, "clawdis.json"), `{ gateway: { port: ${port}, bind: "127.0.0.1" } }`);
}

beforeEach(async () => {
  state = await mkdtemp(join(tmpdir(), "clawdis-status-"));
  await mkdir(join(state, "sessions"));
  const store: Record<string, { sessionId: string; updatedAt: number }> = {};
  for (let n = 0; n < 7; n++) store[`group:${n}`] = { sessionId: `g${n}`, updatedAt: now - n * 10 * MIN };
  store.main = { sessionId: "m", updatedAt: now - 25 * MIN };
  await writeFile(join(state, "sessions", "sessions.json"), JSON.stringify(store));
});

afterEach(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  servers = [];
  await rm(state, { recursive: true, force: true });
});

describe("clawdis status", () => {
  it("without a gateway: store path, count, the five most recent sessions, gateway not running", async () => {
    await configure(await closedPort());
    const io = fakeIO(env());
    expect(await runStatus({ json: true }, io, clock)).toBe(0);
    const report = JSON.parse(io.out);
    expect(report.path).toBe(join(state, "sessions", "sessions.json"));
    expect(report.count).toBe(8);
    expect(report.recent).toEqual([
      { key: "group:0", kind: "group", sessionId: "g0", updatedAt: now, ageMs: 0 },
      { key: "group:1", kind: "group", sessionId: "g1", updatedAt: now - 10 * MIN, ageMs: 10 * MIN },
      { key: "group:2", kind: "group", sessionId: "g2", updatedAt: now - 20 * MIN, ageMs: 20 * MIN },
      { key: "main", kind: "direct", sessionId: "m", updatedAt: now - 25 * MIN, ageMs: 25 * MIN },
      { key: "group:3", kind: "group", sessionId: "g3", updatedAt: now - 30 * MIN, ageMs: 30 * MIN },
    ]);
    expect(report.gateway.running).toBe(false);

    const human = fakeIO(env());
    expect(await runStatus({}, human, clock)).toBe(0);
    expect(human.out).toContain(`store: ${report.path} (8 sessions)`);
    expect(human.out).toMatch(/ {2}main\s+25m\s+direct/);
    expect(human.out).toContain("gateway: not running");
  });

  it("with a gateway: asks /api/status with the token and shows its transports", async () => {
    const body = {
      pid: 4242,
      uptimeMs: 2 * 60 * MIN,
      restarted: { at: now - 2 * MIN, reason: "config change: gateway.port" },
      transports: [
        { id: "telegram", state: "running", detail: "@clawdis_bot" },
        { id: "whatsapp", state: "stopped" },
        {
          id: "echo",
          state: "down",
          detail: "not restarted: fix what the error says",
          lastError: "Telegram says 401: Unauthorized — check telegram.botToken (saving the file is enough)",
        },
        { id: "flaky", state: "down", detail: "restarting in 4s", lastError: "could not reach it" },
      ],
    };
    const gateway = await startGateway(200, body);
    await configure(gateway.port);
    await writeFile(join(state, "gateway.token"), "secret-token-1234567890\n");
    const io = fakeIO(env());
    expect(await runStatus({ json: true }, io, clock)).toBe(0);
    const report = JSON.parse(io.out);
    expect(report.gateway).toEqual({ running: true, url: `http://127.0.0.1:${gateway.port}`, ...body });
    expect(gateway.seen[0]?.authorization).toBe("Bearer secret-token-1234567890");

    const human = fakeIO(env());
    expect(await runStatus({}, human, clock)).toBe(0);
    expect(human.out).toContain(`gateway: running at http://127.0.0.1:${gateway.port}, pid 4242, up 2h`);
    expect(human.out).toContain("gateway: restarted 2m ago: config change: gateway.port");
    expect(human.out).toMatch(/telegram\s+running\s+@clawdis_bot/);
    expect(human.out).toMatch(/whatsapp\s+stopped/);
    // A transport that is down says why and what to do (the error), and when it restarts, in the human view too.
    expect(human.out).toMatch(
      /echo\s+down\s+Telegram says 401: Unauthorized — check telegram\.botToken \(saving the file is enough\)\n/,
    );
    expect(human.out).toMatch(/flaky\s+down\s+could not reach it · restarting in 4s/);
  });

  it("says when the gateway refuses the token", async () => {
    const gateway = await startGateway(401, { error: "unauthorized" });
    await configure(gateway.port);
    await writeFile(join(state, "gateway.token"), "stale-token-1234567890\n");
    const io = fakeIO(env());
    expect(await runStatus({}, io, clock)).toBe(0);
    expect(io.out).toContain("refused the token");
    expect(io.out).toContain(join(state, "gateway.token"));
  });

  it("reports a store that does not parse, still shows the gateway, exit 1", async () => {
    await configure(await closedPort());
    await writeFile(join(state, "sessions", "sessions.json"), "{ broken");
    const io = fakeIO(env());
    expect(await runStatus({ json: true }, io, clock)).toBe(1);
    const report = JSON.parse(io.out);
    expect(report.count).toBeNull();
    expect(report.storeError).toMatch(/does not parse/);
    expect(report.recent).toEqual([]);
    expect(report.gateway.running).toBe(false);
  });

  it("a broken config is exit 2 (thrown for the CLI to print)", async () => {
    await writeFile(join(state, "clawdis.json"), "{ gateway: { port: 'x' } }");
    await expect(runStatus({ json: true }, fakeIO(env()), clock)).rejects.toMatchObject({ exitCode: 2 });
  });
});
