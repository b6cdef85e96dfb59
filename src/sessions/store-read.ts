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

export type StoreBytes = { exists: false } | { exists: true; version: FileVersion; bytes: Buffer };

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}

/**
 * Reads the store file's bytes. The version is taken from the open descriptor, so it always describes exactly
 * the bytes that were read, even when the file is replaced at the same moment.
 */
export async function readStoreBytes(path: string): Promise<StoreBytes> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if (isNotFound(error)) return { exists: false };
    throw error;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    const bytes = await handle.readFile();
    return { exists: true, version: { ino: stat.ino, mtimeNs: stat.mtimeNs, size: stat.size }, bytes };
  } finally {
    await handle.close();
  }
}

/** Reads and parses the store file (see readStoreBytes and parseStoreText). */
export async function readStoreFile(path: string): Promise<StoreRead> {
  const read = await readStoreBytes(path);
  if (!read.exists) return read;
  const text = read.bytes.toString("utf8");
  return { exists: true, version: read.version, text, parsed: parseStoreText(text) };
}

/** The version of the file now, or undefined when it does not exist. */
export async function statStoreFile(path: string): Promise<FileVersion | undefined> {
  try {
    const s = await stat(path, { bigint: true });
    return { ino: s.ino, mtimeNs: s.mtimeNs, size: s.size };
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
