import type { BigIntStats } from "node:fs";
import { statSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { utf8Text } from "../core/utf8-text.js";
import { type ParsedStore, parseStoreText } from "./store-parse.js";

/**
 * Identity of one version of the file. A rename (atomic write) changes `ino`; a write in place changes `size`
 * or `mtimeNs`; any change at all, including one that sets the modification time back (`touch -r`, `cp -p`),
 * sets `ctimeNs` to the current time, which no program can choose.
 */
export interface FileVersion {
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  size: bigint;
}

export function versionOf(s: BigIntStats): FileVersion {
  return { ino: s.ino, mtimeNs: s.mtimeNs, ctimeNs: s.ctimeNs, size: s.size };
}

export function sameVersion(a: FileVersion | undefined, b: FileVersion | undefined): boolean {
  return sameData(a, b) && a!.ctimeNs === b!.ctimeNs;
}

/** Same inode, size and modification time: the data is that version's (a hard link changes only ctime). */
export function sameData(a: FileVersion | undefined, b: FileVersion | undefined): boolean {
  return (
    a !== undefined && b !== undefined && a.ino === b.ino && a.mtimeNs === b.mtimeNs && a.size === b.size
  );
}

export type StoreRead =
  | { exists: false }
  | { exists: true; version: FileVersion; text: string; parsed: ParsedStore };

/**
 * A store larger than this is not read at all (reading 2 GB per message is no store): the gateway sets it aside
 * like a file that does not parse, and the CLI reports it as not parsing.
 */
export const MAX_STORE_BYTES = 256 * 1024 * 1024;

export type StoreBytes =
  | { exists: false }
  | {
      exists: true;
      version: FileVersion;
      /** Exactly the file's bytes. With `spare`, a view of a larger buffer of its own (see readStoreBytes). */
      bytes: Buffer;
      /** Date.now() when the read began. */
      readAt: number;
      tooLarge?: undefined;
    }
  /** Over the size limit: the version only, nothing read. */
  | { exists: true; version: FileVersion; tooLarge: true; bytes?: undefined; readAt: number };

export function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}

/** How often a read starts over because the file was written in place while it was read. */
export const READ_ATTEMPTS = 3;

/** A version no file has: the next check reads the file again. */
export const UNKNOWN_VERSION: FileVersion = { ino: -1n, mtimeNs: -1n, ctimeNs: -1n, size: -1n };

/**
 * Reads the store file's bytes. The version is taken from the open descriptor before and after the read, so it
 * describes exactly the bytes that were read, even when the file is replaced at the same moment; when it was
 * written in place during the read, the read starts over (and after a few tries the version is UNKNOWN_VERSION,
 * so that nobody trusts it). A file over `maxBytes` is not read (`tooLarge`).
 *
 * `bytes` is a view of a buffer shared with nothing else (never Node's pool) with `spare(size)` bytes of room
 * after the file's bytes: the store grows its copy of the file in place.
 */
export async function readStoreBytes(
  path: string,
  maxBytes = MAX_STORE_BYTES,
  spare: (size: number) => number = () => 0,
): Promise<StoreBytes> {
  const readAt = Date.now();
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if (isNotFound(error)) return { exists: false };
    throw error;
  }
  try {
    for (let attempt = 1; ; attempt++) {
      const version = versionOf(await handle.stat({ bigint: true }));
      if (version.size > BigInt(maxBytes)) return { exists: true, version, tooLarge: true, readAt };
      const bytes = await readAll(handle, Number(version.size), spare(Number(version.size)));
      const after = versionOf(await handle.stat({ bigint: true }));
      if (sameVersion(after, version) && BigInt(bytes.length) === version.size) {
        return { exists: true, version, bytes, readAt };
      }
      if (attempt >= READ_ATTEMPTS) return { exists: true, version: UNKNOWN_VERSION, bytes, readAt };
    }
  } finally {
    await handle.close();
  }
}

/** The whole file from offset 0 (to its end, also when it grew since `size` was taken). */
async function readAll(
  handle: Awaited<ReturnType<typeof open>>,
  size: number,
  spare: number,
): Promise<Buffer> {
  let buffer = Buffer.allocUnsafeSlow(size + Math.max(spare, 1));
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      const bigger = Buffer.allocUnsafeSlow(buffer.length * 2 + spare);
      buffer.copy(bigger, 0, 0, length);
      buffer = bigger;
    }
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
    if (bytesRead === 0) return buffer.subarray(0, length);
    length += bytesRead;
  }
}

/** Reads and parses the store file (see readStoreBytes and parseStoreText). Too large: does not parse. */
export async function readStoreFile(path: string): Promise<StoreRead> {
  const read = await readStoreBytes(path);
  if (!read.exists) return read;
  if (read.tooLarge) {
    return {
      exists: true,
      version: read.version,
      text: "",
      parsed: { ok: false, reason: tooLargeReason(read.version.size) },
    };
  }
  const text = utf8Text(read.bytes);
  return { exists: true, version: read.version, text, parsed: parseStoreText(text) };
}

/** `statStoreFile`, synchronously (for the last check right before a rename). */
export function statStoreFileSync(path: string): FileVersion | undefined {
  try {
    return versionOf(statSync(path, { bigint: true }));
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** The version of the file now, or undefined when it does not exist. */
export async function statStoreFile(path: string): Promise<FileVersion | undefined> {
  try {
    return versionOf(await stat(path, { bigint: true }));
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Why a store of `size` bytes is not read. */
export function tooLargeReason(size: bigint, maxBytes = MAX_STORE_BYTES): string {
  const shown = (bytes: number) =>
    bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MB` : `${bytes} bytes`;
  return `the file is ${shown(Number(size))}, over the size limit of ${shown(maxBytes)} (it was not read)`;
}
