import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isClawdisError } from "../core/errors.js";
import { runAgent } from "./agent.js";
import type { GatewayDeps } from "./gateway.js";
import { recordingIO } from "./io.js";

/**
 * `clawdis agent` through a running gateway, against a stand-in for the gateway's HTTP API on 127.0.0.1 (the
 * real gateway, killed mid-turn, is in test/e2e/agent-stream.test.ts).
 */

const TOKEN = "agent-test-token";
let state: string;
let server: Server | undefined;
let agentRequests: { headers: IncomingMessage["headers"]; body: Record<string, unknown> }[];

const deps: GatewayDeps = { builtinPlugins: async () => [], configSections: async () => [], version: "test" };

beforeEach(async () => {
  state = await mkdtemp(join(tmpdir(), "clawdis-agent-"));
  agentRequests = [];
  await writeFile(join(state, "gateway.token"), `${TOKEN}\n`, { mode: 0o600 });
});
afterEach(async () => {
  const s = server;
  server = undefined;
  if (s) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  await rm(state, { recursive: true, force: true });
});

type Reply = (res: ServerResponse) => void;

/** Answers /api/status (200 with the right token, else 401) and /api/agent with `reply`. */
async function fakeGateway(reply: Reply): Promise<string> {
  server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      raw += chunk;
    });
    req.on("end", () => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "unauthorized", message: "send the gateway token" }));
      } else if (req.url === "/api/status") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ mainKey: "main" }));
      } else if (req.url === "/api/agent") {
        agentRequests.push({ headers: req.headers, body: JSON.parse(raw) as Record<string, unknown> });
        reply(res);
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await writeFile(join(state, "clawdis.json"), `{ gateway: { port: ${port}, bind: "127.0.0.1" } }`);
  return `http://127.0.0.1:${port}`;
}

function sseHead(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
  res.write(": connected\n\n");
}

function send(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function done(text: string, stopReason = "end") {
  return {
    payloads: [{ text }],
    meta: { durationMs: 5, model: "m", usage: null, stopReason, sessionKey: "main", sessionId: "s1" },
  };
}

/** A turn with a tool call between two streamed parts. */
const toolTurn: Reply = (res) => {
  sseHead(res);
  send(res, "accepted", { journalId: "j1", sessionKey: "main" });
  send(res, "delta", { text: "Let me " });
  send(res, "delta", { text: "look." });
  send(res, "tool-call", { callId: "c1", name: "bash", arguments: '{"command":\n "ls"}' });
  send(res, "tool-result", { callId: "c1", name: "bash", ok: true, output: "a.txt" });
  send(res, "delta", { text: "One file." });
  send(res, "done", done("One file."));
  res.end();
};

async function agent(options: { isTTY: boolean; env?: Record<string, string>; json?: boolean }) {
  const io = recordingIO({ CLAWDIS_STATE_DIR: state, HOME: state, ...options.env }, options.isTTY);
  const writes: string[] = [];
  const stdout = io.stdout;
  io.stdout = (text) => {
    writes.push(text);
    stdout(text);
  };
  try {
    const code = await runAgent({ message: "hello", json: options.json }, io, deps);
    return { code, out: io.out, err: io.err, writes };
  } catch (error) {
    return { error, out: io.out, err: io.err, writes };
  }
}

describe("clawdis agent through the gateway", () => {
  it("on a terminal streams the reply as it comes, with each tool call as one dim line", async () => {
    await fakeGateway(toolTurn);
    const run = await agent({ isTTY: true });
    expect(run.code).toBe(0);
    expect(run.out).toBe('Let me look.\n\u001b[2m⚙ bash {"command": "ls"}\u001b[22m\nOne file.\n');
    // Streamed: the deltas were written one by one, before the turn ended.
    expect(run.writes.slice(0, 2)).toEqual(["Let me ", "look."]);
    expect(agentRequests[0]!.headers.accept).toBe("text/event-stream");
    expect(agentRequests[0]!.body).toMatchObject({ message: "hello", channel: "cli" });
    expect(agentRequests[0]!.body.messageId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("uses no colour with NO_COLOR, and prints a notice the stream did not show", async () => {
    await fakeGateway((res) => {
      sseHead(res);
      send(res, "accepted", { journalId: "j1", sessionKey: "main" });
      send(res, "delta", { text: "Work\u001b]0;title\u0007ing" });
      send(res, "tool-call", { callId: "c1", name: "read", arguments: "{}" });
      send(res, "tool-result", {
        callId: "c1",
        name: "read",
        ok: false,
        output: "ENOENT: no such file\nstack",
      });
      send(res, "done", done("⚠️ The model did not answer in time. The session is ready.", "timeout"));
      res.end();
    });
    const run = await agent({ isTTY: true, env: { NO_COLOR: "1" } });
    expect(run.code).toBe(1);
    expect(run.out).toBe(
      "Work]0;titleing\n⚙ read {}\n✗ read failed: ENOENT: no such file\n⚠️ The model did not answer in time. The session is ready.\n",
    );
    expect(run.out).not.toContain("\u001b");
  });

  it("piped, prints only the final reply, as plain text", async () => {
    await fakeGateway(toolTurn);
    const run = await agent({ isTTY: false });
    expect(run.code).toBe(0);
    expect(run.out).toBe("One file.\n");
  });

  it("with --json on a terminal prints only the JSON body", async () => {
    await fakeGateway(toolTurn);
    const run = await agent({ isTTY: true, json: true });
    expect(JSON.parse(run.out)).toEqual(done("One file."));
  });

  it("when the gateway goes away after accepting: no stack, the message is safe, exit 1", async () => {
    await fakeGateway((res) => {
      sseHead(res);
      send(res, "accepted", { journalId: "j1", sessionKey: "main" });
      send(res, "delta", { text: "Half a" });
      // The gateway dies: the connection drops without `done`.
      setImmediate(() => res.socket?.destroy());
    });
    for (const isTTY of [true, false]) {
      const run = await agent({ isTTY });
      expect(isClawdisError(run.error, "GATEWAY_UNREACHABLE")).toBe(true);
      const error = run.error as Error;
      expect(error.message).toMatch(
        /^the gateway at http:\/\/127\.0\.0\.1:\d+ went away during the turn\. Your message is safe in its journal and will be answered \(session main\) after the gateway restarts/,
      );
      expect((error as { exitCode?: number }).exitCode).toBe(1);
    }
  });

  it("when the stream ends without done, says the same", async () => {
    await fakeGateway((res) => {
      sseHead(res);
      send(res, "accepted", { journalId: "j1", sessionKey: "main" });
      res.end();
    });
    const run = await agent({ isTTY: false });
    expect((run.error as Error).message).toContain("went away during the turn. Your message is safe");
  });

  it("when the gateway drops the connection before it confirmed the message, says it may not have it", async () => {
    await fakeGateway((res) => res.socket?.destroy());
    const run = await agent({ isTTY: false });
    expect(isClawdisError(run.error, "GATEWAY_UNREACHABLE")).toBe(true);
    expect((run.error as Error).message).toMatch(/did not confirm the message \(.+\); it may not have it/);
    expect((run.error as Error).message).not.toContain("fetch failed");
  });

  it("refused at /api/agent: names the token file", async () => {
    await fakeGateway((res) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end("{}");
    });
    const run = await agent({ isTTY: false });
    expect((run.error as Error).message).toBe(
      `the gateway at ${`http://127.0.0.1:${(server!.address() as AddressInfo).port}`} refused the token in ${join(state, "gateway.token")}; restart the gateway or fix the token file`,
    );
  });

  it("a token the gateway refuses already at /api/status is an error, never a run in-process", async () => {
    const url = await fakeGateway(toolTurn);
    await writeFile(join(state, "gateway.token"), "wrong\n");
    const run = await agent({ isTTY: false });
    expect(isClawdisError(run.error, "GATEWAY_UNREACHABLE")).toBe(true);
    expect((run.error as Error).message).toContain(`a gateway answers at ${url} but it refused the token in`);
    expect(agentRequests).toEqual([]);
  });
});
