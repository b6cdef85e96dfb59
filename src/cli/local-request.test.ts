import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { localRequest } from "./local-request.js";

let server: Server | undefined;

/** A loopback server answering with `handle`; its base URL. */
async function serve(
  handle: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<string> {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (part: string) => {
      body += part;
    });
    req.on("end", () => handle(req, res, body));
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  const open = server;
  server = undefined;
  if (!open) return;
  open.closeAllConnections();
  await new Promise((resolve) => open.close(resolve));
});

describe("localRequest", () => {
  it("sends the method, headers and body, and gives the status and the whole body as text", async () => {
    const url = await serve((req, res, body) => {
      res.writeHead(202, { "content-type": "application/json" });
      // "é" split across two writes: decoded as one character.
      const bytes = Buffer.from(
        JSON.stringify({ method: req.method, auth: req.headers.authorization, body, s: "é" }),
      );
      const cut = bytes.indexOf(0xc3) + 1;
      res.write(bytes.subarray(0, cut));
      setImmediate(() => res.end(bytes.subarray(cut)));
    });
    const answer = await localRequest(`${url}/api/stop`, {
      method: "POST",
      headers: { authorization: "Bearer t" },
      body: '{"a":1}',
      timeoutMs: 10_000,
    });
    expect(answer.status).toBe(202);
    expect(JSON.parse(answer.text)).toEqual({ method: "POST", auth: "Bearer t", body: '{"a":1}', s: "é" });
  });

  it("rejects with the system error when nothing listens", async () => {
    const closed = await serve(() => {});
    const open = server;
    server = undefined;
    await new Promise((resolve) => open?.close(resolve));
    await expect(localRequest(`${closed}/api/status`, { timeoutMs: 10_000 })).rejects.toMatchObject({
      code: "ECONNREFUSED",
    });
  });

  it("rejects with a TimeoutError when no answer's headers come within timeoutMs", async () => {
    const url = await serve(() => {});
    await expect(localRequest(`${url}/api/status`, { timeoutMs: 50 })).rejects.toMatchObject({
      name: "TimeoutError",
    });
  });

  it("resolves with the status and no text when the body breaks off after the headers", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("partial");
      setImmediate(() => res.socket?.destroy());
    });
    expect(await localRequest(`${url}/api/status`, { timeoutMs: 10_000 })).toEqual({ status: 200, text: "" });
  });

  it("resolves with the status and no text when the time runs out while the body comes", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"running":');
    });
    expect(await localRequest(`${url}/api/status`, { timeoutMs: 100 })).toEqual({ status: 200, text: "" });
  });

  it("without timeoutMs, waits for the answer however it comes", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200);
      res.write("a");
      setImmediate(() => res.end("b"));
    });
    expect(await localRequest(`${url}/x`, {})).toEqual({ status: 200, text: "ab" });
  });
});
