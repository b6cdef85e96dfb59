import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../core/logger.js";
import { HttpServer, sendJson } from "./http-server.js";

describe("HttpServer", () => {
  let server: HttpServer;
  let base: string;
  beforeEach(async () => {
    server = new HttpServer({ token: "secret-token-123456", logger: createMemoryLogger().logger });
    server.route("GET", "/api/thing/:name", (req, res) =>
      sendJson(res, 200, { name: req.params.name, auth: req.authorized }),
    );
    server.route("GET", "/public", (_req, res) => sendJson(res, 200, { ok: true }), { auth: false });
    server.route("POST", "/echo", async (req, res) => sendJson(res, 200, { body: await req.body() }));
    const address = await server.listen(0, "127.0.0.1");
    base = `http://127.0.0.1:${address.port}`;
  });
  afterEach(async () => {
    await server.close();
  });

  it("requires the token (header or query) unless the route is public", async () => {
    expect((await fetch(`${base}/api/thing/x`)).status).toBe(401);
    expect((await fetch(`${base}/api/thing/x`, { headers: { authorization: "Bearer wrong" } })).status).toBe(
      401,
    );
    const ok = await fetch(`${base}/api/thing/a%20b`, {
      headers: { authorization: "Bearer secret-token-123456" },
    });
    expect(await ok.json()).toEqual({ name: "a b", auth: true });
    expect((await fetch(`${base}/api/thing/x?token=secret-token-123456`)).status).toBe(200);
    expect((await fetch(`${base}/public`)).status).toBe(200);
  });

  it("sends a JSON answer with its length, not chunked", async () => {
    const answer = await fetch(`${base}/echo?token=secret-token-123456`, { method: "POST", body: "héllo" });
    // The whole answer, its closing newline included: a length counted in characters would cut the last byte.
    const whole = `${JSON.stringify({ body: "héllo" })}\n`;
    expect(answer.headers.get("transfer-encoding")).toBeNull();
    expect(answer.headers.get("content-length")).toBe(String(Buffer.byteLength(whole)));
    expect(Buffer.from(await answer.arrayBuffer()).toString("utf8")).toBe(whole);
  });

  it("answers 404 for unknown paths, 405 for a wrong method, and survives a malformed escape", async () => {
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const wrong = await fetch(`${base}/public`, { method: "POST" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET");
    expect((await fetch(`${base}/api/thing/%E0%A4%A?token=secret-token-123456`)).status).toBe(404);
    expect((await fetch(`${base}/public`)).status).toBe(200);
  });

  it("holdUnmatched: a request for a route not registered yet waits and then reaches it; after the hold a miss is a 404 at once", async () => {
    let release = () => {};
    server.holdUnmatched(
      new Promise<void>((resolve) => {
        release = resolve;
      }),
    );
    let answered = false;
    const early = fetch(`${base}/hook?token=secret-token-123456`, { method: "POST", body: "u1" }).then(
      async (r) => {
        answered = true;
        return { status: r.status, body: (await r.json()) as unknown };
      },
    );
    // Matched by nothing yet: it waits (the known routes do not).
    await expect.poll(() => server.waiting, { timeout: 5000, message: "the request to wait" }).toBe(1);
    expect((await fetch(`${base}/public`)).status).toBe(200);
    expect(answered).toBe(false);
    server.route("POST", "/hook", async (req, res) => sendJson(res, 200, { got: await req.body() }));
    release();
    expect(await early).toEqual({ status: 200, body: { got: "u1" } });
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect(server.waiting).toBe(0);
  });

  it("a request's signal aborts once its client goes away (asked for before or after)", async () => {
    const seen: { before: boolean; after?: boolean }[] = [];
    let gone!: () => void;
    const bothGone = new Promise<void>((resolve) => {
      gone = resolve;
    });
    let started: () => void = () => {};
    server.route(
      "GET",
      "/hold",
      async (req, res) => {
        const early = req.query.get("early") === "1";
        started();
        if (early) {
          const before = req.signal.aborted;
          await new Promise<void>((resolve) =>
            req.signal.addEventListener("abort", () => resolve(), { once: true }),
          );
          seen.push({ before, after: req.signal.aborted });
        } else {
          // Asked for only after the response closed: already aborted.
          await new Promise<void>((resolve) => res.once("close", () => resolve()));
          seen.push({ before: false, after: req.signal.aborted });
        }
        if (seen.length === 2) gone();
      },
      { auth: false },
    );
    for (const early of ["1", "0"]) {
      const controller = new AbortController();
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const request = fetch(`${base}/hold?early=${early}`, { signal: controller.signal }).catch(
        () => undefined,
      );
      // The handler runs once the request's headers are in; then the client goes away.
      await running;
      controller.abort();
      await request;
    }
    await bothGone;
    expect(seen).toEqual([
      { before: false, after: true },
      { before: false, after: true },
    ]);
  });

  it("reads request bodies, and removes a route when asked", async () => {
    const res = await fetch(`${base}/echo?token=secret-token-123456`, { method: "POST", body: "hello" });
    expect(await res.json()).toEqual({ body: "hello" });
    const remove = server.route("GET", "/temp", (_req, r) => sendJson(r, 200, {}), { auth: false });
    expect((await fetch(`${base}/temp`)).status).toBe(200);
    remove();
    expect((await fetch(`${base}/temp`)).status).toBe(404);
  });
});
