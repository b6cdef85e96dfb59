import { rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { builtinTools } from "../agent/tools/index.js";
import { loadConfig } from "../core/config.js";
import { ClawdisError, describeError } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import { gatewayTokenPath } from "../core/paths.js";
import { Gateway } from "../gateway.js";
import { loadPluginModule } from "../host/plugin-loader.js";
import { registerApi } from "../http/api.js";
import type { PluginDefinition } from "../plugin-api/types.js";
import { readOrCreateToken } from "../runtime/gateway-token.js";
import { migrateLegacyStore } from "../sessions/legacy-store.js";
import { gatewayAddressPath } from "./gateway-client.js";
import { type CliIO, EXIT } from "./io.js";

/** How long `clawdis gateway` may take to stop after SIGINT/SIGTERM. */
const STOP_DEADLINE_MS = 30_000;

export interface GatewayDeps {
  builtinPlugins(): Promise<PluginDefinition[]>;
  version: string;
}

/** Builds (not starts) a gateway from the config in `io.env`: plugins loaded, store migrated, token ready. */
export async function createGateway(
  io: CliIO,
  deps: GatewayDeps,
  options: { listen: boolean },
): Promise<Gateway> {
  const loaded = loadConfig(io.env);
  const { config } = loaded;
  const logger = createLogger({ level: config.logging.level });
  await migrateLegacyStore(io.env, logger, loaded.storePath);
  if (config.inbound.allowFrom.includes("*")) {
    logger.warn(
      'inbound.allowFrom contains "*": anyone who can message this WhatsApp account can talk to the agent',
    );
  }
  const token = await readOrCreateToken(gatewayTokenPath(io.env));
  const plugins = options.listen ? [...(await deps.builtinPlugins())] : [];
  if (options.listen) {
    for (const spec of config.plugins.load)
      plugins.push(await loadPluginModule(spec, dirname(loaded.path), io.env));
  }
  return new Gateway({
    config,
    env: io.env,
    storePath: loaded.storePath,
    workspaceDir: loaded.workspaceDir,
    configDir: dirname(loaded.path),
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

/** `clawdis gateway`: runs until SIGINT/SIGTERM, then stops within 30 s. */
export async function runGateway(io: CliIO, deps: GatewayDeps): Promise<number> {
  const gateway = await createGateway(io, deps, { listen: true });
  const logger = gateway.options.logger;
  let address: { port: number; host: string } | undefined;
  try {
    address = await gateway.start();
  } catch (error) {
    await gateway.stop().catch(() => {});
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      const { bind, port } = gateway.config.gateway;
      throw new ClawdisError(
        "IO",
        `${bind}:${port} is already in use: is another gateway running? (or set gateway.port)`,
      );
    }
    throw error;
  }
  const url = address
    ? `http://${address.host.includes(":") ? `[${address.host}]` : address.host}:${address.port}`
    : "";
  const addressFile = gatewayAddressPath(io.env);
  await writeFile(
    addressFile,
    `${JSON.stringify({ pid: process.pid, url, startedAt: gateway.startedAt })}\n`,
  );
  logger.info(`listening on ${url}`, { store: gateway.store.path });
  // `on`, not `once`: a library's exit hook (signal-exit, via proper-lockfile) re-raises a signal when it sees
  // no other listener, which would kill the process before it stops. Removed once the gateway has stopped.
  let onSignal: (signal: NodeJS.Signals) => void = () => {};
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    onSignal = (received) => resolve(received);
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
  logger.info("stopping", { signal });
  const deadline = new Promise<"late">((resolve) =>
    setTimeout(() => resolve("late"), STOP_DEADLINE_MS).unref(),
  );
  const result = await Promise.race([gateway.stop().then(() => "done" as const), deadline]).catch((error) => {
    logger.error("stop failed", { error: describeError(error) });
    return "failed" as const;
  });
  await rm(addressFile, { force: true });
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  if (result === "late") logger.error(`did not stop within ${STOP_DEADLINE_MS / 1000} s; exiting anyway`);
  else logger.info("stopped");
  return result === "done" ? EXIT.ok : EXIT.failed;
}
