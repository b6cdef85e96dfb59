/**
 * The bare relay, the baseline of the message benches: `node dist/bench/relay-process.js <model base url>`.
 * A `node:http` server that takes the same `POST /api/agent {message, session}` the gateway takes, makes the
 * same streamed chat completion request to the same model server (system prompt + the message, over a
 * keep-alive agent), reads the SSE answer and answers `{payloads: [{text}]}` as the gateway does — with no
 * journal, store, transcript or session. Prints `{"url": "http://127.0.0.1:<port>"}` as its first stdout line.
 */
import { Agent, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

const modelUrl = new URL(process.argv[2] ?? "");
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function readBody(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    stream.on("data", (part: Buffer) => parts.push(part));
    stream.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    stream.on("error", reject);
  });
}

/** One streamed completion: the text of its content deltas. */
function complete(message: string): Promise<string> {
  const body = JSON.stringify({
    model: "fake-model",
    stream: true,
    stream_options: { include_usage: true },
    messages: [
      { role: "system", content: "You are a relay." },
      { role: "user", content: message },
    ],
  });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: modelUrl.hostname,
        port: modelUrl.port,
        path: `${modelUrl.pathname}/chat/completions`,
        method: "POST",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let buffer = "";
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (piece: string) => {
          buffer += piece;
          for (let nl = buffer.indexOf("\n\n"); nl !== -1; nl = buffer.indexOf("\n\n")) {
            const event = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 2);
            if (!event.startsWith("data: ") || event === "data: [DONE]") continue;
            const chunk = JSON.parse(event.slice(6)) as { choices?: { delta?: { content?: string } }[] };
            text += chunk.choices?.[0]?.delta?.content ?? "";
          }
        });
        res.on("end", () => resolve(text));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const server = createServer((req, res) => {
  void (async () => {
    const { message } = JSON.parse(await readBody(req)) as { message: string; session?: string };
    const text = await complete(message);
    const answer = JSON.stringify({ payloads: [{ text }], meta: { stopReason: "end" } });
    res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
    res.end(`${answer}\n`);
  })().catch((error: unknown) => {
    res.writeHead(500);
    res.end(String(error));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.stdin.on("end", stop);
process.stdin.resume();
