import { rm } from "node:fs/promises";
import type { LoadedConfig } from "../core/config.js";
import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { Gateway, StopRequest } from "../gateway.js";
import { restartManifestPath, writeRestartManifest } from "./restart-manifest.js";

/** How long one gateway may take to stop (drain included) before the process gives up on it. */
export const GATEWAY_STOP_DEADLINE_MS = 30_000;

export type RestartResult = { ok: true } | { ok: false; error: string };

export interface GatewaySupervisorDeps {
  /** Builds (not starts) a gateway on `loaded`. */
  create(loaded: LoadedConfig): Promise<Gateway>;
  /**
   * Called after each (re)start: where it listens now (the lock, `gateway.json`, the `listening on` line). `kind`:
   * the first start, a restart on a new config, or the previous config started again after a new one failed.
   */
  published(
    gateway: Gateway,
    address: { port: number; host: string } | undefined,
    kind: "start" | "restarted" | "fallback",
  ): Promise<void>;
  stateDir: string;
  logger: Logger;
  now(): number;
  /** A stop that missed GATEWAY_STOP_DEADLINE_MS during a restart: nothing can start on the state dir any more. */
  fatal(why: string): never;
  /** Reads and validates the config file again, as at start (`POST /api/restart`); throws a config error. */
  reload?(): Promise<LoadedConfig>;
}

/**
 * Runs the gateway of `clawdis gateway` across in-process restarts (docs/runtime.md, Stopping and restarting):
 * one gateway at a time on the state directory the process keeps locked. `restart(reason, next)` saves the
 * manifest of the active sessions, drains and stops the current gateway ("restarting" for its people), and
 * starts a new one on `next` — which loads those sessions back before traffic resumes and finishes what the old
 * one left open. A new config that does not start (its port taken, a plugin that does not load) is logged and the
 * previous config is started again. Restarts run one after another; a stop waits for the one under way.
 */
export class GatewaySupervisor {
  private gateway: Gateway | undefined;
  private loaded: LoadedConfig | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private stopping = false;
  private readonly stopWanted: Promise<StopRequest>;
  private wantStop: (request: StopRequest) => void = () => {};
  private offStop: () => void = () => {};

  constructor(private readonly deps: GatewaySupervisorDeps) {
    this.stopWanted = new Promise((resolve) => {
      this.wantStop = resolve;
    });
  }

  /** The gateway that runs now. */
  get current(): Gateway {
    if (!this.gateway) throw new Error("the gateway supervisor has not started a gateway");
    return this.gateway;
  }

  /** The config the current gateway runs on. */
  get config(): LoadedConfig {
    if (!this.loaded) throw new Error("the gateway supervisor has not started a gateway");
    return this.loaded;
  }

  /** Resolves when a gateway asks to be stopped (`POST /api/stop`, i.e. `clawdis gateway stop`). */
  stopRequested(): Promise<StopRequest> {
    return this.stopWanted;
  }

  /**
   * The first start. Throws what `Gateway.start` throws (a port in use: the caller says so); the gateway that did
   * not start is stopped first.
   */
  async start(loaded: LoadedConfig): Promise<{ port: number; host: string } | undefined> {
    return this.launch(loaded, "start");
  }

  /**
   * `restart`, bound: the callback the config reloader gets for a change that needs the whole gateway
   * (`gateway.port`, `gateway.bind`, `plugins.load`), e.g. `restartGateway("config change", next)`.
   */
  readonly restartGateway = (reason: string, next: LoadedConfig): Promise<RestartResult> =>
    this.restart(reason, next);

  /** An in-process restart on `next` (see the class comment). Resolves once the new gateway runs (or the old again). */
  restart(reason: string, next: LoadedConfig): Promise<RestartResult> {
    const run = this.chain.then(() => this.restartNow(reason, next));
    this.chain = run.catch(() => {});
    return run;
  }

  /** Stops for good: after the restart under way, the current gateway drains ("stopping") and stops. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.chain;
    await this.gateway?.stop({ mode: "stopping" });
  }

  private async restartNow(reason: string, next: LoadedConfig): Promise<RestartResult> {
    const { logger } = this.deps;
    if (this.stopping) return { ok: false, error: "the gateway is stopping" };
    const old = this.current;
    const previous = this.config;
    const at = this.deps.now();
    const sessions = old.activeSessions();
    const manifest = { version: 1 as const, reason, at, pid: process.pid, sessions };
    await writeRestartManifest(this.deps.stateDir, manifest).catch((error: unknown) =>
      logger.warn("could not save the restart manifest; sessions load when used", {
        error: describeError(error),
      }),
    );
    // Logged in the same tick as the drain begins (stopWithin calls stop() synchronously): whoever acts on this
    // line finds the gateway draining already.
    logger.info("restarting in-process", { reason, activeSessions: sessions.length });
    this.offStop();
    await this.stopWithin(old);
    if (this.stopping) {
      // A stop came during the drain: no gateway follows here, so no start should take the manifest as its own.
      await rm(restartManifestPath(this.deps.stateDir), { force: true });
      return { ok: false, error: "the gateway is stopping" };
    }
    try {
      await this.launch(next, "restarted");
      logger.info("restarted", { reason });
      return { ok: true };
    } catch (error) {
      const why = describeError(error);
      logger.error(`could not start on the new config (${why}); starting again on the previous one`);
      await writeRestartManifest(this.deps.stateDir, manifest).catch(() => {});
      try {
        await this.launch(previous, "fallback");
      } catch (again) {
        this.deps.fatal(`could not start again on the previous config either: ${describeError(again)}`);
      }
      return { ok: false, error: why };
    }
  }

  private async launch(
    loaded: LoadedConfig,
    kind: "start" | "restarted" | "fallback",
  ): Promise<{ port: number; host: string } | undefined> {
    const gateway = await this.deps.create(loaded);
    let address: { port: number; host: string } | undefined;
    try {
      address = await gateway.start();
    } catch (error) {
      await gateway.stop().catch(() => {});
      throw error;
    }
    this.gateway = gateway;
    this.loaded = loaded;
    this.offStop = gateway.onStopRequest((request) => this.wantStop(request));
    const reload = this.deps.reload;
    if (reload) {
      gateway.handleRestartRequests(async (why) => {
        let next: LoadedConfig;
        try {
          next = await reload();
        } catch (error) {
          return { accepted: false, status: 400, error: `the config does not load: ${describeError(error)}` };
        }
        // Not waited for: the restart closes the server this request came through.
        void this.restart(why, next);
        return { accepted: true };
      });
    }
    await this.deps.published(gateway, address, kind);
    return address;
  }

  private async stopWithin(gateway: Gateway): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), GATEWAY_STOP_DEADLINE_MS);
      timer.unref();
    });
    const result = await Promise.race([
      gateway.stop({ mode: "restarting" }).then(() => "done" as const),
      late,
    ]).catch((error: unknown) => {
      this.deps.logger.error("stop failed during a restart", { error: describeError(error) });
      return "done" as const;
    });
    clearTimeout(timer);
    if (result === "late") {
      this.deps.fatal(
        `the gateway did not stop within ${GATEWAY_STOP_DEADLINE_MS / 1000} s during a restart`,
      );
    }
  }
}
