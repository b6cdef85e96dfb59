import { ClawdisError, describeError } from "../core/errors.js";
import type { PluginDefinition, PluginInstance, TransportHealth } from "../plugin-api/index.js";
import { validatePluginDefinition } from "./plugin-definition.js";
import { reloadPolicyProblem, settingsFor } from "./plugin-settings.js";

/**
 * A plugin's place in the host (plugin-host.ts): its definition, settings, state and current attempt, and the
 * status it shows (`slotStatus`, pure apart from asking the transport for its health).
 */

/** `plugins.entries.<id>` of the config. */
export interface PluginEntry {
  enabled: boolean;
  config?: unknown;
}

export type PluginState = "starting" | "ok" | "degraded" | "down" | "stopped" | "disabled";

/** One plugin as `/status` and `clawdis status` show it. */
export interface PluginStatus {
  id: string;
  version?: string;
  state: PluginState;
  detail?: string;
  /** Restarts performed since the host was created. */
  restarts: number;
  lastError?: string;
}

/** What the host itself knows; "degraded" only ever comes from a transport's health(). */
export type HostState = "starting" | "ok" | "down" | "stopped" | "disabled";

/** One create+start of a plugin. A failed attempt is never reused: a restart is a fresh attempt. */
export interface Attempt {
  /** Aborts the start: `fail()` during start, or the host stopping. */
  abort: AbortController;
  /** Aborts when this instance is given up (failed, replaced, stopped). */
  retired: AbortController;
  instance?: PluginInstance;
  startedAt?: number;
  stopping?: Promise<void>;
}

export interface Slot {
  readonly definition: PluginDefinition;
  /** The current settings (what `context.config` returns); replaced by a config change. */
  config: unknown;
  state: HostState;
  detail?: string;
  lastError?: string;
  restarts: number;
  /** Consecutive failures; drives the backoff. */
  failures: number;
  attempt?: Attempt;
  /** The least wait before the next restart, from `fail(error, { retryAfterMs })`. */
  retryAfterMs?: number;
  restartTimer?: { handle: unknown };
  /** The launch or failure handling in progress (never rejects). */
  busy: Promise<void>;
}

const HEALTH_STATES: ReadonlySet<string> = new Set(["starting", "ok", "degraded", "down", "stopped"]);

function healthOf(slot: Slot): TransportHealth | undefined {
  const transport = slot.attempt?.instance?.transport;
  if (slot.state !== "ok" || !transport?.health) return undefined;
  try {
    const health = transport.health();
    if (HEALTH_STATES.has(health?.state)) return health;
    return { state: "degraded", detail: "health() returned no valid state" };
  } catch (error) {
    return { state: "degraded", detail: `health() failed: ${describeError(error)}` };
  }
}

/** The slot as `/status` shows it: the transport's own health while the host counts it ok. */
export function slotStatus(slot: Slot): PluginStatus {
  const health = healthOf(slot);
  const detail = health ? health.detail : slot.detail;
  const status: PluginStatus = {
    id: slot.definition.id,
    state: health?.state ?? slot.state,
    restarts: slot.restarts,
  };
  if (slot.definition.version !== undefined) status.version = slot.definition.version;
  if (detail !== undefined) status.detail = detail;
  if (slot.lastError !== undefined) status.lastError = slot.lastError;
  return status;
}

/**
 * A slot for each definition, validated as the host's constructor promises: PLUGIN_INVALID for a bad definition,
 * a duplicate id or a bad reload policy; CONFIG_INVALID naming every bad setting.
 */
export function createSlots(
  definitions: readonly PluginDefinition[],
  entries: Record<string, PluginEntry>,
  gatewayConfig: Readonly<object> | undefined,
): Slot[] {
  const slots: Slot[] = [];
  const seen = new Set<string>();
  const configErrors: string[] = [];
  definitions.forEach((candidate, index) => {
    const name = (candidate as { id?: unknown } | null)?.id;
    const definition = validatePluginDefinition(
      candidate,
      typeof name === "string" ? `Plugin "${name}"` : `Plugin #${index + 1}`,
    );
    if (seen.has(definition.id)) {
      throw new ClawdisError(
        "PLUGIN_INVALID",
        `Two plugins have the id "${definition.id}"; ids must be unique. Remove one of them from plugins.load.`,
      );
    }
    seen.add(definition.id);
    const policyProblem = reloadPolicyProblem(definition);
    if (policyProblem) throw new ClawdisError("PLUGIN_INVALID", policyProblem);
    const settings = settingsFor(definition, entries[definition.id], gatewayConfig);
    if (settings.error !== undefined) configErrors.push(settings.error);
    slots.push({
      definition,
      config: settings.config,
      state: settings.on ? "stopped" : "disabled",
      detail: settings.on ? "not started" : settings.detail,
      restarts: 0,
      failures: 0,
      busy: Promise.resolve(),
    });
  });
  if (configErrors.length > 0) throw new ClawdisError("CONFIG_INVALID", configErrors.join("\n"));
  return slots;
}
