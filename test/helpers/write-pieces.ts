import { open } from "node:fs/promises";

const BATCH_BYTES = 1024 * 1024;

/**
 * Writes `pieces` to `path` in writes of about 1 MiB (`flags`: "w" to create or truncate, "a" to append), without
 * holding the whole file in memory: a test file of hundreds of MB in well under a second where one awaited write
 * per line takes seconds. Returns the bytes written; throws when a write comes back short.
 */
export async function writePieces(
  path: string,
  pieces: Iterable<string | Buffer>,
  flags: "w" | "a" = "w",
): Promise<number> {
  const handle = await open(path, flags);
  let batch: Buffer[] = [];
  let size = 0;
  let written = 0;
  const flush = async () => {
    const bytes = Buffer.concat(batch, size);
    const { bytesWritten } = await handle.write(bytes);
    if (bytesWritten !== bytes.length)
      throw new Error(`${path}: wrote ${bytesWritten} of ${bytes.length} bytes`);
    written += bytesWritten;
    batch = [];
    size = 0;
  };
  try {
    for (const piece of pieces) {
      const bytes = typeof piece === "string" ? Buffer.from(piece) : piece;
      batch.push(bytes);
      size += bytes.length;
      if (size >= BATCH_BYTES) await flush();
    }
    if (size > 0) await flush();
  } finally {
    await handle.close();
  }
  return written;
}

/**
 * `json` (a JSON text holding the string `marker` once) as pieces with `bytes` in the marker's place: a record with
 * a large text, whose text is encoded once for every record that carries it. `bytes` must need no JSON escaping.
 */
export function spliced(json: string, marker: string, bytes: Buffer): (string | Buffer)[] {
  const at = json.indexOf(marker);
  if (at === -1 || json.indexOf(marker, at + 1) !== -1)
    throw new Error(`"${marker}" is not in the JSON once`);
  return [json.slice(0, at), bytes, json.slice(at + marker.length)];
}
