import { createRequire } from "node:module";

type V8 = typeof import("node:v8");
let v8: V8 | undefined;

/**
 * V8's `setFlagsFromString`, with `node:v8` required at the first call: loading that module costs a process
 * ~5 ms on this machine, which the gateway's start (the heap flag is set once it listens) and the collections
 * after a burst need not pay before the port is open.
 */
export function setV8Flags(flags: string): void {
  v8 ??= createRequire(import.meta.url)("node:v8") as V8;
  v8.setFlagsFromString(flags);
}
