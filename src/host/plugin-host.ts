// Just over 400 lines: the plugins' one lifecycle (validate, start, restart with backoff, reload, stop) over one
// set of slots; the slots, the reload plan and the backoff are in plugin-slot.ts, plugin-reload.ts and
// restart-delay.ts.
import type { Clock } from "../core/clock.js";
import type { TransportRestart } from "../core/config-diff.js";
import type { ClawdisConfig } from "../core/config-schema.js";
import { ClawdisError, describeError } from "../core/errors.js";
import { formatDuration } from "../core/format.js";
import type { Logger } from "../core/logger.js";
import type {
  PluginContext,
  PluginCoreConfig,
  PluginDefinition,
  ToolDefinition,
  Transport,
} from "../plugin-api/index.js";
import { validatePluginInstance } from "./plugin-definition.js";
import {
  applyPluginReload,
  type PluginReloadPlan,
  planPluginReload,
  type ReloadTarget,
} from "./plugin-reload.js";
import {
  type Attempt,
  createSlots,
  type HostState,
  type PluginEntry,
  type PluginStatus,
  type Slot,
  slotStatus,
} from "./plugin-slot.js";
import { DEFAULT_RESTART_POLICY, type RestartPolicy, restartWait } from "./restart-delay.js";
import { withDeadline } from "./with-deadline.js";

/** The context the gateway builds; the host adds `fail`, bound to the one instance it is given to. */
export type BasePluginContext = Omit<PluginContext, "fail">;

/**
 * Checked by tsc: the core's validated config is a `PluginCoreConfig`, so the gateway hands it to plugins as
 * their `gatewayConfig` as it is; they see only the view's keys.
 */
type ServesPluginView<T extends PluginCoreConfig> = T;
export type CoreConfigServesPlugins = ServesPluginView<ClawdisConfig>;

export interface PluginHostOptions {
  definitions: PluginDefinition[];
  /**
   * Builds the context of one instance; called again for every restart. Must return a plain object (the host
   * spreads it to add `fail`). `retired` aborts when that instance is stopped or replaced: drop the routes and
   * event listeners it registered then, so a restarted plugin can register them afresh.
   */
  contextFor: (definition: PluginDefinition, config: unknown, retired: AbortSignal) => BasePluginContext;
  /** `plugins.entries` from the config. */
  entries: Record<string, PluginEntry>;
  /** The whole validated config: a plugin with a `configSection` takes its settings from there. */
  gatewayConfig?: Readonly<object>;
  logger: Logger;
  clock: Clock;
  /** create + start must finish within this (default 15 s). */
  startDeadlineMs?: number;
  /** Each stop must finish within this (default 10 s). */
  stopDeadlineMs?: number;
  restartPolicy?: Partial<RestartPolicy>;
  /** A plugin that ran at least this long before failing starts its backoff from the beginning (default 60 s). */
  stableAfterMs?: number;
  /**
   * Resolves once the sends in flight to plugin `id`'s transport have ended. A restart for a config change waits
   * for it before it stops the instance; what is sent meanwhile waits for the new one. Default: at once.
   */
  drainSends?: (id: string) => Promise<void>;
  /** Called at the start of every launch of a plugin (its first start, a restart), before `create`. */
  onLaunch?: (definition: PluginDefinition) => void;
}

/**
 * The detail of a plugin left down by a fatal error. What really brings it back: a config change of its settings
 * restarts it (PluginHost.applyReload), an environment variable is read only when the gateway starts.
 */
export const NOT_RESTARTED =
  "not restarted: fix what the error says; a fix saved to the config file restarts it, one in the environment needs a gateway restart";

/**
 * Owns the plugins' lifecycle: validates definitions and settings, starts every enabled plugin (concurrently,
 * each within the start deadline), restarts failed ones with backoff on the injected clock, and stops them in
 * reverse order. A failing plugin never takes the host down.
 */
export class PluginHost {
  private readonly slots: Slot[];
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly contextFor: PluginHostOptions["contextFor"];
  private readonly policy: RestartPolicy;
  private readonly startDeadlineMs: number;
  private readonly stopDeadlineMs: number;
  private readonly stableAfterMs: number;
  private phase: "idle" | "running" | "stopping" | "stopped" = "idle";
  private starting?: Promise<void>;
  private stopping?: Promise<void>;
  private readonly pendingStops = new Set<Promise<void>>();
  private readonly listeners = new Set<(status: PluginStatus) => void>();
  /** The current config (what `context.gatewayConfig` returns); replaced by a config change. */
  private gatewayConfig: Readonly<object> | undefined;
  private readonly drainSends: (id: string) => Promise<void>;
  private readonly onLaunch: (definition: PluginDefinition) => void;
  /** What `applyPluginReload` may do to this host. */
  private readonly reloadTarget: ReloadTarget;

  /** Throws PLUGIN_INVALID (bad definition, duplicate id) or CONFIG_INVALID (settings; exit code 2). */
  constructor(options: PluginHostOptions) {
    this.slots = createSlots(options.definitions, options.entries, options.gatewayConfig);
    this.log = options.logger;
    this.clock = options.clock;
    this.contextFor = options.contextFor;
    this.policy = { ...DEFAULT_RESTART_POLICY, ...options.restartPolicy };
    this.startDeadlineMs = options.startDeadlineMs ?? 15_000;
    this.stopDeadlineMs = options.stopDeadlineMs ?? 10_000;
    this.stableAfterMs = options.stableAfterMs ?? 60_000;
    this.gatewayConfig = options.gatewayConfig;
    this.drainSends = options.drainSends ?? (() => Promise.resolve());
    this.onLaunch = options.onLaunch ?? (() => {});
    this.reloadTarget = {
      slots: this.slots,
      log: this.log,
      clock: this.clock,
      running: () => this.phase === "running",
      drainSends: this.drainSends,
      setState: (slot, state, detail) => this.setState(slot, state, detail),
      retire: (slot, attempt) => this.retire(slot, attempt),
      launch: (slot) => this.launch(slot),
    };

    const seen = new Set(this.slots.map((slot) => slot.definition.id));
    for (const id of Object.keys(options.entries)) {
      if (!seen.has(id)) this.log.warn("plugins.entries names a plugin that is not loaded", { plugin: id });
    }
  }

  /** Starts every enabled plugin; resolves once each has started or failed its first attempt. Never rejects. */
  start(): Promise<void> {
    if (this.phase === "stopping" || this.phase === "stopped") {
      return Promise.reject(new Error("PluginHost.start() called after stop()"));
    }
    if (!this.starting) {
      this.phase = "running";
      const launches = this.slots
        .filter((slot) => slot.state !== "disabled")
        .map((slot) => this.launch(slot));
      this.starting = Promise.all(launches).then(() => undefined);
    }
    return this.starting;
  }

  /** Stops every started plugin in reverse order, each within the stop deadline; cancels pending restarts. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  /** A running plugin broke: it is marked down, stopped, and restarted with backoff (unless fatal). */
  reportFailure(id: string, error: unknown): void {
    const slot = this.slots.find((candidate) => candidate.definition.id === id);
    if (!slot?.attempt) {
      this.log.warn("failure reported for a plugin that is not running", {
        plugin: id,
        error: describeError(error),
      });
      return;
    }
    this.failAttempt(slot, slot.attempt, error);
  }

  states(): PluginStatus[] {
    return this.slots.map((slot) => slotStatus(slot));
  }

  /** Transports of plugins that are up (ok or degraded), by plugin id (= channel). */
  transports(): Map<string, Transport> {
    const map = new Map<string, Transport>();
    for (const slot of this.slots) {
      const transport = slot.attempt?.instance?.transport;
      const { state } = slotStatus(slot);
      if (transport && (state === "ok" || state === "degraded")) map.set(slot.definition.id, transport);
    }
    return map;
  }

  /**
   * The transport of plugin `id` while its instance exists and is starting or up: input it hands in during
   * `start()` (an offline backlog that arrives while connecting) is authorized by it and accepted.
   */
  inputTransport(id: string): Transport | undefined {
    const slot = this.slots.find((candidate) => candidate.definition.id === id);
    const transport = slot?.attempt?.instance?.transport;
    if (!slot || !transport || slot.attempt?.retired.signal.aborted) return undefined;
    return slot.state === "starting" || slot.state === "ok" ? transport : undefined;
  }

  /** Tools of the plugins that are started. */
  tools(): ToolDefinition[] {
    return this.slots.flatMap((slot) => (slot.state === "ok" ? (slot.attempt?.instance?.tools ?? []) : []));
  }

  /** Called after every lifecycle change of a plugin; returns the unsubscribe function. */
  onStateChange(listener: (status: PluginStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * What the plugins would run with under a new config, and what each declares about a change, for `diffConfig`.
   * Changes nothing (see planPluginReload). @throws ClawdisError CONFIG_INVALID naming every bad setting.
   */
  planReload(next: {
    gatewayConfig: Readonly<object>;
    entries: Record<string, PluginEntry>;
  }): PluginReloadPlan {
    return planPluginReload(this.slots, next);
  }

  /** Applies a planned config change (see applyPluginReload): resolves when every restart started or failed. */
  async applyReload(plan: PluginReloadPlan, restarts: readonly TransportRestart[], live: readonly string[]) {
    this.gatewayConfig = plan.gatewayConfig;
    await applyPluginReload(this.reloadTarget, plan, restarts, live);
  }

  private launch(slot: Slot): Promise<void> {
    const { definition } = slot;
    this.onLaunch(definition);
    const attempt: Attempt = { abort: new AbortController(), retired: new AbortController() };
    slot.attempt = attempt;
    this.setState(slot, "starting", undefined);
    const started = withDeadline(
      async (signal) => {
        const context: PluginContext = {
          ...this.contextFor(definition, slot.config, attempt.retired.signal),
          fail: (error: unknown, options?: { retryAfterMs?: number }) => {
            const hint = options?.retryAfterMs;
            if (typeof hint === "number" && Number.isFinite(hint) && hint > 0) slot.retryAfterMs = hint;
            this.failAttempt(slot, attempt, error);
          },
        };
        // Always the current settings and config (a change applied live is seen at the next read).
        Object.defineProperty(context, "config", { get: () => slot.config, enumerable: true });
        if (this.gatewayConfig !== undefined) {
          Object.defineProperty(context, "gatewayConfig", {
            get: () => this.gatewayConfig,
            enumerable: true,
          });
        }
        const instance = validatePluginInstance(await definition.create(context), definition.id);
        attempt.instance = instance;
        // Created after the attempt was given up (deadline, stop): nobody else will stop it.
        if (attempt.retired.signal.aborted) void this.stopInstance(slot, attempt);
        signal.throwIfAborted();
        await instance.start?.(signal);
      },
      {
        ms: this.startDeadlineMs,
        clock: this.clock,
        signal: attempt.abort.signal,
        timeoutError: () =>
          new ClawdisError(
            "PLUGIN_START_TIMEOUT",
            `Plugin "${definition.id}" did not finish starting within ${formatDuration(this.startDeadlineMs)}; its start was aborted. start() must resolve once the plugin is ready and honour its AbortSignal.`,
          ),
      },
    );
    slot.busy = started.then(
      () => this.onStarted(slot, attempt),
      (error: unknown) => this.onFailed(slot, attempt, error, "start"),
    );
    return slot.busy;
  }

  private onStarted(slot: Slot, attempt: Attempt): void {
    if (slot.attempt !== attempt) return;
    attempt.startedAt = this.clock.now();
    this.setState(slot, "ok", undefined);
    this.log.info("plugin started", {
      plugin: slot.definition.id,
      version: slot.definition.version,
      restarts: slot.restarts,
    });
  }

  /** `fail()` from the plugin or reportFailure(): only the current, unretired attempt counts. */
  private failAttempt(slot: Slot, attempt: Attempt, error: unknown): void {
    if (slot.attempt !== attempt || attempt.retired.signal.aborted) {
      this.log.debug("ignored a failure report from a replaced instance", { plugin: slot.definition.id });
      return;
    }
    const reason = error ?? new Error("the plugin reported a failure without an error");
    if (slot.state === "starting") attempt.abort.abort(reason);
    else if (slot.state === "ok") slot.busy = this.onFailed(slot, attempt, reason, "run");
  }

  private async onFailed(
    slot: Slot,
    attempt: Attempt,
    error: unknown,
    during: "start" | "run",
  ): Promise<void> {
    const id = slot.definition.id;
    if (this.phase !== "running") {
      // Aborted by stop(): not a failure; shutdown() marks the plugin stopped.
      await this.retire(slot, attempt);
      return;
    }
    if (attempt.startedAt !== undefined && this.clock.now() - attempt.startedAt >= this.stableAfterMs) {
      slot.failures = 0;
    }
    slot.failures += 1;
    slot.lastError = describeError(error);
    const delay = restartWait(error, slot.failures, slot.retryAfterMs, this.policy);
    slot.retryAfterMs = undefined;
    this.setState(slot, "down", "failed; stopping it");
    this.log.error(during === "start" ? "plugin failed to start" : "plugin failed", {
      plugin: id,
      error: slot.lastError,
      restart: delay === null ? "never (fatal error)" : `in ${formatDuration(delay)}`,
      failures: slot.failures,
    });
    // Stop the broken instance before a fresh one is created, so the two never run at once.
    await this.retire(slot, attempt);
    if (this.phase !== "running" || slot.attempt !== attempt) return;
    if (delay === null) {
      this.setState(slot, "down", NOT_RESTARTED);
      return;
    }
    const handle = this.clock.setTimeout(() => {
      slot.restartTimer = undefined;
      if (this.phase !== "running") return;
      slot.restarts += 1;
      void this.launch(slot);
    }, delay);
    slot.restartTimer = { handle };
    // Announced after the timer exists: a listener may advance the clock at once.
    this.setState(slot, "down", `restarting in ${formatDuration(delay)}`);
  }

  /** Gives the attempt up: aborts `retired`, then stops its instance if it has one. Idempotent. */
  private retire(slot: Slot, attempt: Attempt): Promise<void> {
    if (!attempt.retired.signal.aborted) attempt.retired.abort();
    return attempt.instance ? this.stopInstance(slot, attempt) : Promise.resolve();
  }

  /** Calls `stop()` once per instance, within the stop deadline; never rejects (errors are logged). */
  private stopInstance(slot: Slot, attempt: Attempt): Promise<void> {
    if (attempt.stopping) return attempt.stopping;
    const id = slot.definition.id;
    const instance = attempt.instance;
    const stop = instance?.stop;
    if (!instance || !stop) {
      attempt.stopping = Promise.resolve();
      return attempt.stopping;
    }
    const stopping = withDeadline(() => stop.call(instance), {
      ms: this.stopDeadlineMs,
      clock: this.clock,
      timeoutError: () =>
        new ClawdisError(
          "PLUGIN_FAILED",
          `Plugin "${id}" did not finish stopping within ${formatDuration(this.stopDeadlineMs)}`,
        ),
    }).then(
      () => this.log.debug("plugin stopped", { plugin: id }),
      (error: unknown) =>
        this.log.warn("plugin did not stop cleanly; skipped", { plugin: id, error: describeError(error) }),
    );
    attempt.stopping = stopping;
    this.pendingStops.add(stopping);
    void stopping.then(() => this.pendingStops.delete(stopping));
    return stopping;
  }

  private async shutdown(): Promise<void> {
    this.phase = "stopping";
    const reason = new DOMException("The gateway is stopping", "AbortError");
    for (const slot of this.slots) {
      if (slot.restartTimer) this.clock.clearTimeout(slot.restartTimer.handle);
      slot.restartTimer = undefined;
      slot.attempt?.abort.abort(reason);
    }
    await Promise.all(this.slots.map((slot) => slot.busy));
    for (const slot of [...this.slots].reverse()) {
      if (slot.attempt) await this.retire(slot, slot.attempt);
      if (slot.state !== "disabled") this.setState(slot, "stopped", undefined);
    }
    await Promise.all([...this.pendingStops]);
    this.phase = "stopped";
  }

  private setState(slot: Slot, state: HostState, detail: string | undefined): void {
    slot.state = state;
    slot.detail = detail;
    if (this.listeners.size === 0) return;
    const status = slotStatus(slot);
    for (const listener of this.listeners) {
      try {
        listener(status);
      } catch (error) {
        this.log.warn("a plugin state listener threw", { error: describeError(error) });
      }
    }
  }
}
