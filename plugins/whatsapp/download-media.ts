import type { Readable, Transform } from "node:stream";
import { downloadMediaMessage, type WAMessage } from "@whiskeysockets/baileys";
import {
  type DownloadLimits,
  type DownloadTimers,
  watchDownload,
} from "../../src/plugin-api/download-deadline.js";

export interface MediaDownloadOptions {
  maxBytes: number;
  limits: DownloadLimits;
  timers?: DownloadTimers;
  /** Baileys' context for a re-upload request when the media's URL expired. */
  context: Parameters<typeof downloadMediaMessage>[3];
}

/** The media's bytes, or why there are none (the model's note). */
export type MediaDownload =
  | { ok: true; data: Buffer }
  | { ok: false; why: "too-large" | "timed-out"; note: string };

class TooLarge extends Error {}

/**
 * Downloads and decrypts one message's media through Baileys, within `maxBytes` (stopped as soon as it is
 * passed) and within the download deadline: a total time and a minimum rate (`limits`), so a media server that
 * stalls or trickles fails this one file in bounded time. Baileys' fetch takes no abort signal, so at a timeout
 * the decrypting stream is destroyed, and with it the HTTP body piped into it. Throws for other failures (the
 * caller notes them).
 */
export async function downloadMedia(msg: WAMessage, options: MediaDownloadOptions): Promise<MediaDownload> {
  const watch = watchDownload(options.limits, options.timers);
  const timedOut = new Promise<never>((_, reject) => {
    watch.signal.addEventListener("abort", () => reject(watch.signal.reason), { once: true });
  });
  timedOut.catch(() => {});
  const started = downloadMediaMessage(msg, "stream", {}, options.context) as Promise<Transform>;
  // A stream that arrives after the timeout is closed at once.
  void started.then(
    (stream) => {
      if (watch.signal.aborted) close(stream);
    },
    () => {},
  );
  let stream: Transform | undefined;
  try {
    stream = await Promise.race([started, timedOut]);
    const body = stream;
    const chunks: Buffer[] = [];
    let size = 0;
    const read = (async () => {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        size += chunk.length;
        watch.progress(chunk.length);
        if (size > options.maxBytes) throw new TooLarge();
        chunks.push(chunk);
      }
    })();
    read.catch(() => {});
    await Promise.race([read, timedOut]);
    return { ok: true, data: Buffer.concat(chunks) };
  } catch (error) {
    if (watch.reason !== undefined)
      return { ok: false, why: "timed-out", note: `timed out (${watch.reason})` };
    if (error instanceof TooLarge) return { ok: false, why: "too-large", note: "too large" };
    throw error;
  } finally {
    watch.end();
    if (stream) close(stream);
  }
}

/** Destroys the decrypting stream and the HTTP body piped into it (`unpipe` names the source). */
function close(stream: Transform): void {
  stream.once("unpipe", (source: Readable) => source.destroy());
  stream.destroy();
}
