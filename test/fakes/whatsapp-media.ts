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
  imageMessage(data: Buffer, fields?: { caption?: string; mimetype?: string }): Promise<proto.IMessage>;
  /** How many downloads were asked for. */
  readonly downloads: number;
  close(): Promise<void>;
}

export async function startFakeMediaHost(): Promise<FakeMediaHost> {
  const files = new Map<string, Buffer>();
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
    res.end(body);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    async imageMessage(data, fields = {}) {
      const enc = await encryptedStream(data, "image");
      const path = `/media/${files.size + 1}.enc`;
      files.set(path, await readFile(enc.encFilePath));
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
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
