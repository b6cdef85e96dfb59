import { statSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { type ParsedStore, parseStoreText } from "./store-parse.js";

/** Identity of one version of the file: a rename (atomic write) changes `ino`, an edit changes mtime or size. */
export interface FileVersion {
  ino: bigint;
  mtimeNs: bigint;
  size: bigint;
}

export function sameVersion(a: FileVersion | undefined, b: FileVersion | undefined): boolean {
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
  | { exists: true; version: FileVersion; bytes: Buffer; tooLarge?: undefined }
  /** Over the size limit: the version only, nothing read. */
  | { exists: true; version: FileVersion; tooLarge: true; bytes?: undefined };

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}

/**
 * Reads the store file's bytes. The version is taken from the open descriptor, so it always describes exactly
 * the bytes that were read, even when the file is replaced at the same moment. A file over `maxBytes` is not
 * read (`tooLarge`).
 */
export async function readStoreBytes(path: string, maxBytes = MAX_STORE_BYTES): Promise<StoreBytes> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if (isNotFound(error)) return { exists: false };
    throw error;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    const version = { ino: stat.ino, mtimeNs: stat.mtimeNs, size: stat.size };
    if (stat.size > BigInt(maxBytes)) return { exists: true, version, tooLarge: true };
    return { exists: true, version, bytes: await handle.readFile() };
  } finally {
    await handle.close();
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
  const text = read.bytes.toString("utf8");
  return { exists: true, version: read.version, text, parsed: parseStoreText(text) };
}

/** The version of the file now, or undefined when it does not exist. */
/** `statStoreFile`, synchronously (for the last check right before a rename). */
export function statStoreFileSync(path: string): FileVersion | undefined {
  try {
    const s = statSync(path, { bigint: true });
    return { ino: s.ino, mtimeNs: s.mtimeNs, size: s.size };
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export async function statStoreFile(path: string): Promise<FileVersion | undefined> {
  try {
    const s = await stat(path, { bigint: true });
    return { ino: s.ino, mtimeNs: s.mtimeNs, size: s.size };
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
