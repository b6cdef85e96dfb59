import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Api } from "grammy";
import {
  DEFAULT_DOWNLOAD_LIMITS,
  type DownloadLimits,
  type DownloadTimers,
  watchDownload,
} from "../../src/plugin-api/download-deadline.js";
import type { Attachment } from "../../src/plugin-api/types.js";
import { grammySignal } from "./grammy-signal.js";
import type { FileToFetch } from "./to-inbound.js";

export interface MediaOptions {
  api: Api;
  token: string;
  apiRoot: string;
  stagingDir: string;
  maxBytes: number;
  /** The stop signal: when it aborts, `fetchMedia` throws (the message is not handed in; it comes again). */
  signal: AbortSignal;
  /** The file's deadline and minimum rate (getFile and the body together); default 120 s and 4 KB/s. */
  limits?: DownloadLimits;
  /** The deadline's timers (a manual clock in tests). */
  timers?: DownloadTimers;
}

/**
 * Downloads one file of an inbound message into the staging area (`getFile`, then `<apiRoot>/file/bot<token>/…`)
 * and describes it. Never throws for the file's sake: a file over `telegram.mediaMaxMb`, one that cannot be
 * fetched, or one that breaks its deadline or minimum rate ("timed out (…)") comes back without a `path` and with
 * a `note` the model reads; a partial file is removed. Throws only when `signal` (the stop) aborted. The download
 * URL carries the token, so it is never logged or kept.
 */
export async function fetchMedia(file: FileToFetch, options: MediaOptions): Promise<Attachment> {
  const attachment: Attachment = { kind: file.kind };
  if (file.fileName) attachment.fileName = file.fileName;
  if (file.mimeType) attachment.mimeType = file.mimeType;
  if (file.sizeBytes !== undefined) attachment.sizeBytes = file.sizeBytes;
  const limitMb = Math.round((options.maxBytes / 1024 / 1024) * 10) / 10;
  const tooLarge = `not downloaded: larger than telegram.mediaMaxMb (${limitMb} MB)`;
  if (file.sizeBytes !== undefined && file.sizeBytes > options.maxBytes)
    return { ...attachment, note: tooLarge };
  const target = join(
    options.stagingDir,
    `${randomUUID().slice(0, 8)}-${safeName(file.fileName ?? file.kind)}`,
  );
  const watch = watchDownload(options.limits ?? DEFAULT_DOWNLOAD_LIMITS, options.timers);
  const signal = AbortSignal.any([options.signal, watch.signal]);
  try {
    const info = await options.api.getFile(file.fileId, grammySignal(signal));
    if (info.file_size !== undefined && info.file_size > options.maxBytes)
      return { ...attachment, note: tooLarge };
    if (!info.file_path) return { ...attachment, note: "not downloaded: Telegram gave no file path" };
    const url = `${options.apiRoot.replace(/\/+$/, "")}/file/bot${options.token}/${info.file_path}`;
    const res = await fetch(url, { signal });
    if (!res.ok || !res.body)
      return { ...attachment, note: `not downloaded: Telegram answered ${res.status}` };
    let size = 0;
    const limited = Readable.fromWeb(res.body as import("node:stream/web").ReadableStream<Uint8Array>);
    limited.on("data", (chunk: Buffer) => {
      size += chunk.length;
      watch.progress(chunk.length);
      if (size > options.maxBytes) limited.destroy(new Error(tooLarge));
    });
    await pipeline(limited, createWriteStream(target, { mode: 0o600 }), { signal });
    return { ...attachment, path: target, sizeBytes: size };
  } catch (error) {
    await rm(target, { force: true });
    if (options.signal.aborted) throw error;
    if (watch.reason !== undefined)
      return { ...attachment, note: `not downloaded: timed out (${watch.reason})` };
    const reason = error instanceof Error ? error.message : String(error);
    return {
      ...attachment,
      note: reason === tooLarge ? tooLarge : `not downloaded: ${redact(reason, options.token)}`,
    };
  } finally {
    watch.end();
  }
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_").slice(-80) || "file";
}

function redact(text: string, token: string): string {
  return token ? text.split(token).join("<token>") : text;
}
