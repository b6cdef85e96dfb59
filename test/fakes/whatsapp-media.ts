import { once } from "node:events";
import { readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { encryptedStream, type proto } from "@whiskeysockets/baileys";

/**
 * WhatsApp's media host on 127.0.0.1: `upload` encrypts a file as a WhatsApp client does (Baileys'
 * `encryptedStream`: AES-CBC with a fresh media key, MAC appended) and serves it, and `imageMessage` is the
 * `proto.Message` that points at it (`url` without a `directPath`, which Baileys downloads as it is).
 */
export interface FakeMediaHost {
  /** `trickleMs`: the file is served one byte every `trickleMs` (a stalled media server). */
  imageMessage(
    data: Buffer,
    fields?: { caption?: string; mimetype?: string; trickleMs?: number },
  ): Promise<proto.IMessage>;
  /** Trickled downloads, in the order they began: `ended` resolves with how (`aborted`: the client went first). */
  readonly trickles: { ended: Promise<"done" | "aborted"> }[];
  /** Resolves when the `n`th trickled download (1-based) has begun. */
  waitForTrickle(n: number): Promise<{ ended: Promise<"done" | "aborted"> }>;
  /** How many downloads were asked for. */
  readonly downloads: number;
  close(): Promise<void>;
}

export async function startFakeMediaHost(): Promise<FakeMediaHost> {
  const files = new Map<string, Buffer>();
  const trickled = new Map<string, number>();
  const trickles: { ended: Promise<"done" | "aborted"> }[] = [];
  const trickleWaiters: (() => void)[] = [];
  let downloads = 0;
  const server = createServer((req, res) => {
    downloads += 1;
    const body = files.get(req.url ?? "");
    if (!body) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader("content-length", body.length);
    const everyMs = trickled.get(req.url ?? "");
    if (everyMs === undefined) {
      res.end(body);
      return;
    }
    let end: (how: "done" | "aborted") => void = () => {};
    trickles.push({ ended: new Promise((resolve) => (end = resolve)) });
    for (const wake of trickleWaiters.splice(0)) wake();
    res.flushHeaders();
    let sent = 0;
    const timer = setInterval(() => {
      res.write(body.subarray(sent, sent + 1));
      sent += 1;
      if (sent < body.length) return;
      clearInterval(timer);
      end("done");
      res.end();
    }, everyMs);
    res.on("close", () => {
      clearInterval(timer);
      end("aborted");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    async imageMessage(data, fields = {}) {
      const enc = await encryptedStream(data, "image");
      const path = `/media/${files.size + 1}.enc`;
      files.set(path, await readFile(enc.encFilePath));
      if (fields.trickleMs !== undefined) trickled.set(path, fields.trickleMs);
      await rm(enc.encFilePath, { force: true });
      return {
        imageMessage: {
          url: `http://127.0.0.1:${port}${path}`,
          mediaKey: enc.mediaKey,
          fileSha256: enc.fileSha256,
          fileEncSha256: enc.fileEncSha256,
          fileLength: enc.fileLength,
          mimetype: fields.mimetype ?? "image/png",
          ...(fields.caption ? { caption: fields.caption } : {}),
        },
      };
    },
    get downloads() {
      return downloads;
    },
    trickles,
    waitForTrickle(n) {
      return new Promise((resolve) => {
        const check = () => {
          const found = trickles[n - 1];
          if (found) resolve(found);
          else trickleWaiters.push(check);
        };
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
