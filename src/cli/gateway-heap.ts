import { setV8Flags } from "../core/v8-flags.js";

/**
 * How far V8 lets the old generation grow past what survived the last full collection, for the gateway: 100 %
 * instead of V8's own factor (which lets it reach 3-4x the live heap under a burst of messages). Measured with
 * 10,000 sessions messaged once each (`npm run bench -- passivation`): peak RSS 243 -> 179 MB, for ~6 % fewer
 * messages a second at full load (50 % gave 164 MB for ~11 %, below the 1,500 msg/s the bench asks for;
 * docs/benchmarks.md). A personal gateway runs next to other things, on small machines too.
 */
export const GATEWAY_HEAP_GROWING_PERCENT = 100;

/** The V8 flag the gateway sets, or undefined when the person set one of their own (node flags or NODE_OPTIONS). */
export function gatewayHeapFlag(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): string | undefined {
  const given = [...execArgv, ...(nodeOptions ?? "").split(/\s+/)];
  if (given.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return undefined;
  return `--heap-growing-percent=${GATEWAY_HEAP_GROWING_PERCENT}`;
}

/**
 * Applies `gatewayHeapFlag` to this process (V8 reads it at each heap sizing, so it works after start; the gateway
 * sets it once it listens). Not with
 * `CLAWDIS_KEEP_V8_FLAGS=1`: the build's code-cache training runs a gateway start, and a cache made after a flag
 * changed is rejected by every start without it (scripts/bundle-cache.ts).
 */
export function tuneGatewayHeap(): void {
  if (process.env.CLAWDIS_KEEP_V8_FLAGS === "1") return;
  const flag = gatewayHeapFlag(process.execArgv, process.env.NODE_OPTIONS);
  if (flag) setV8Flags(flag);
}
