import { createHash } from "node:crypto";

/** sha256 (hex) of a config file's text: what the running gateway reports and `clawdis doctor` compares. */
export function configDigest(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
