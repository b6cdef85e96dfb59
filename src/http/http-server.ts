import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type {
  HttpHandler,
  HttpMethod,
  HttpRegistrar,
  HttpRequest,
  HttpRouteOptions,
} from "../plugin-api/types.js";

interface Route {
  method: HttpMethod;
  segments: string[];
  handler: HttpHandler;
  auth: boolean;
}

/** Largest request body any route accepts. */
const MAX_BODY_BYTES = 1024 * 1024;

/** Constant-time token comparison. */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The bearer token of a request: `Authorization: Bearer <t>`, else `?token=<t>` (EventSource cannot set headers). */
export function requestToken(req: IncomingMessage, query: URLSearchParams): string | undefined {
  const header = req.headers.authorization;
  if (typeof header === "string" && header.startsWith("Bearer ")) return header.slice(7).trim();
  return query.get("token") ?? undefined;
}

function matchRoute(route: Route, parts: string[]): Record<string, string> | undefined {
  if (route.segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const seg = route.segments[i]!;
    const part = parts[i]!;
    if (seg.startsWith(":")) {
      if (part.length === 0) return undefined;
      try {
        params[seg.slice(1)] = decodeURIComponent(part);
      } catch {
        return undefined; // A malformed %-escape matches no route.
      }
    } else if (seg !== part) return undefined;
  }
  return params;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = `${JSON.stringify(body)}\n`;
  // With its length, not chunked: one piece less for both ends to frame and parse, and the client knows the end.
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/**
 * The gateway's local HTTP server: web chat, API, webhooks. The core's routes are registered before `listen`, a
 * plugin's when it is created, which may be after (`holdUnmatched`).
 * Every route needs the gateway token unless registered with `{ auth: false }`.
 */
export class HttpServer implements HttpRegistrar {
  private readonly routes: Route[] = [];
  private server: Server | undefined;
  /** While set: what the routes a request matches none of may still come from (see `holdUnmatched`). */
  private pending: Promise<void> | undefined;
  private waitingCount = 0;

  constructor(private readonly options: { token: string; logger: Logger }) {}

  /** Adds a route; returns the function that removes it (a restarted plugin registers its routes afresh). */
  route(method: HttpMethod, path: string, handler: HttpHandler, options: HttpRouteOptions = {}): () => void {
    const segments = path.split("/").filter((s) => s.length > 0);
    const route: Route = { method, segments, handler, auth: options.auth ?? true };
    this.routes.push(route);
    return () => {
      const index = this.routes.indexOf(route);
      if (index !== -1) this.routes.splice(index, 1);
    };
  }

  /** How many requests wait for `holdUnmatched`'s promise now. */
  get waiting(): number {
    return this.waitingCount;
  }

  /**
   * A request that matches no route while `until` is unsettled waits for it to settle, then is matched again: the
   * gateway listens before its plugins are created, and a webhook that arrives meanwhile reaches its route
   * instead of a 404. Only requests that match nothing wait; a later call replaces the earlier `until`.
   */
  holdUnmatched(until: Promise<unknown>): void {
    const pending = until.then(
      () => {},
      () => {},
    );
    this.pending = pending;
    void pending.then(() => {
      if (this.pending === pending) this.pending = undefined;
    });
  }

  async listen(port: number, host: string): Promise<AddressInfo> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error) => {
        this.options.logger.error("http request failed", { error: describeError(error) });
        if (!res.headersSent) sendJson(res, 500, { error: "internal" });
        else res.end();
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    return server.address() as AddressInfo;
  }

  /** Stops accepting, ends open streams (SSE), resolves when closed. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse, held = false): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const parts = url.pathname.split("/").filter((s) => s.length > 0);
    const method = (req.method ?? "GET").toUpperCase();
    let allowed: string[] = [];
    for (const route of this.routes) {
      const params = matchRoute(route, parts);
      if (!params) continue;
      if (route.method !== method) {
        allowed.push(route.method);
        continue;
      }
      const authorized = tokenMatches(this.options.token, requestToken(req, url.searchParams));
      if (route.auth && !authorized) {
        sendJson(res, 401, {
          error: "unauthorized",
          message:
            "send the gateway token as 'Authorization: Bearer <token>' (it is in <state>/gateway.token)",
        });
        return;
      }
      // Made when a handler asks for it (most never do): aborting one on every response's close costs more than
      // the rest of a small request's handling.
      let controller: AbortController | undefined;
      let closed = false;
      res.on("close", () => {
        closed = true;
        controller?.abort(CLIENT_GONE);
      });
      const request: HttpRequest = {
        method,
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        remoteAddress: req.socket.remoteAddress ?? "",
        authorized,
        params,
        get signal() {
          if (!controller) {
            controller = new AbortController();
            if (closed) controller.abort(CLIENT_GONE);
          }
          return controller.signal;
        },
        body: () => readBody(req),
      };
      try {
        await route.handler(request, res);
      } catch (error) {
        this.options.logger.error("http handler failed", { path: url.pathname, error: describeError(error) });
        if (!res.headersSent) sendJson(res, 500, { error: "internal", message: describeError(error) });
        else res.end();
      }
      return;
    }
    allowed = [...new Set(allowed)];
    if (allowed.length > 0) {
      res.setHeader("allow", allowed.join(", "));
      sendJson(res, 405, { error: "method-not-allowed" });
      return;
    }
    if (this.pending && !held) {
      this.waitingCount++;
      try {
        await this.pending;
      } finally {
        this.waitingCount--;
      }
      return this.handle(req, res, true);
    }
    sendJson(res, 404, { error: "not-found", path: url.pathname });
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`request body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Why a request's signal aborts: its response closed (sent, or the client went away). */
const CLIENT_GONE = "the response closed";
