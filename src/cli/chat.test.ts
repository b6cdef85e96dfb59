import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runChat, type TerminalChat } from "./chat.js";
import { recordingIO } from "./io.js";

/** `clawdis chat` finds the gateway as `clawdis agent` does; the chat itself is plugins/terminal (its own tests). */

const TOKEN = "chat-test-token";
let state: string;
let server: Server | undefined;

beforeEach(async () => {
  state = await mkdtemp(join(tmpdir(), "clawdis-chat-"));
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

/** A stand-in gateway: `/api/status` answers 200 for TOKEN, 401 otherwise. Returns its URL. */
async function fakeGateway(): Promise<string> {
  server = createServer((req, res) => {
    const ok = req.headers.authorization === `Bearer ${TOKEN}`;
    res.writeHead(ok ? 200 : 401, { "content-type": "application/json" });
    res.end(JSON.stringify(ok ? { mainKey: "main" } : { error: "unauthorized" }));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await writeFile(join(state, "clawdis.json"), `{ gateway: { port: ${port}, bind: "127.0.0.1" } }`);
  return `http://127.0.0.1:${port}`;
}

function recordingChat(): { chat: TerminalChat; calls: { baseUrl: string; token: string }[] } {
  const calls: { baseUrl: string; token: string }[] = [];
  return {
    calls,
    chat: async (options) => {
      calls.push({ baseUrl: options.baseUrl, token: options.token });
      return 0;
    },
  };
}

describe("clawdis chat", () => {
  it("says what is wrong when a gateway answers but refuses the token, instead of 'not running'", async () => {
    const url = await fakeGateway();
    const tokenPath = join(state, "gateway.token");
    await writeFile(tokenPath, "not-the-token\n", { mode: 0o600 });
    const io = recordingIO({ CLAWDIS_STATE_DIR: state, HOME: state });
    const { chat, calls } = recordingChat();
    await expect(runChat(io, chat)).rejects.toMatchObject({
      code: "GATEWAY_UNREACHABLE",
      exitCode: 1,
      message: expect.stringContaining(
        `a gateway answers at ${url} but it refused the token in ${tokenPath}`,
      ),
    });
    expect(io.err).not.toContain("not running");
    expect(calls).toEqual([]);
  });

  it("starts the terminal chat with the gateway's URL and token", async () => {
    const url = await fakeGateway();
    await writeFile(join(state, "gateway.token"), `${TOKEN}\n`, { mode: 0o600 });
    const io = recordingIO({ CLAWDIS_STATE_DIR: state, HOME: state });
    const { chat, calls } = recordingChat();
    expect(await runChat(io, chat)).toBe(0);
    expect(calls).toEqual([{ baseUrl: url, token: TOKEN }]);
  });

  it("exits 1 with one line when no gateway answers", async () => {
    const url = await fakeGateway();
    const s = server!;
    server = undefined;
    await new Promise<void>((resolve) => s.close(() => resolve()));
    const io = recordingIO({ CLAWDIS_STATE_DIR: state, HOME: state });
    const { chat, calls } = recordingChat();
    expect(await runChat(io, chat)).toBe(1);
    expect(io.err).toBe(`the gateway is not running at ${url}: start it with \`clawdis gateway\`\n`);
    expect(calls).toEqual([]);
  });
});
