import { createRequire } from "node:module";

type V8 = typeof import("node:v8");
let v8: V8 | undefined;

/**
 * V8's `setFlagsFromString`, with `node:v8` required at the first call: loading that module costs a fresh process
 * ~3 ms on this machine, which the gateway's start need not pay before its port is open (its flags are set once it
 * listens, cli/gateway-v8.ts; the collections after a burst come later still).
 */
export function setV8Flags(flags: string): void {
  v8 ??= createRequire(import.meta.url)("node:v8") as V8;
  v8.setFlagsFromString(flags);
}
