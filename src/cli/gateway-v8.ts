import { setV8Flags } from "../core/v8-flags.js";

/**
 * How far V8 lets the old generation grow past what survived the last full collection, for the gateway: 100 %
 * instead of V8's own factor (which lets it reach 3-4x the live heap under a burst of messages). Measured with
 * 10,000 sessions messaged once each (`npm run bench -- passivation`): peak RSS 243 -> 179 MB, for ~6 % fewer
 * messages a second at full load (50 % gave 164 MB for ~11 %, below the 1,500 msg/s the bench asks for;
 * docs/benchmarks.md). A personal gateway runs next to other things, on small machines too.
 */
export const GATEWAY_HEAP_GROWING_PERCENT = 100;

/**
 * How much bytecode a function runs before V8 looks at optimizing it (its "interrupt budget"): 16,000 instead of
 * V8's 67,584. A gateway's messages come one at a time, seconds or hours apart, so its code runs few times a second
 * and, at V8's budget, stays unoptimized for long (and again after each full collection deoptimizes what it
 * embedded). Against the same build without it (`compare-builds`, sequential messages into 1,000 sessions, 8
 * alternating rounds): ~7 % less main-thread CPU per message and ~9 % less time from hand-in to model request at
 * the median; with 100 messages in flight, no change. 6,000 was no faster and cost ~8-12 % more CPU (compiling).
 */
export const GATEWAY_INTERRUPT_BUDGET = 16_000;

/** Whether `flag` (a V8 option's name with dashes) is among the person's node flags. */
function given(flag: string, execArgv: readonly string[]): boolean {
  const name = new RegExp(`^--${flag.replace(/-/g, "[-_]")}(=|$)`);
  return execArgv.some((arg) => name.test(arg));
}

/**
 * The V8 flags the gateway sets: each one unless the person gave it to `node` themselves (`node
 * --interrupt-budget=… bin/clawdis.js gateway`; Node refuses both in NODE_OPTIONS).
 */
export function gatewayV8Flags(execArgv: readonly string[]): string[] {
  const flags: string[] = [];
  if (!given("heap-growing-percent", execArgv))
    flags.push(`--heap-growing-percent=${GATEWAY_HEAP_GROWING_PERCENT}`);
  if (!given("interrupt-budget", execArgv)) flags.push(`--interrupt-budget=${GATEWAY_INTERRUPT_BUDGET}`);
  return flags;
}

/**
 * Applies `gatewayV8Flags` to this process (V8 reads both as it goes: the heap's growth at each sizing, the budget
 * each time it sets a function's), once the gateway listens. Not with `CLAWDIS_KEEP_V8_FLAGS=1`: the build's
 * code-cache training runs a gateway start, and a cache made after a flag changed is rejected by every start
 * without it (scripts/bundle-cache.ts).
 */
export function tuneGatewayV8(): void {
  if (process.env.CLAWDIS_KEEP_V8_FLAGS === "1") return;
  for (const flag of gatewayV8Flags(process.execArgv)) setV8Flags(flag);
}
