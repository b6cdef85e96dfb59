import type { Clock } from "../core/clock.js";
import type { PluginReloadInfo, TransportRestart } from "../core/config-diff.js";
import { ClawdisError, describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { type PluginSettings, settingsFor } from "./plugin-settings.js";
import type { Attempt, HostState, PluginEntry, Slot } from "./plugin-slot.js";

/**
 * A config change for the plugins: `planPluginReload` decides (pure: the settings each plugin would run with and
 * what each declares about a change), `applyPluginReload` carries it out on the host's slots.
 */

/** What the plugins would run with under a new config: `PluginHost.planReload`, then `applyReload`. */
export interface PluginReloadPlan {
  /** What each plugin declares, for `diffConfig`. */
  infos: PluginReloadInfo[];
  /** Settings and on/off of each plugin under the new config, by id. */
  settings: ReadonlyMap<string, PluginSettings>;
  gatewayConfig: Readonly<object>;
}

/** What applying a reload needs of the host (PluginHost hands in its own). */
export interface ReloadTarget {
  readonly slots: readonly Slot[];
  readonly log: Logger;
  readonly clock: Clock;
  /** Whether the host runs (not before start, not once stopping). */
  running(): boolean;
  drainSends(id: string): Promise<void>;
  setState(slot: Slot, state: HostState, detail: string | undefined): void;
  retire(slot: Slot, attempt: Attempt): Promise<void>;
  launch(slot: Slot): Promise<void>;
}

/**
 * What the plugins would run with under a new config (validated as at start: `plugins.entries.<id>.config` by
 * each plugin's schema), and what each declares about a change, for `diffConfig`. Changes nothing.
 * @throws ClawdisError CONFIG_INVALID naming every bad setting, as the constructor does.
 */
export function planPluginReload(
  slots: readonly Slot[],
  next: { gatewayConfig: Readonly<object>; entries: Record<string, PluginEntry> },
): PluginReloadPlan {
  const settings = new Map<string, PluginSettings>();
  const errors: string[] = [];
  const infos = slots.map((slot): PluginReloadInfo => {
    const { definition } = slot;
    const after = settingsFor(definition, next.entries[definition.id], next.gatewayConfig);
    if (after.error !== undefined) errors.push(after.error);
    settings.set(definition.id, after);
    const section = definition.configSection?.key;
    return {
      id: definition.id,
      ...(section !== undefined ? { section } : {}),
      live: definition.reload?.live ?? [],
      restartOn: definition.reload?.restartOn ?? [],
      on: [slot.state !== "disabled", after.on],
    };
  });
  if (errors.length > 0) throw new ClawdisError("CONFIG_INVALID", errors.join("\n"));
  return { infos, settings, gatewayConfig: next.gatewayConfig };
}

/**
 * Applies a planned config change: every plugin's `context.config`/`gatewayConfig` read the new settings from
 * now on; running plugins hear of the keys applied `live` (`configChanged`); each plugin in `restarts` is
 * restarted alone — marked starting at once (the outbox parks what is sent to it, what it hands in is still
 * taken), its sends in flight end (`drainSends`), its instance stops, a fresh one starts with the new
 * settings — or started or stopped when it was switched on or off. The others keep running. Resolves when
 * every restart has started or failed its first attempt.
 */
export async function applyPluginReload(
  host: ReloadTarget,
  plan: PluginReloadPlan,
  restarts: readonly TransportRestart[],
  live: readonly string[],
): Promise<void> {
  const restarting = new Set(restarts.map((restart) => restart.id));
  for (const slot of host.slots) {
    const next = plan.settings.get(slot.definition.id);
    if (next && !restarting.has(slot.definition.id)) slot.config = next.config;
  }
  if (live.length > 0) {
    for (const slot of host.slots) {
      const instance = slot.attempt?.instance;
      if (!instance?.configChanged || slot.attempt?.retired.signal.aborted) continue;
      try {
        instance.configChanged(live);
      } catch (error) {
        host.log.warn("a plugin's configChanged threw", {
          plugin: slot.definition.id,
          error: describeError(error),
        });
      }
    }
  }
  await Promise.all(
    host.slots
      .filter((slot) => restarting.has(slot.definition.id))
      .map((slot) => {
        const next = plan.settings.get(slot.definition.id);
        if (!next) return Promise.resolve();
        const done: Promise<void> = reconfigure(host, slot, next, () => done);
        slot.busy = done;
        return done;
      }),
  );
}

/**
 * One plugin stopped (after its sends in flight) and started afresh with `next`; never rejects. `self` is this
 * call's own promise, which the caller makes `slot.busy`.
 */
async function reconfigure(
  host: ReloadTarget,
  slot: Slot,
  next: PluginSettings,
  self: () => Promise<void>,
): Promise<void> {
  // A start or a failure being handled ends first (a failure handled meanwhile takes `busy` over: wait again).
  for (let busy = slot.busy; ; ) {
    await busy;
    if (slot.busy === self()) break;
    busy = slot.busy;
    slot.busy = self();
  }
  if (!host.running()) return;
  if (slot.restartTimer) host.clock.clearTimeout(slot.restartTimer.handle);
  slot.restartTimer = undefined;
  const previous = slot.attempt;
  slot.config = next.config;
  if (previous && !previous.retired.signal.aborted) {
    if (slot.state === "ok") {
      host.setState(slot, "starting", "restarting for a config change");
      await host.drainSends(slot.definition.id);
    }
    await host.retire(slot, previous);
  }
  if (!host.running()) return;
  if (!next.on) {
    slot.attempt = undefined;
    host.setState(slot, "disabled", next.detail);
    host.log.info("plugin stopped for a config change", { plugin: slot.definition.id });
    return;
  }
  slot.failures = 0;
  slot.retryAfterMs = undefined;
  slot.lastError = undefined;
  if (previous) slot.restarts += 1;
  await host.launch(slot);
}
