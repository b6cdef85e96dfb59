import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough, Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { runTerminalChat } from "./chat.js";

const TOKEN = "terminal-test-token";

interface Recorded {
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

type AgentReply = (res: ServerResponse, body: Record<string, unknown>) => void;

interface FakeGateway {
  baseUrl: string;
  requests: Recorded[];
}

let server: Server | undefined;
/** What the fake's /api/status lists as waiting for an approval. */
let statusApprovals: { chatId: string; what: string }[] = [];

afterEach(async () => {
  const s = server;
  server = undefined;
  statusApprovals = [];
  if (s) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

function sse(res: ServerResponse, events: [string, unknown][]): void {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
  res.write(": connected\n\n");
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

function done(text: string, stopReason = "end") {
  return { payloads: [{ text }], meta: { durationMs: 5, stopReason, sessionKey: "main", sessionId: "s1" } };
}

/** A stand-in for the gateway's HTTP API: /api/status, and /api/agent answered by `reply`. */
async function fakeGateway(reply: AgentReply): Promise<FakeGateway> {
  const requests: Recorded[] = [];
  server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      raw += chunk;
    });
    req.on("end", () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      requests.push({ path: req.url ?? "", headers: req.headers, body });
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "unauthorized", message: "send the gateway token" }));
      } else if (req.url === "/api/status") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ mainKey: "main", model: { model: "test-model" }, approvals: statusApprovals }),
        );
      } else if (req.url === "/api/agent" && req.method === "POST") {
        reply(res, body);
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, requests };
}

async function chat(
  baseUrl: string,
  lines: string[],
  options: { token?: string; isTTY?: boolean; color?: boolean } = {},
) {
  const output = new PassThrough();
  let printed = "";
  output.setEncoding("utf8");
  output.on("data", (chunk: string) => {
    printed += chunk;
  });
  const code = await runTerminalChat({
    baseUrl,
    token: options.token ?? TOKEN,
    input: Readable.from(lines),
    output,
    isTTY: options.isTTY ?? false,
    ...(options.color !== undefined ? { color: options.color } : {}),
    chatId: "terminal-test",
  });
  return { code, printed };
}

describe("runTerminalChat", () => {
  it("a turn that waits for an approval prints the prompt for this chat and how to answer", async () => {
    statusApprovals = [
      { chatId: "terminal-other", what: "bash wants to run\nrm -rf /\nin /elsewhere" },
      { chatId: "terminal-test", what: "bash wants to run\nmake\nin /w" },
    ];
    const gw = await fakeGateway((res) =>
      sse(res, [
        ["accepted", { journalId: "j1", sessionKey: "main" }],
        ["done", { payloads: [], meta: { durationMs: 5, stopReason: "waiting", sessionKey: "main" } }],
      ]),
    );
    const { code, printed } = await chat(gw.baseUrl, ["build it\n"]);
    expect(code).toBe(0);
    expect(printed).toBe(
      "Approval needed: bash wants to run\nmake\nin /w\nAnswer /approve, /approve always (bash: this exact command from now on) or /deny [reason].\n",
    );
  });

  it("streams the reply, shows tool calls on one line, and quits with 0 on /quit", async () => {
    const gw = await fakeGateway((res) =>
      sse(res, [
        ["accepted", { journalId: "j1", sessionKey: "main" }],
        ["delta", { text: "Let me look." }],
        ["tool-call", { callId: "c1", name: "bash", arguments: '{"command":\n "ls"}' }],
        ["tool-result", { callId: "c1", name: "bash", ok: true, output: "a.txt\nb.txt" }],
        ["delta", { text: "Two " }],
        ["delta", { text: "files." }],
        ["done", done("Two files.")],
      ]),
    );
    const { code, printed } = await chat(gw.baseUrl, ["hello\n", "/quit\n", "never sent\n"]);
    expect(code).toBe(0);
    expect(printed).toBe('Let me look.\n⚙ bash {"command": "ls"}\nTwo files.\n');
    const agent = gw.requests.filter((r) => r.path === "/api/agent");
    expect(agent).toHaveLength(1);
    expect(agent[0]!.headers.accept).toBe("text/event-stream");
    expect(agent[0]!.headers["content-type"]).toBe("application/json");
    expect(agent[0]!.body).toEqual({
      message: "hello",
      channel: "terminal",
      chatId: "terminal-test",
      messageId: agent[0]!.body.messageId,
    });
    expect(agent[0]!.body.messageId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("prints a command's answer from done.payloads, and ends with 0 at end of input", async () => {
    const gw = await fakeGateway((res, body) =>
      sse(res, [
        ["accepted", { journalId: "j", sessionKey: "main" }],
        ["done", done(`status for ${String(body.message)}\nsession: main`, "command")],
      ]),
    );
    const { code, printed } = await chat(gw.baseUrl, ["/status\n", "  \n", "/new\n"]);
    expect(code).toBe(0);
    expect(printed).toBe("status for /status\nsession: main\nstatus for /new\nsession: main\n");
    const ids = gw.requests.filter((r) => r.path === "/api/agent").map((r) => r.body.messageId);
    expect(ids).toHaveLength(2);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it("prints a notice that differs from the streamed text, and a failed tool in one line", async () => {
    const gw = await fakeGateway((res) =>
      sse(res, [
        ["delta", { text: "Working" }],
        ["tool-call", { callId: "c1", name: "read", arguments: "{}" }],
        ["tool-result", { callId: "c1", name: "read", ok: false, output: "ENOENT: no such file\nstack…" }],
        ["done", done("The turn took too long and was stopped.", "timeout")],
      ]),
    );
    const { printed } = await chat(gw.baseUrl, ["go\n"]);
    expect(printed).toBe(
      "Working\n⚙ read {}\n✗ read failed: ENOENT: no such file\nThe turn took too long and was stopped.\n",
    );
  });

  it("strips terminal control sequences from model text", async () => {
    const gw = await fakeGateway((res) =>
      sse(res, [
        ["delta", { text: "safe\u001b]0;pwned\u0007 text" }],
        ["done", done("safe\u001b]0;pwned\u0007 text")],
      ]),
    );
    const { printed } = await chat(gw.baseUrl, ["x\n"]);
    expect(printed).toBe("safe]0;pwned text\n");
  });

  it("reports an error answer and carries on with the next line", async () => {
    let calls = 0;
    const gw = await fakeGateway((res) => {
      calls += 1;
      if (calls === 1) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "bad-request", message: "message is required" }));
        return;
      }
      sse(res, [["done", done("ok")]]);
    });
    const { code, printed } = await chat(gw.baseUrl, ["one\n", "two\n"]);
    expect(code).toBe(0);
    expect(printed).toBe("error: message is required\nok\n");
  });

  it("when the stream ends without done, says the message is safe and ends with 1", async () => {
    const gw = await fakeGateway((res) => sse(res, [["delta", { text: "partial" }]]));
    const { code, printed } = await chat(gw.baseUrl, ["x\n", "never sent\n"]);
    expect(code).toBe(1);
    expect(printed).toBe(
      `partial\nthe gateway at ${gw.baseUrl} went away during the turn. Your message is safe in its journal and will be answered after the gateway restarts (\`clawdis gateway\`)\n`,
    );
    expect(gw.requests.filter((r) => r.path === "/api/agent")).toHaveLength(1);
  });

  it("when the gateway dies mid-reply, says the message is safe, no raw error, and ends with 1", async () => {
    const gw = await fakeGateway((res) => {
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
      res.write(`event: accepted\ndata: ${JSON.stringify({ journalId: "j", sessionKey: "main" })}\n\n`);
      res.write(`event: delta\ndata: ${JSON.stringify({ text: "Half" })}\n\n`);
      setImmediate(() => res.socket?.destroy());
    });
    const { code, printed } = await chat(gw.baseUrl, ["x\n"]);
    expect(code).toBe(1);
    expect(printed).toContain("Half\nthe gateway at");
    expect(printed).toContain("went away during the turn. Your message is safe in its journal");
    expect(printed).not.toMatch(/terminated|TypeError/);
  });

  it("uses ANSI dim for tool lines only at a terminal", async () => {
    const gw = await fakeGateway((res) =>
      sse(res, [
        ["tool-call", { callId: "c1", name: "bash", arguments: '{"command":"ls"}' }],
        ["done", done("done")],
      ]),
    );
    const { printed } = await chat(gw.baseUrl, ["x\n"], { isTTY: true });
    expect(printed).toContain('\u001b[2m⚙ bash {"command":"ls"}\u001b[22m\n');
    expect(printed).toContain("\u001b[2mclawdis chat — session main, model test-model.");
  });

  describe("Markdown in the reply", () => {
    const markdownReply = (res: ServerResponse) =>
      sse(res, [
        ["delta", { text: "Here is **bo" }],
        ["delta", { text: "ld text** and `snake_case`\n```js\nconst a_b = 1;\n``" }],
        ["delta", { text: "`\n- item *one*" }],
        ["done", done("Here is **bold text** and `snake_case`\n```js\nconst a_b = 1;\n```\n- item *one*")],
      ]);

    it("at a terminal is rendered with ANSI styles, each line once, however the deltas split it", async () => {
      const gw = await fakeGateway(markdownReply);
      const { printed } = await chat(gw.baseUrl, ["x\n"], { isTTY: true });
      expect(printed).toContain(
        "Here is \u001b[1mbold text\u001b[22m and \u001b[36msnake_case\u001b[39m\n" +
          "\u001b[2m```js\u001b[22m\n\u001b[36mconst a_b = 1;\u001b[39m\n\u001b[2m```\u001b[22m\n" +
          "• item \u001b[3mone\u001b[23m\n",
      );
      expect(printed).not.toContain("**");
      expect(printed.split("bold text")).toHaveLength(2);
    });

    it("piped, or at a terminal with NO_COLOR, is printed as it arrives, raw", async () => {
      const raw = "Here is **bold text** and `snake_case`\n```js\nconst a_b = 1;\n```\n- item *one*\n";
      const gw = await fakeGateway(markdownReply);
      expect((await chat(gw.baseUrl, ["x\n"])).printed).toBe(raw);
      const noColor = await chat(gw.baseUrl, ["x\n"], { isTTY: true, color: false });
      expect(noColor.printed).toContain(raw);
      // readline still moves the cursor at the prompt; no style (bold, dim, italic, colour) is set.
      for (const sgr of ["1", "2", "3", "4", "36"]) expect(noColor.printed).not.toContain(`\u001b[${sgr}m`);
    });

    it("renders an answer that was not streamed (done only) the same way", async () => {
      const gw = await fakeGateway((res) => sse(res, [["done", done("## Status\n**ok**", "command")]]));
      const { printed } = await chat(gw.baseUrl, ["/status\n"], { isTTY: true });
      expect(printed).toContain("\u001b[1m\u001b[4mStatus\u001b[24m\u001b[22m\n\u001b[1mok\u001b[22m\n");
    });
  });

  it("exits 1 with one line when the gateway is not running", async () => {
    const gw = await fakeGateway(() => {});
    const closed = gw.baseUrl;
    const s = server!;
    server = undefined;
    await new Promise<void>((resolve) => s.close(() => resolve()));
    const { code, printed } = await chat(closed, ["hello\n"]);
    expect(code).toBe(1);
    expect(printed).toBe(`the gateway is not running at ${closed}: start it with \`clawdis gateway\`\n`);
  });

  it("exits 1 when the gateway refuses the token, before reading any input", async () => {
    const gw = await fakeGateway(() => {});
    const { code, printed } = await chat(gw.baseUrl, ["hello\n"], { token: "wrong" });
    expect(code).toBe(1);
    expect(printed).toContain(`the gateway at ${gw.baseUrl} refused the token`);
    expect(gw.requests.map((r) => r.path)).toEqual(["/api/status"]);
  });
});
