import { Worker } from "node:worker_threads";

/**
 * An HTTP server on a thread of its own, for tests that block the main thread on purpose (to show that something
 * happens without it). Paths: `/taken` answers 200 with `{"ok":true,"result":{"message_id":1}}`; `/refused`
 * 400 with `{"ok":false}`; `/hang` never answers. Every request is counted (`requests()`).
 */
export interface OffThreadHttp {
  url: string;
  requests(): Promise<number>;
  close(): Promise<void>;
}

const SERVER = `
const { createServer } = require("node:http");
const { parentPort } = require("node:worker_threads");
let count = 0;
const server = createServer((req, res) => {
  count++;
  req.resume();
  req.on("end", () => {
    if (req.url === "/hang") return;
    const taken = req.url === "/taken";
    res.writeHead(taken ? 200 : 400, { "content-type": "application/json", "x-fake": "yes" });
    res.end(JSON.stringify(taken ? { ok: true, result: { message_id: 1 } } : { ok: false }));
  });
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
parentPort.on("message", (m) => { if (m === "count") parentPort.postMessage({ count }); });
`;

export async function offThreadHttp(): Promise<OffThreadHttp> {
  const worker = new Worker(SERVER, { eval: true });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once("message", (m: { port: number }) => resolve(m.port));
    worker.once("error", reject);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () =>
      new Promise<number>((resolve) => {
        worker.once("message", (m: { count: number }) => resolve(m.count));
        worker.postMessage("count");
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}

/**
 * Blocks the main thread (no event loop turn) until `check()` is true, at most `deadlineMs`; throws naming `what`
 * when the deadline passes. For showing that another thread did something while this one could not.
 */
export function blockUntil(check: () => boolean, what: string, deadlineMs = 10_000): void {
  const end = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`blocked ${deadlineMs} ms waiting for ${what}`);
  }
}
