import { isAscii } from "node:buffer";

/** From this many bytes the ASCII check pays for itself (below it both ways take about the same few hundred ns). */
const ASCII_CHECK_FROM_BYTES = 2048;

/**
 * The text of `bytes` as UTF-8: always the same string as `bytes.toString("utf8")` (invalid sequences become
 * U+FFFD), faster for large all-ASCII text, as journal records, store files and transcripts mostly are. On Node 20
 * V8 decodes UTF-8 at ~300 MB/s here, while an all-ASCII buffer, checked (`isAscii`, SIMD) and copied as Latin-1 —
 * the same characters for bytes below 0x80 — comes out several times faster (docs/benchmarks.md, "Reading large
 * files"). Anything with a byte of 0x80 or above takes the UTF-8 path.
 */
export function utf8Text(bytes: Buffer): string {
  return bytes.length >= ASCII_CHECK_FROM_BYTES && isAscii(bytes)
    ? bytes.toString("latin1")
    : bytes.toString("utf8");
}
