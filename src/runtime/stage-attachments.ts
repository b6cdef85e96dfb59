import { copyFile, mkdir, rename, stat, unlink } from "node:fs/promises";
import { basename, join, relative } from "node:path";
import type { Attachment } from "../plugin-api/types.js";
import type { SessionPaths } from "../sessions/session-paths.js";

/**
 * Moves the files of an inbound message from the plugin's staging area into the session folder's
 * `attachment-staging/<journal id>-<name>` (kept there as it came), copies each into the session's inbox
 * (`<workspace>/inbox/<journal id>-<name>`, where the tools see it; session-paths.ts) and returns the lines that
 * describe them to the model. Idempotent: a replay after a crash finds the file already moved or copied. A file
 * that is neither staged nor moved is described as missing; nothing outside `stagingRoot` is ever moved.
 */
export async function stageAttachments(
  attachments: readonly Attachment[],
  options: {
    paths: Pick<SessionPaths, "workspace" | "inbox" | "attachmentStaging">;
    jid: string;
    stagingRoot: string;
  },
): Promise<string[]> {
  const lines: string[] = [];
  for (const [index, attachment] of attachments.entries()) {
    const name = safeFileName(
      attachment.fileName ?? (attachment.path ? basename(attachment.path) : `file-${index + 1}`),
    );
    const facts = [
      attachment.kind,
      attachment.mimeType,
      attachment.sizeBytes !== undefined ? formatBytes(attachment.sizeBytes) : undefined,
    ]
      .filter((x) => x !== undefined)
      .join(", ");
    const caption = attachment.caption ? `, caption: ${JSON.stringify(attachment.caption)}` : "";
    let where: string;
    if (!attachment.path) {
      where = `not downloaded${attachment.note ? ` (${attachment.note})` : ""}`;
    } else if (!isInside(attachment.path, options.stagingRoot)) {
      where = "refused (not in the staging area)";
    } else {
      const stored = `${options.jid.slice(0, 8)}-${name}`;
      const target = join(options.paths.inbox, stored);
      const moved = await copyOnce(attachment.path, join(options.paths.attachmentStaging, stored), target);
      where = moved
        ? `saved at ${relative(options.paths.workspace, target)}`
        : "missing (the file was not found)";
    }
    lines.push(`[attachment ${index + 1}: ${name} (${facts})${caption}; ${where}]`);
  }
  return lines;
}

/** `from` moved to `staged` (unless it is there), then copied to `to` (unless it is there); false: none of them is. */
async function copyOnce(from: string, staged: string, to: string): Promise<boolean> {
  if (await exists(to)) return true;
  if (!(await moveOnce(from, staged))) return false;
  await mkdir(join(to, ".."), { recursive: true, mode: 0o700 });
  // Whole or not at all: a copy cut short by a crash is never taken for the file.
  await copyFile(staged, `${to}.part`);
  await rename(`${to}.part`, to);
  return true;
}

async function moveOnce(from: string, to: string): Promise<boolean> {
  if (await exists(to)) return true;
  if (!(await exists(from))) return false;
  await mkdir(join(to, ".."), { recursive: true, mode: 0o700 });
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
    await copyFile(from, to);
    await unlink(from);
  }
  return true;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel.length > 0 && !rel.startsWith("..") && !rel.startsWith("/");
}

/** A file name safe in any folder: letters, digits, dot, dash, underscore; at most 100 characters. */
export function safeFileName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
  return (cleaned.length > 0 ? cleaned : "file").slice(-100);
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
