import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ClawdisConfig } from "../core/config-schema.js";
import type { Logger } from "../core/logger.js";
import type {
  GatewayEvent,
  HttpHandler,
  HttpMethod,
  HttpRouteOptions,
  InboundMessage,
  PluginDefinition,
  ReceiveResult,
} from "../plugin-api/types.js";
import type { BasePluginContext } from "./plugin-host.js";

/** What a plugin's context is built from: the gateway's parts, passed in (the gateway composes them). */
export interface PluginContextDeps {
  /** The gateway's state directory. */
  stateDir: string;
  /** The config the gateway runs on now (read once per context, when the instance is created). */
  gatewayConfig(): ClawdisConfig;
  /** The session every direct chat lands in, now. */
  primarySessionKey(): string;
  /** The gateway's logger: each plugin logs under a child named after its id. */
  logger: Logger;
  gatewayToken: string;
  /** Registers a route on the gateway's HTTP server; returns its removal. */
  route(method: HttpMethod, path: string, handler: HttpHandler, options?: HttpRouteOptions): () => void;
  /** Subscribes to gateway events; returns the unsubscribe function. */
  onEvent(listener: (event: GatewayEvent) => void): () => void;
  /** Hands a message to the inbound pipeline, as a transport's (not local) input. */
  receive(message: InboundMessage): Promise<ReceiveResult>;
}

/**
 * The context of one plugin instance (`PluginHostOptions.contextFor`). Promises:
 * - its own directory `<state>/plugins/<id>/` and the staging folder `inbox/` in it exist (0700) on return;
 * - it may hand in only messages of its own channel: any other is denied without reaching the pipeline;
 * - the routes it registers and the event listeners it adds are removed when `retired` aborts (the instance
 *   stopped or was replaced), so a restarted instance can register them afresh.
 */
export function pluginContext(
  deps: PluginContextDeps,
  definition: PluginDefinition,
  config: unknown,
  retired: AbortSignal,
): BasePluginContext {
  const cleanups: (() => void)[] = [];
  retired.addEventListener("abort", () => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });
  const pluginStateDir = join(deps.stateDir, "plugins", definition.id);
  const stagingDir = join(pluginStateDir, "inbox");
  mkdirSync(stagingDir, { recursive: true, mode: 0o700 });
  return {
    id: definition.id,
    config,
    gatewayConfig: deps.gatewayConfig(),
    stateDir: deps.stateDir,
    pluginStateDir,
    stagingDir,
    primarySessionKey: deps.primarySessionKey(),
    logger: deps.logger.child(definition.id),
    gatewayToken: deps.gatewayToken,
    http: {
      route: (method, path, handler, routeOptions) => {
        cleanups.push(deps.route(method, path, handler, routeOptions));
      },
    },
    onEvent: (listener) => {
      const off = deps.onEvent(listener);
      cleanups.push(off);
      return off;
    },
    receive: (message) => {
      if (message.channel !== definition.id) {
        return Promise.resolve({
          status: "denied",
          reason: `plugin "${definition.id}" may only hand in messages of its own channel`,
        });
      }
      return deps.receive(message);
    },
  };
}
