import { type ErrorCode, isClawdisError } from "../core/errors.js";

/**
 * How long to wait before restarting a plugin that failed. Pure: the random source is injected, so the same
 * inputs always give the same delay.
 */
export interface RestartPolicy {
  /** Delay before the first restart; each later attempt doubles it. */
  initialDelayMs: number;
  /** No delay exceeds this. */
  maxDelayMs: number;
  /** Fraction (0..1) of the delay that may be taken off at random; 0 gives exact delays. */
  jitter: number;
  /** A number in [0, 1); consulted only when `jitter > 0`. */
  random: () => number;
}

/**
 * 1 s, 2 s, 4 s … capped at 5 min, no jitter: the gateway runs a handful of plugins talking to different
 * services, so there is no herd of identical clients whose retries jitter would need to spread.
 */
export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 5 * 60_000,
  jitter: 0,
  random: Math.random,
};

/** Codes a restart cannot fix: the plugin, its settings or its credentials must change first. */
const FATAL_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "PLUGIN_INVALID",
  "UNAUTHORIZED",
  "CONFIG_INVALID",
  "CONFIG_SYNTAX",
]);

/** How deep the `cause` chain is searched (also guards against cycles). */
const MAX_CAUSE_DEPTH = 8;

function isFatalOne(error: object): boolean {
  if ((error as { fatal?: unknown }).fatal === true) return true;
  if (isClawdisError(error)) return FATAL_CODES.has(error.code);
  // A plugin that bundles its own copy of clawdis has a different ClawdisError class: compare by shape.
  const { name, code } = error as { name?: unknown; code?: unknown };
  return name === "ClawdisError" && typeof code === "string" && FATAL_CODES.has(code as ErrorCode);
}

/** True when `error`, or any error in its `cause` chain, says that restarting will not help. */
export function isFatalPluginError(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH; depth++) {
    if (current === null || typeof current !== "object") return false;
    if (isFatalOne(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Milliseconds to wait before restart number `attempt` (1 = the first restart after a failure), or `null` when
 * the error is fatal and the plugin must stay down. Attempts below 1 (or not a number) count as 1.
 */
export function restartDelay(
  error: unknown,
  attempt: number,
  policy: RestartPolicy = DEFAULT_RESTART_POLICY,
): number | null {
  if (isFatalPluginError(error)) return null;
  const n = Number.isFinite(attempt) && attempt >= 1 ? Math.floor(attempt) : 1;
  // 2 ** 1100 is Infinity, which Math.min caps: no overflow handling needed.
  const exact = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (n - 1));
  if (policy.jitter <= 0) return exact;
  const fraction = Math.min(1, policy.jitter) * Math.min(Math.max(policy.random(), 0), 1);
  return Math.round(exact * (1 - fraction));
}

/** Up to this fraction of a retry-after hint is added at random before the restart. */
const RETRY_AFTER_JITTER = 0.1;

/**
 * The wait before a restart: `restartDelay`, and at least a server's Retry-After (`hint`) with a little jitter on
 * top, so a restart does not land on its edge. null: never (a fatal error).
 */
export function restartWait(
  error: unknown,
  failures: number,
  hint: number | undefined,
  policy: RestartPolicy,
): number | null {
  const backoff = restartDelay(error, failures, policy);
  return backoff === null || hint === undefined
    ? backoff
    : Math.max(backoff, hint) + Math.round(RETRY_AFTER_JITTER * hint * policy.random());
}
