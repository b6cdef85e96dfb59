import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHttpFetch } from "./http-fetch.js";

/** A loopback server whose handler each test sets; it records what arrived and when each answer's socket closed. */
let server: Server;
let url: string;
let handler: (req: IncomingMessage, res: ServerResponse, body: string) => void;
let closed: Promise<void>;
let markClosed: () => void;
beforeEach(async () => {
  closed = new Promise((resolve) => {
    markClosed = resolve;
  });
  server = createServer((req, res) => {
    res.once("close", () => markClosed());
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => handler(req, res, Buffer.concat(parts).toString("utf8")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
/** Whether the answer's socket closed within `ms` (real time: the server's close event, or the deadline). */
async function socketClosedWithin(ms = 5000): Promise<"closed" | `still open after ${number} ms`> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<`still open after ${number} ms`>((resolve) => {
    timer = setTimeout(() => resolve(`still open after ${ms} ms`), ms);
  });
  const result = await Promise.race([closed.then(() => "closed" as const), late]);
  clearTimeout(timer);
  return result;
}
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("createHttpFetch", () => {
  it("sends method, headers and body, and answers with status, headers and the streamed body", async () => {
    let seen: { method?: string; auth?: string; length?: string; body?: string } = {};
    handler = (req, res, body) => {
      seen = {
        method: req.method,
        auth: req.headers.authorization,
        length: req.headers["content-length"],
        body,
      };
      res.writeHead(201, { "content-type": "text/event-stream", "x-request-id": "r1" });
      res.write("data: one\n\n");
      res.end("data: two\n\n");
    };
    const response = await createHttpFetch()(`${url}/v1/chat`, {
      method: "POST",
      headers: { authorization: "Bearer k", "content-type": "application/json" },
      body: '{"a":"ä"}',
    });
    expect(seen).toEqual({ method: "POST", auth: "Bearer k", length: "10", body: '{"a":"ä"}' });
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.headers.get("x-request-id")).toBe("r1");
    expect(await response.text()).toBe("data: one\n\ndata: two\n\n");
  });

  it("sends each header once: its host, the body's length (not a given one), keep-alive, the caller's own", async () => {
    let raw: string[] = [];
    handler = (req, res) => {
      raw = req.rawHeaders;
      res.end("ok");
    };
    // The caller's headers as a plain object (grammY), pairs, or a web Headers (the SDK), names in any case.
    const given: HeadersInit[] = [
      { "X-Custom": "yes", "Content-Length": "999" },
      [
        ["X-Custom", "yes"],
        ["content-length", "999"],
      ],
      new Headers({ "X-Custom": "yes", "Content-Length": "999" }),
    ];
    for (const headers of given) {
      await createHttpFetch()(`${url}/v1/chat`, { method: "POST", headers, body: "four" });
      const pairs: string[] = [];
      for (let i = 0; i < raw.length; i += 2) pairs.push(`${raw[i]?.toLowerCase()}: ${raw[i + 1]}`);
      expect(pairs.sort()).toEqual(
        [`host: ${new URL(url).host}`, "content-length: 4", "connection: keep-alive", "x-custom: yes"].sort(),
      );
    }
  });

  it("credentials in the URL go as basic authorization, unless the call has its own", async () => {
    const seen: (string | undefined)[] = [];
    handler = (req, res) => {
      seen.push(req.headers.authorization);
      res.end("ok");
    };
    const withCredentials = url.replace("http://", "http://me:s%3Acret@");
    const fetchFn = createHttpFetch();
    await (await fetchFn(`${withCredentials}/a`)).text();
    await (await fetchFn(`${withCredentials}/a`, { headers: { authorization: "Bearer k" } })).text();
    expect(seen).toEqual([`Basic ${Buffer.from("me:s:cret").toString("base64")}`, "Bearer k"]);
  });

  it("each call goes to its own URL, however they alternate", async () => {
    const paths: string[] = [];
    handler = (req, res) => {
      paths.push(req.url ?? "");
      res.end("ok");
    };
    const fetchFn = createHttpFetch();
    for (const path of ["/a", "/b", "/b", "/a?x=1"]) await (await fetchFn(`${url}${path}`)).text();
    expect(paths).toEqual(["/a", "/b", "/b", "/a?x=1"]);
  });

  it("an abort before the answer's headers rejects with an AbortError and closes the socket", async () => {
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    handler = () => arrived(); // never answers
    const controller = new AbortController();
    const call = createHttpFetch()(`${url}/hang`, { method: "POST", body: "{}", signal: controller.signal });
    await arrival;
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: "AbortError" });
    expect(await socketClosedWithin()).toBe("closed");
  });

  it("an abort after the headers errors the body with an AbortError and closes the socket", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
    };
    const controller = new AbortController();
    const response = await createHttpFetch()(`${url}/stream`, { signal: controller.signal });
    // Read as the openai SDK reads a body that is async-iterable (its ReadableStreamToAsyncIterable).
    const chunks = (response.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    expect(new TextDecoder().decode((await chunks.next()).value)).toBe("data: first\n\n");
    controller.abort();
    await expect(chunks.next()).rejects.toMatchObject({ name: "AbortError" });
    expect(await socketClosedWithin()).toBe("closed");
  });

  it("the body is read once; a second read is refused, as a Response's is", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"data":[{"id":"m"}]}');
    };
    const response = await createHttpFetch()(`${url}/v1/models`);
    expect(response.bodyUsed).toBe(false);
    expect(await response.json()).toEqual({ data: [{ id: "m" }] });
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it("cancelling a body before reading it (the SDK before a retry) closes the connection", async () => {
    handler = (_req, res) => {
      res.writeHead(503, { "content-type": "text/event-stream" });
      res.write("data: busy\n\n");
    };
    const response = await createHttpFetch()(`${url}/busy`);
    // What the SDK's CancelReadableStream does with an async-iterable body.
    await (response.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]().return?.();
    expect(await socketClosedWithin()).toBe("closed");
  });

  it("stopping a read part way closes the connection", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
    };
    const response = await createHttpFetch()(`${url}/stream`);
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      expect(new TextDecoder().decode(chunk)).toBe("data: first\n\n");
      break;
    }
    expect(await socketClosedWithin()).toBe("closed");
  });

  it("an already aborted signal sends nothing", async () => {
    let requests = 0;
    handler = (_req, res) => {
      requests++;
      res.end();
    };
    await expect(createHttpFetch()(url, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(requests).toBe(0);
  });

  it("an https URL speaks TLS (node:https, loaded at its first use)", async () => {
    const fixtures = join(import.meta.dirname, "..", "..", "test", "fixtures", "tls");
    const tls = createHttpsServer(
      {
        key: readFileSync(join(fixtures, "self-signed.key.pem")),
        cert: readFileSync(join(fixtures, "self-signed.cert.pem")),
      },
      (_req, res) => res.end("secret"),
    );
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    try {
      const port = (tls.address() as AddressInfo).port;
      // The certificate is trusted by nobody: the handshake happened, and was refused.
      await expect(createHttpFetch()(`https://127.0.0.1:${port}/`)).rejects.toMatchObject({
        code: "DEPTH_ZERO_SELF_SIGNED_CERT",
      });
    } finally {
      tls.closeAllConnections();
      await new Promise((resolve) => tls.close(resolve));
    }
  });

  it("a refused connection rejects with the system error code", async () => {
    const port = (server.address() as AddressInfo).port;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await expect(createHttpFetch()(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({
      code: "ECONNREFUSED",
    });
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });

  it("a connection that breaks mid-answer errors the body", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n", () => res.socket?.destroy());
    };
    const response = await createHttpFetch()(`${url}/broken`);
    // A lost connection, not an abort: the SDK must not take it for a clean (cancelled) end.
    await expect(response.text()).rejects.toMatchObject({ code: "ECONNRESET" });
  });

  it("a 204 has no body; connections are kept alive for the next call", async () => {
    const ports = new Set<number>();
    handler = (req, res) => {
      ports.add(req.socket.remotePort ?? 0);
      res.writeHead(204);
      res.end();
    };
    const fetchFn = createHttpFetch();
    const first = await fetchFn(`${url}/empty`);
    expect(first.status).toBe(204);
    expect(first.body).toBeNull();
    await new Promise((resolve) => setImmediate(resolve));
    await fetchFn(`${url}/empty`);
    expect(ports.size).toBe(1);
  });
});

describe("a body read pushed (each)", () => {
  /** The answer's body as llm-client reads it: pushed (http-answer.ts, PushedBody). */
  const pushed = (response: Response) =>
    response.body as unknown as { each(onChunk: (chunk: Uint8Array) => boolean | undefined): Promise<void> };

  it("gives each piece as it arrives, and resolves at the answer's end", async () => {
    let answer!: ServerResponse;
    handler = (_req, res) => {
      answer = res;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
    };
    const response = await createHttpFetch()(`${url}/stream`);
    const pieces: string[] = [];
    const read = pushed(response).each((chunk) => {
      pieces.push(new TextDecoder().decode(chunk));
      // The second piece is written only once the first arrived.
      if (pieces.length === 1) answer.end("data: two\n\n");
      return undefined;
    });
    await read;
    expect(pieces).toEqual(["data: one\n\n", "data: two\n\n"]);
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it("a second read is refused", async () => {
    handler = (_req, res) => res.end("data: one\n\n");
    const response = await createHttpFetch()(`${url}/stream`);
    await response.text();
    await expect(pushed(response).each(() => undefined)).rejects.toThrow(TypeError);
  });

  it("stopping part way (false) resolves, gives nothing more and closes the connection", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n", () => setImmediate(() => res.write("data: second\n\n")));
    };
    const response = await createHttpFetch()(`${url}/stream`);
    const pieces: string[] = [];
    await pushed(response).each((chunk) => {
      pieces.push(new TextDecoder().decode(chunk));
      return false;
    });
    expect(await socketClosedWithin()).toBe("closed");
    expect(pieces).toEqual(["data: first\n\n"]);
  });

  it("what the reader throws rejects the read and closes the connection", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
    };
    const response = await createHttpFetch()(`${url}/stream`);
    await expect(
      pushed(response).each(() => {
        throw new Error("the reader's own");
      }),
    ).rejects.toThrow("the reader's own");
    expect(await socketClosedWithin()).toBe("closed");
  });

  it("an abort after the headers rejects it with an AbortError and closes the socket", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
    };
    const controller = new AbortController();
    const response = await createHttpFetch()(`${url}/stream`, { signal: controller.signal });
    const read = pushed(response).each(() => {
      controller.abort();
      return undefined;
    });
    await expect(read).rejects.toMatchObject({ name: "AbortError" });
    expect(await socketClosedWithin()).toBe("closed");
  });

  it("a connection that breaks mid-answer rejects it with the connection's error", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n", () => res.socket?.destroy());
    };
    const response = await createHttpFetch()(`${url}/broken`);
    const pieces: string[] = [];
    const read = pushed(response).each((chunk) => {
      pieces.push(new TextDecoder().decode(chunk));
      return undefined;
    });
    await expect(read).rejects.toMatchObject({ code: "ECONNRESET" });
    expect(pieces).toEqual(["data: first\n\n"]);
  });
});
