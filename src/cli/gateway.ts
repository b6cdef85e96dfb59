import { rmSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { builtinTools } from "../agent/tools/index.js";
import { allowFromWarning } from "../core/allow-from-warning.js";
import { bindExposure } from "../core/bind-exposure.js";
import { bindListenError } from "../core/bind-listen-error.js";
import { systemClock } from "../core/clock.js";
import type { LoadedConfig } from "../core/config.js";
import { cachedGatewayConfigAt } from "../core/config-cache.js";
import type { ConfigSectionsSource } from "../core/config-sections.js";
import { ClawdisError, describeError } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import { noModelHint } from "../core/no-model-hint.js";
import { gatewayTokenPath, stateDir } from "../core/paths.js";
import { loadSectionSchema } from "../core/section-schema.js";
import { Gateway } from "../gateway.js";
import {
  loadGatewayConfig,
  loadGatewayConfigAtStart,
  loadPluginModule,
  loadPluginSections,
} from "../host/plugin-loader.js";
import { registerApi } from "../http/api.js";
import type { PluginDefinition } from "../plugin-api/types.js";
import { unsetApprovalsWarning } from "../runtime/approvals/approval-policy.js";
import { ConfigReloader } from "../runtime/config-reloader.js";
import { GatewaySupervisor } from "../runtime/gateway-supervisor.js";
import { readOrCreateToken } from "../runtime/gateway-token.js";
import { ownForGateway } from "../runtime/own-state-dir.js";
import type { StateLock } from "../runtime/state-lock.js";
import { migrateLegacyStore } from "../sessions/legacy-store.js";
import { gatewayAddressPath } from "./gateway-client.js";
import { tuneGatewayV8 } from "./gateway-v8.js";
import { type CliIO, EXIT } from "./io.js";

/** How long `clawdis gateway` may take to stop after SIGINT/SIGTERM. */
const STOP_DEADLINE_MS = 30_000;

/** What the command line sets for one run of `clawdis gateway`, over the config file. */
export interface GatewayRunOptions {
  /** `--port <n>`, as typed; checked by `parsePortOption`. */
  port?: string;
}

/**
 * `--port <n>`: a whole number from 0 to 65535 (0: any free port, as for `gateway.port`). Pure.
 * @throws ClawdisError USAGE (exit 2) naming the flag and what was given.
 */
export function parsePortOption(value: string): number {
  const port = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isInteger(port) || port > 65535) {
    throw new ClawdisError(
      "USAGE",
      `--port: expected a port number from 0 to 65535 (0: any free port), got ${JSON.stringify(value)}`,
    );
  }
  return port;
}

/** `loaded` with `gateway.port` set to `port` (the config file is not touched). Pure. */
export function withPort(loaded: LoadedConfig, port: number | undefined): LoadedConfig {
  if (port === undefined) return loaded;
  const { config } = loaded;
  return { ...loaded, config: { ...config, gateway: { ...config.gateway, port } } };
}

export interface GatewayDeps {
  builtinPlugins(): Promise<PluginDefinition[]>;
  /** The config sections known without loading a plugin's runtime (the composition root's list). */
  configSections: ConfigSectionsSource;
  /** The config cache's schema fingerprint (program.ts `CliDeps`); undefined: the start validates the file. */
  configFingerprint?: string;
  version: string;
}

/** Builds (not starts) a gateway from the config in `io.env`: plugins loaded, store migrated, token ready. */
export async function createGateway(
  io: CliIO,
  deps: GatewayDeps,
  options: { listen: boolean; loaded?: LoadedConfig },
): Promise<Gateway> {
  const loaded = options.loaded ?? (await loadGatewayConfig(io.env, await deps.configSections(io.env)));
  const { config } = loaded;
  const logger = createLogger({ level: config.logging.level });
  logger.info(
    loaded.exists
      ? `config ${loaded.path}`
      : `no config file at ${loaded.path}: running on defaults (\`clawdis init\` writes a starter one)`,
  );
  for (const warning of loaded.warnings) logger.warn(warning);
  await migrateLegacyStore(io.env, logger, loaded.storePath);
  const exposure = options.listen ? bindExposure(config.gateway.bind) : {};
  if (exposure.warning) logger.warn(exposure.warning);
  const anyone = allowFromWarning(config);
  if (anyone) logger.warn(anyone);
  const unasked = options.listen ? unsetApprovalsWarning(config.inbound.reply.agent.approvals) : undefined;
  if (unasked) logger.warn(unasked);
  const token = await readOrCreateToken(gatewayTokenPath(io.env));
  const plugins = options.listen ? [...(await deps.builtinPlugins())] : [];
  if (options.listen) {
    for (const spec of config.plugins.load)
      plugins.push(await loadPluginModule(spec, dirname(loaded.path), io.env));
  }
  // A plugin whose section the config lacks takes its defaults from the section's schema: loaded now when it is a
  // loader (a config composed with the section, from a file or the cache, has it, and loads no schema here).
  for (const { configSection } of plugins) {
    if (configSection && !Object.hasOwn(config, configSection.key)) await loadSectionSchema(configSection);
  }
  return new Gateway({
    config,
    env: io.env,
    storePath: loaded.storePath,
    workspaceDir: loaded.workspaceDir,
    configDir: dirname(loaded.path),
    configPath: loaded.path,
    plugins,
    builtinTools: builtinTools(),
    logger,
    version: deps.version,
    token,
    listen: options.listen,
    oneShot: !options.listen,
    registerApi,
  });
}

/**
 * `clawdis gateway`: takes the state directory (refused when another gateway owns it; waits while a one-shot
 * `clawdis agent` finishes), then runs until SIGINT/SIGTERM and stops within 30 s. Signals are caught from the
 * very start, so one that arrives while starting still ends in a graceful stop; a stop that misses its deadline
 * exits the process anyway (it never lingers holding the port).
 */
export async function runGateway(io: CliIO, deps: GatewayDeps, run: GatewayRunOptions = {}): Promise<number> {
  const port = run.port === undefined ? undefined : parsePortOption(run.port);
  // `on`, not `once`: a library's exit hook (signal-exit, via proper-lockfile) re-raises a signal when it sees
  // no other listener, which would kill the process before it stops. Removed once the gateway has stopped.
  let received: NodeJS.Signals | undefined;
  let wake: (signal: NodeJS.Signals) => void = () => {};
  const onSignal = (signal: NodeJS.Signals) => {
    received ??= signal;
    wake(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    return await runGatewayUntilSignal(io, deps, port, {
      received: () => received,
      next: () =>
        new Promise<NodeJS.Signals>((resolve) => {
          if (received) resolve(received);
          else wake = resolve;
        }),
    });
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

async function runGatewayUntilSignal(
  io: CliIO,
  deps: GatewayDeps,
  port: number | undefined,
  signals: { received(): NodeJS.Signals | undefined; next(): Promise<NodeJS.Signals> },
): Promise<number> {
  const loaded = withPort(
    await loadGatewayConfigAtStart(io.env, deps.configSections, deps.configFingerprint),
    port,
  );
  const bootLogger = createLogger({ level: loaded.config.logging.level });
  const lock = await ownForGateway(stateDir(io.env), loaded.config.gateway.port, {
    now: Date.now,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    logger: bootLogger,
  });
  try {
    return await serve(io, deps, loaded, lock, signals, port);
  } finally {
    await lock.release();
  }
}

/**
 * Runs the gateway under a supervisor (in-process restarts on the same lock) until a signal, `clawdis gateway
 * stop` or the loss of the state directory; then drains and stops within STOP_DEADLINE_MS.
 */
async function serve(
  io: CliIO,
  deps: GatewayDeps,
  loaded: LoadedConfig,
  lock: StateLock,
  signals: { received(): NodeJS.Signals | undefined; next(): Promise<NodeJS.Signals> },
  port: number | undefined,
): Promise<number> {
  const logger = createLogger({ level: loaded.config.logging.level });
  const addressFile = gatewayAddressPath(io.env);
  let reloader: ConfigReloader | undefined;
  const supervisor = new GatewaySupervisor({
    create: (next) => createGateway(io, deps, { listen: true, loaded: next }),
    published: async (gateway, address, kind) => {
      const url = address
        ? `http://${address.host.includes(":") ? `[${address.host}]` : address.host}:${address.port}`
        : "";
      await lock.update({ url, ...(address ? { port: address.port } : {}) });
      await writeFile(
        addressFile,
        `${JSON.stringify({ pid: process.pid, url, startedAt: gateway.startedAt })}\n`,
        { mode: 0o600 },
      );
      gateway.options.logger.info(`listening on ${url}`, { store: gateway.store.path });
      // A gateway restarted on a config read elsewhere (POST /api/restart): the file is compared with it again.
      // Not after a fallback: the file holds the config that just failed to start, and comparing would restart on
      // it again, in a loop; the next save of the file is looked at as usual.
      if (kind !== "fallback") void reloader?.reload({ initial: true });
    },
    stateDir: stateDir(io.env),
    logger,
    now: Date.now,
    fatal: (why) => {
      logger.error(`${why}; exiting`);
      rmSync(addressFile, { force: true });
      // The lock stays behind: a lock whose owner is dead is taken over at once by the next start.
      process.exit(EXIT.failed);
    },
    reload: async () => withPort(await loadGatewayConfig(io.env, await deps.configSections(io.env)), port),
  });
  let lost: string | undefined;
  try {
    await supervisor.start(loaded);
  } catch (error) {
    const badBind = bindListenError(error, loaded.config.gateway.bind, loaded.path);
    if (badBind) throw badBind;
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      const { bind, port: inUse } = loaded.config.gateway;
      throw new ClawdisError(
        "IO",
        `${bind}:${inUse} is already in use by another program (no other gateway runs on this state directory); ${
          port === undefined ? "set gateway.port" : "choose another --port"
        }`,
      );
    }
    throw error;
  }
  // Once the port is open: what the flags change (the heap's growth under a burst, when code is optimized) comes
  // later, and setting them loads node:v8 (v8-flags.ts).
  tuneGatewayV8();
  const first = supervisor.current;
  // Config hot reload (docs/configuration.md, Changing the config while it runs): the file is watched from now on.
  reloader = new ConfigReloader({
    loaded,
    env: io.env,
    sections: () => deps.configSections(io.env),
    cached: () => cachedGatewayConfigAt(io.env, loaded.path, deps.configFingerprint),
    loadSections: (specs, baseDir) => loadPluginSections(specs, baseDir, io.env),
    target: () => supervisor.current,
    restartGateway: supervisor.restartGateway,
    logger: logger.child("config"),
    clock: systemClock,
    adjust: (next) => withPort(next, port),
  });
  await reloader.start();
  // No model: say so now, with the fix, not only at the first message (after the first check, which may find
  // the endpoint's only model).
  void first.modelProbe.ready().then(() => {
    if (first.modelProbe.snapshot().configured) return;
    for (const line of noModelHint(loaded.path)) logger.warn(line);
  });
  const lostLock = new Promise<NodeJS.Signals>((resolve) =>
    lock.watch((why) => {
      lost = why;
      logger.error(`stopping: this gateway no longer owns its state directory (${why})`);
      resolve("SIGTERM");
    }),
  );
  const cause =
    signals.received() ??
    (await Promise.race([signals.next(), lostLock, supervisor.stopRequested().then((r) => r.why)]));
  if (cause === "SIGTERM" || cause === "SIGINT") logger.info("stopping", { signal: cause });
  else logger.info("stopping", { requestedBy: cause });
  await reloader.stop();
  const deadline = new Promise<"late">((resolve) =>
    setTimeout(() => resolve("late"), STOP_DEADLINE_MS).unref(),
  );
  const result = await Promise.race([supervisor.stop().then(() => "done" as const), deadline]).catch(
    (error) => {
      logger.error("stop failed", { error: describeError(error) });
      return "failed" as const;
    },
  );
  await rm(addressFile, { force: true });
  if (result === "late") {
    logger.error(`did not stop within ${STOP_DEADLINE_MS / 1000} s; exiting anyway`);
    await lock.release();
    // Whatever still hangs (a stuck turn, a plugin) must not keep the process alive holding the port.
    process.exit(EXIT.failed);
  }
  logger.info("stopped");
  return result === "done" && !lost ? EXIT.ok : EXIT.failed;
}
