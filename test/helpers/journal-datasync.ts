import { readlinkSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

/**
 * Runs `hook` before every FileHandle datasync of the file at `journalPath` (found by the descriptor's path in
 * /proc/self/fd), then the kernel's own datasync; what `hook` throws is thrown instead of it. Other files' datasyncs
 * are left alone. Returns the function that restores FileHandle.datasync.
 */
export async function beforeJournalDatasync(
  journalPath: string,
  hook: () => Promise<void> | void,
): Promise<() => void> {
  const probe = await open(journalPath, "r");
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const original = proto.datasync;
  proto.datasync = async function (this: FileHandle) {
    let path = "";
    try {
      path = readlinkSync(`/proc/self/fd/${this.fd}`);
    } catch {}
    if (path === journalPath) await hook();
    return original.call(this);
  };
  return () => {
    proto.datasync = original;
  };
}
