import { ClawdisError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { StateLock, type StateOwner } from "./state-lock.js";

/** How often a process waiting for the state directory looks again. */
export const STATE_WAIT_POLL_MS = 100;

export interface OwnDeps {
  now(): number;
  sleep(ms: number): Promise<void>;
  logger: Pick<Logger, "info" | "warn">;
}

/** What one process does when another holds the state directory (pure; table-tested). */
export type HeldVerdict = "refuse" | "wait" | "use-gateway";

export function whenHeld(me: StateOwner["kind"], holder: StateOwner["kind"]): HeldVerdict {
  if (me === "gateway") return holder === "gateway" ? "refuse" : "wait";
  // `clawdis agent`: a gateway is reached over HTTP; another one-shot agent is waited for.
  return holder === "gateway" ? "use-gateway" : "wait";
}

export function describeHolder(holder: StateOwner): string {
  const where = holder.url ?? (holder.port !== undefined ? `port ${holder.port}` : undefined);
  return holder.kind === "gateway"
    ? `a gateway (pid ${holder.pid}${where ? `, ${where}` : ""})`
    : `\`clawdis agent\` (pid ${holder.pid})`;
}

/**
 * `clawdis gateway`: takes the state directory, waiting while a one-shot `clawdis agent` finishes its turn.
 * Another live gateway on the same state directory: GATEWAY_RUNNING (exit 1) naming its pid and port.
 */
export async function ownForGateway(stateDir: string, port: number, deps: OwnDeps): Promise<StateLock> {
  let told = false;
  for (;;) {
    const result = await StateLock.tryAcquire(stateDir, { kind: "gateway", port, now: deps.now() });
    if (result.ok) return result.lock;
    if (whenHeld("gateway", result.holder.kind) === "refuse") {
      throw new ClawdisError(
        "GATEWAY_RUNNING",
        `${describeHolder(result.holder)} already runs on the state directory ${stateDir}; one gateway per state directory. Stop it first (kill ${result.holder.pid}), or give this one its own CLAWDIS_STATE_DIR`,
      );
    }
    if (!told) {
      deps.logger.info(`waiting for ${describeHolder(result.holder)} to finish with ${stateDir}`);
      told = true;
    }
    await deps.sleep(STATE_WAIT_POLL_MS);
  }
}

/**
 * `clawdis agent` without a reachable gateway: the lock for an in-process turn, or the holder when it is a
 * gateway (which the caller then reaches over HTTP). Waits for another one-shot agent, at most `maxWaitMs`.
 */
export async function ownForAgent(
  stateDir: string,
  deps: OwnDeps,
  maxWaitMs: number,
): Promise<{ lock: StateLock } | { gateway: StateOwner }> {
  const until = deps.now() + maxWaitMs;
  let told = false;
  for (;;) {
    const result = await StateLock.tryAcquire(stateDir, { kind: "agent", now: deps.now() });
    if (result.ok) return { lock: result.lock };
    if (whenHeld("agent", result.holder.kind) === "use-gateway") return { gateway: result.holder };
    if (deps.now() >= until) {
      throw new ClawdisError(
        "STATE_BUSY",
        `${describeHolder(result.holder)} still uses ${stateDir} after ${Math.round(maxWaitMs / 1000)} s; try again later`,
      );
    }
    if (!told) {
      deps.logger.info(`waiting for ${describeHolder(result.holder)} to finish with ${stateDir}`);
      told = true;
    }
    await deps.sleep(STATE_WAIT_POLL_MS);
  }
}
