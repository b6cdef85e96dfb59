import type { ServerResponse } from "node:http";

/** Starts a server-sent events response; returns a writer. Comments every 15 s keep proxies from closing it. */
export function startSse(res: ServerResponse): { send(event: string, data: unknown): void; close(): void } {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.write(": connected\n\n");
  const keepAlive = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
  keepAlive.unref();
  res.on("close", () => clearInterval(keepAlive));
  return {
    send(event, data) {
      if (res.writableEnded) return;
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    close() {
      clearInterval(keepAlive);
      if (!res.writableEnded) res.end();
    },
  };
}
