import { chmod, copyFile, mkdir, rename } from "node:fs/promises";
import { basename, join } from "node:path";
import type { Logger } from "../core/logger.js";
import { safeFileName } from "./stage-attachments.js";

/**
 * Keeps a copy of a file a tool sent (`send_file`) in the session folder's `artifacts/` as
 * `<prefix>-<name>` (0600; the folder 0700, made by the first one), so that what the person was sent stays with
 * the session whatever happens to the original. Behind the turn: it returns at once, and a copy that fails is
 * logged, never thrown. Resolves with the copy's path, or undefined when it failed.
 */
export function keepArtifact(
  file: string,
  artifacts: string,
  prefix: string,
  logger: Logger,
): Promise<string | undefined> {
  const target = join(artifacts, `${prefix}-${safeFileName(basename(file))}`);
  return (async () => {
    await mkdir(artifacts, { recursive: true, mode: 0o700 });
    // Under its name only once whole and private.
    const part = `${target}.part`;
    await copyFile(file, part);
    await chmod(part, 0o600);
    await rename(part, target);
    return target;
  })().catch((error: unknown) => {
    logger.warn("could not keep a copy of a sent file in the session's artifacts", {
      file,
      error: error instanceof Error ? error.message : String(error),
    });
    return undefined;
  });
}
