/**
 * A preload (`node --import dist/bench/request-spans.js …`) that times, inside a server process, how long it
 * takes from a request coming in to the request it makes to the model going out: from Node's
 * `http.server.request.start` (the request's headers parsed, just before the server's handler runs) to the next
 * `http.client.request.start` in the same process (an outgoing request's `finish`: its bytes all handed to the
 * socket, reported a tick after the write, so at times after the receiver already has them). Both are Node's own
 * diagnostics channels, so neither the gateway nor the relay changes for it.
 *
 * Contract:
 * - Only incoming requests with an `x-bench-id` header are timed, and only one at a time: the latency part sends
 *   its messages one after another. A request is in flight from its start until its response is finished or the
 *   next request starts; an outgoing request with no timed request in flight (the gateway's model check at
 *   start) is not paired with anything, and a timed request answered without one has no span.
 * - At exit the spans, `{ "<x-bench-id>": microseconds }`, are written to `$CLAWDIS_BENCH_SPANS/<pid>.json`
 *   (the bench reads them after stopping the process: `readSpans`).
 */
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";

const dir = process.env.CLAWDIS_BENCH_SPANS;
if (dir) {
  const spans: Record<string, number> = {};
  let open: { id: string; at: bigint; request: IncomingMessage } | undefined;
  subscribe("http.server.request.start", (message) => {
    const { request } = message as { request: IncomingMessage };
    const id = request.headers["x-bench-id"];
    open = typeof id === "string" ? { id, at: process.hrtime.bigint(), request } : undefined;
  });
  subscribe("http.server.response.finish", (message) => {
    if (open?.request === (message as { request: IncomingMessage }).request) open = undefined;
  });
  subscribe("http.client.request.start", () => {
    if (!open) return;
    spans[open.id] = Number(process.hrtime.bigint() - open.at) / 1000;
    open = undefined;
  });
  process.on("exit", () => writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(spans)));
}
