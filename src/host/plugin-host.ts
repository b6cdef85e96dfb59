import type { Clock } from "../core/clock.js";
import type { PluginReloadInfo, TransportRestart } from "../core/config-diff.js";
import type { ClawdisConfig } from "../core/config-schema.js";
import { ClawdisError, describeError } from "../core/errors.js";
import { formatDuration } from "../core/format.js";
import type { Logger } from "../core/logger.js";
import type {
  PluginContext,
  PluginCoreConfig,
  PluginDefinition,
  PluginInstance,
  ToolDefinition,
  Transport,
  TransportHealth,
} from "../plugin-api/index.js";
import { validatePluginDefinition, validatePluginInstance } from "./plugin-definition.js";
import { type PluginSettings, reloadPolicyProblem, settingsFor } from "./plugin-settings.js";
import { DEFAULT_RESTART_POLICY, type RestartPolicy, restartDelay } from "./restart-delay.js";
import { withDeadline } from "./with-deadline.js";

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

/** The context the gateway builds; the host adds `fail`, bound to the one instance it is given to. */
export type BasePluginContext = Omit<PluginContext, "fail">;

/**
 * Checked by tsc: the core's validated config is a `PluginCoreConfig`, so the gateway hands it to plugins as
 * their `gatewayConfig` as it is; they see only the view's keys.
 */
type ServesPluginView<T extends PluginCoreConfig> = T;
export type CoreConfigServesPlugins = ServesPluginView<ClawdisConfig>;

export interface PluginEntry {
  enabled: boolean;
  config?: unknown;
}

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
}

/** What the plugins would run with under a new config: `PluginHost.planReload`, then `applyReload`. */
export interface PluginReloadPlan {
  /** What each plugin declares, for `diffConfig`. */
  infos: PluginReloadInfo[];
  /** Settings and on/off of each plugin under the new config, by id. */
  settings: ReadonlyMap<string, PluginSettings>;
  gatewayConfig: Readonly<object>;
}

/** What the host itself knows; "degraded" only ever comes from a transport's health(). */
type HostState = "starting" | "ok" | "down" | "stopped" | "disabled";

/** One create+start of a plugin. A failed attempt is never reused: a restart is a fresh attempt. */
interface Attempt {
  /** Aborts the start: `fail()` during start, or the host stopping. */
  abort: AbortController;
  /** Aborts when this instance is given up (failed, replaced, stopped). */
  retired: AbortController;
  instance?: PluginInstance;
  startedAt?: number;
  stopping?: Promise<void>;
}

interface Slot {
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

/**
 * The detail of a plugin left down by a fatal error. What really brings it back: a config change of its settings
 * restarts it (PluginHost.applyReload), an environment variable is read only when the gateway starts.
 */
export const NOT_RESTARTED =
  "not restarted: fix what the error says; a fix saved to the config file restarts it, one in the environment needs a gateway restart";

/** Up to this fraction of a retry-after hint is added at random before the restart. */
const RETRY_AFTER_JITTER = 0.1;

const HEALTH_STATES: ReadonlySet<string> = new Set(["starting", "ok", "degraded", "down", "stopped"]);

/**
 * Owns the plugins' lifecycle: validates definitions and settings, starts every enabled plugin (concurrently,
 * each within the start deadline), restarts failed ones with backoff on the injected clock, and stops them in
 * reverse order. A failing plugin never takes the host down.
 */
export class PluginHost {
  private readonly slots: Slot[] = [];
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

  /** Throws PLUGIN_INVALID (bad definition, duplicate id) or CONFIG_INVALID (settings; exit code 2). */
  constructor(options: PluginHostOptions) {
    this.log = options.logger;
    this.clock = options.clock;
    this.contextFor = options.contextFor;
    this.policy = { ...DEFAULT_RESTART_POLICY, ...options.restartPolicy };
    this.startDeadlineMs = options.startDeadlineMs ?? 15_000;
    this.stopDeadlineMs = options.stopDeadlineMs ?? 10_000;
    this.stableAfterMs = options.stableAfterMs ?? 60_000;
    this.gatewayConfig = options.gatewayConfig;
    this.drainSends = options.drainSends ?? (() => Promise.resolve());

    const seen = new Set<string>();
    const configErrors: string[] = [];
    options.definitions.forEach((candidate, index) => {
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
      const settings = settingsFor(definition, options.entries[definition.id], options.gatewayConfig);
      if (settings.error !== undefined) configErrors.push(settings.error);
      this.slots.push({
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
    return this.slots.map((slot) => this.statusOf(slot));
  }

  /** Transports of plugins that are up (ok or degraded), by plugin id (= channel). */
  transports(): Map<string, Transport> {
    const map = new Map<string, Transport>();
    for (const slot of this.slots) {
      const transport = slot.attempt?.instance?.transport;
      const { state } = this.statusOf(slot);
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
   * What the plugins would run with under a new config (validated as at start: `plugins.entries.<id>.config` by
   * each plugin's schema), and what each declares about a change, for `diffConfig`. Changes nothing.
   * @throws ClawdisError CONFIG_INVALID naming every bad setting, as the constructor does.
   */
  planReload(next: {
    gatewayConfig: Readonly<object>;
    entries: Record<string, PluginEntry>;
  }): PluginReloadPlan {
    const settings = new Map<string, PluginSettings>();
    const errors: string[] = [];
    const infos = this.slots.map((slot): PluginReloadInfo => {
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
  async applyReload(plan: PluginReloadPlan, restarts: readonly TransportRestart[], live: readonly string[]) {
    this.gatewayConfig = plan.gatewayConfig;
    const restarting = new Set(restarts.map((restart) => restart.id));
    for (const slot of this.slots) {
      const next = plan.settings.get(slot.definition.id);
      if (next && !restarting.has(slot.definition.id)) slot.config = next.config;
    }
    if (live.length > 0) {
      for (const slot of this.slots) {
        const instance = slot.attempt?.instance;
        if (!instance?.configChanged || slot.attempt?.retired.signal.aborted) continue;
        try {
          instance.configChanged(live);
        } catch (error) {
          this.log.warn("a plugin's configChanged threw", {
            plugin: slot.definition.id,
            error: describeError(error),
          });
        }
      }
    }
    await Promise.all(
      this.slots
        .filter((slot) => restarting.has(slot.definition.id))
        .map((slot) => {
          const next = plan.settings.get(slot.definition.id);
          if (!next) return Promise.resolve();
          const done: Promise<void> = this.reconfigure(slot, next, () => done);
          slot.busy = done;
          return done;
        }),
    );
  }

  /**
   * One plugin stopped (after its sends in flight) and started afresh with `next`; never rejects. `self` is this
   * call's own promise, which the caller makes `slot.busy`.
   */
  private async reconfigure(slot: Slot, next: PluginSettings, self: () => Promise<void>): Promise<void> {
    // A start or a failure being handled ends first (a failure handled meanwhile takes `busy` over: wait again).
    for (let busy = slot.busy; ; ) {
      await busy;
      if (slot.busy === self()) break;
      busy = slot.busy;
      slot.busy = self();
    }
    if (this.phase !== "running") return;
    if (slot.restartTimer) this.clock.clearTimeout(slot.restartTimer.handle);
    slot.restartTimer = undefined;
    const previous = slot.attempt;
    slot.config = next.config;
    if (previous && !previous.retired.signal.aborted) {
      if (slot.state === "ok") {
        this.setState(slot, "starting", "restarting for a config change");
        await this.drainSends(slot.definition.id);
      }
      await this.retire(slot, previous);
    }
    if (this.phase !== "running") return;
    if (!next.on) {
      slot.attempt = undefined;
      this.setState(slot, "disabled", next.detail);
      this.log.info("plugin stopped for a config change", { plugin: slot.definition.id });
      return;
    }
    slot.failures = 0;
    slot.retryAfterMs = undefined;
    slot.lastError = undefined;
    if (previous) slot.restarts += 1;
    await this.launch(slot);
  }

  private launch(slot: Slot): Promise<void> {
    const { definition } = slot;
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
    const backoff = restartDelay(error, slot.failures, this.policy);
    const hint = slot.retryAfterMs;
    slot.retryAfterMs = undefined;
    // A server's Retry-After is the least wait; a little jitter on top, so a restart does not land on its edge.
    const delay =
      backoff === null || hint === undefined
        ? backoff
        : Math.max(backoff, hint) + Math.round(RETRY_AFTER_JITTER * hint * this.policy.random());
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

  private health(slot: Slot): TransportHealth | undefined {
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

  private statusOf(slot: Slot): PluginStatus {
    const health = this.health(slot);
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

  private setState(slot: Slot, state: HostState, detail: string | undefined): void {
    slot.state = state;
    slot.detail = detail;
    if (this.listeners.size === 0) return;
    const status = this.statusOf(slot);
    for (const listener of this.listeners) {
      try {
        listener(status);
      } catch (error) {
        this.log.warn("a plugin state listener threw", { error: describeError(error) });
      }
    }
  }
}
